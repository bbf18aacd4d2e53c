// Damaged sweep shard files (`clustersim sweep --merge`) kept under tests/data/fuzz/fuzz_shards/,
// one shard file per line as fuzz_shards reads them (tests/fuzz/README.md): each is refused with
// an InputError naming the file and key, where it once sized a table from an unchecked number
// (an allocation past memory, undefined behaviour casting 1e300 to an int) or escaped as another
// exception.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "plan/sweep_table.hpp"
#include "support/cli_run.hpp"

namespace {

// merge_shards' message for the shard files of `name`, one per line, named shard0.json, ...
std::string merge_error(const std::string& name) {
  const std::string text =
      cs::test::read_text_file(std::string(CLUSTERSIM_TEST_DATA) + "/fuzz/fuzz_shards/" + name);
  std::vector<std::pair<std::string, std::string>> files;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    files.emplace_back("shard" + std::to_string(files.size()) + ".json", line + "\n");
  }
  try {
    cs::plan::merge_shards(files);
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("fuzz_shards: counts and indices are checked before they size the merged table") {
  CHECK(merge_error("points_too_many.jsonl") ==
        "shard0.json: key 'points': 100000000000000 is not an integer from 0 to 10000000 (a "
        "damaged shard file)");
  CHECK(merge_error("shards_negative.jsonl") ==
        "shard0.json: key 'shards': -1 is not an integer from 1 to 2147483647 (a damaged shard "
        "file)");
  // 2^31 - 1 shards: the first one missing is named, with no table of that size made.
  CHECK(merge_error("shards_too_many.jsonl") == "--merge: shard 1/2147483647 is missing");
  CHECK(merge_error("shard_huge_number.jsonl") ==
        "shard0.json: key 'shard': 1e+300 is not an integer from 0 to 2147483647 (a damaged "
        "shard file)");
  CHECK(merge_error("point_huge_number.jsonl") ==
        "shard0.json: key 'point': -1e+300 is not an integer from 0 to 10000000 (a damaged shard "
        "file)");
}

TEST_CASE("fuzz_shards: a format that is not text, and fewer number flags than columns") {
  CHECK(merge_error("format_not_text.jsonl") ==
        "shard0.json: not a sweep shard file (clustersim sweep --shard writes them)");
  CHECK(merge_error("numeric_short.jsonl") ==
        "shard0.json: key 'numeric': 1 flags for 2 columns (a damaged shard file)");
}
