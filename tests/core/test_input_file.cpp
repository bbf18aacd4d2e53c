// read_input_file: a file's bytes whole; a missing path or a folder is an InputError that says so.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "core/input_file.hpp"

TEST_CASE("read_input_file names a missing file and a folder") {
  const std::string data = CLUSTERSIM_TEST_DATA;
  const std::string text = cs::read_input_file(data + "/flows/example.csv", "flows file");
  CHECK(text.starts_with("# A connection matrix"));
  CHECK_THROWS_WITH_AS(cs::read_input_file(data + "/no-such.csv", "flows file"),
                       doctest::Contains("no-such.csv: cannot open the flows file: no such file"),
                       cs::InputError);
  // An ifstream opens a folder and reads nothing: the error was then about the empty content.
  CHECK_THROWS_WITH_AS(cs::read_input_file(data + "/flows", "topology file"),
                       doctest::Contains("flows: cannot open the topology file: it is a folder"),
                       cs::InputError);
}
