// Fuzz target: the shard files that `clustersim sweep --merge` joins (plan/sweep_table.hpp). A
// shard file is one line of JSON, so each line of the input is one file; the merged table is then
// written as CSV and JSON, as the command does.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "fuzz_input.hpp"
#include "plan/sweep_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::pair<std::string, std::string>> files;
  std::istringstream lines(cs::fuzz::as_text(data, size));
  for (std::string line; std::getline(lines, line);) {
    files.emplace_back("shard" + std::to_string(files.size()) + ".json", line + "\n");
  }
  try {
    const cs::plan::SweepTable table = cs::plan::merge_shards(files);
    cs::plan::to_csv(table);
    cs::plan::to_json(table);
  } catch (const cs::InputError&) {
  }
  return 0;
}
