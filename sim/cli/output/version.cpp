#include "cli/output/version.hpp"

#include <nlohmann/json.hpp>

namespace cs::cli {

std::string version_text() {
  const std::string build = CLUSTERSIM_BUILD_TYPE;
  return std::string(CLUSTERSIM_VERSION) + " (git " + CLUSTERSIM_GIT_COMMIT + ", " +
         (build.empty() ? "unknown" : build) + ")";
}

std::string with_version(const std::string& json_object_text) {
  nlohmann::json j = nlohmann::json::parse(json_object_text);
  j["clustersim_version"] = version_text();
  // The indentation of the first key: the spaces after "{\n".
  const std::size_t first = json_object_text.find('\n');
  const std::size_t key = json_object_text.find_first_not_of(' ', first + 1);
  const int indent = first == std::string::npos || key == std::string::npos
                         ? -1
                         : static_cast<int>(key - first - 1);
  return j.dump(indent) + "\n";
}

}  // namespace cs::cli
