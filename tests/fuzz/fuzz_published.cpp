// Fuzz target: the published YAML files of `clustersim compare`, nccl-tests sets
// (cli/input/published_sets.hpp) and training runs (cli/step/published_runs.hpp), each reader
// given every input. The readers take a path and resolve topologies and models against the file's
// folder, so the input is written to calibrate/published/sets.yaml in a scratch folder whose
// topologies/ and models/ are the shipped ones: the shipped files' "../../topologies/..." paths
// resolve as they do in the source tree.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "cli/input/published_sets.hpp"
#include "cli/step/published_runs.hpp"
#include "core/error.hpp"
#include "fuzz_input.hpp"

namespace {

std::filesystem::path sets_file() {
  namespace fs = std::filesystem;
  const fs::path root = cs::fuzz::scratch_dir();
  fs::create_directories(root / "calibrate/published");
  for (const char* folder : {"topologies", "models"}) {
    if (!fs::exists(root / folder))
      fs::create_directory_symlink(cs::fuzz::kSourceDir + "/" + folder, root / folder);
  }
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
  try {
    cs::cli::load_published_runs(path.string());
  } catch (const cs::InputError&) {
  }
  return 0;
}
