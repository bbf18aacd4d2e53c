// write_file_atomically: the file appears whole, no temporary stays behind, a user's own
// "<path>.tmp" is left alone, and a folder that does not exist is an InputError naming the path.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace cs {
namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("an atomic write leaves the file and nothing else") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("clustersim-atomic-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto target = dir / "out.csv";
  std::ofstream(dir / "out.csv.tmp") << "the user's own file";
  write_file_atomically(target.string(), "a,b\n1,2\n");
  write_file_atomically(target.string(), "a,b\n3,4\n");  // over an existing file
  CHECK(read(target) == "a,b\n3,4\n");
  CHECK(read(dir / "out.csv.tmp") == "the user's own file");
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++entries;
  CHECK(entries == 2);  // out.csv and the user's out.csv.tmp: no temporary left

  const std::string missing = (dir / "no" / "out.csv").string();
  CHECK_THROWS_WITH_AS(write_file_atomically(missing, "x"),
                       doctest::Contains((missing + ": cannot write the output file").c_str()),
                       InputError);
  CHECK_FALSE(std::filesystem::exists(dir / "no"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cs
