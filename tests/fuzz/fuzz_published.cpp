// Fuzz target: the published-sets YAML of `clustersim compare` (cli/input/published_sets.hpp). The
// reader takes a path and resolves each set's topology against the file's folder, so the input is
// written to calibrate/published/sets.yaml in a scratch folder whose topologies/ is the shipped
// one: the shipped file's "../../topologies/..." paths resolve as they do in the source tree.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "cli/input/published_sets.hpp"
#include "core/error.hpp"
#include "fuzz_input.hpp"

namespace {

std::filesystem::path sets_file() {
  namespace fs = std::filesystem;
  const fs::path root = cs::fuzz::scratch_dir();
  fs::create_directories(root / "calibrate/published");
  if (!fs::exists(root / "topologies"))
    fs::create_directory_symlink(cs::fuzz::kSourceDir + "/topologies", root / "topologies");
  return root / "calibrate/published/sets.yaml";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path = sets_file();
  cs::fuzz::write_file(path, cs::fuzz::as_text(data, size));
  try {
    cs::cli::load_published_sets(path.string());
  } catch (const cs::InputError&) {
  }
  return 0;
}
