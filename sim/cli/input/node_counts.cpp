#include "cli/input/node_counts.hpp"

#include <cstdlib>
#include <sstream>

#include "core/error.hpp"

namespace cs::cli {

std::vector<int> parse_node_counts(const std::string& text) {
  if (text.empty()) return {0};
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || n < 1 || n > 1'000'000) {
      throw InputError(
          "--nodes: '" + item +
          "' is not a server count; valid: integers from 1 to 1000000, comma-separated");
    }
    out.push_back(static_cast<int>(n));
  }
  if (out.empty() || text.back() == ',') {
    throw InputError("--nodes: '" + text + "' has an empty item; valid: e.g. 4 or 1,2,4,8");
  }
  return out;
}

void add_nodes_option(CLI::App* cmd, std::string& text, bool list) {
  cmd->add_option("--nodes", text,
                  list ? "Server counts, e.g. 4 or 1,2,4,8: the file's one cluster entry gets each "
                         "in turn, its fabric generator resized (default: as the file says)"
                       : "Server count: the file's one cluster entry gets it, its fabric "
                         "generator resized (default: as the file says)");
}

}  // namespace cs::cli
