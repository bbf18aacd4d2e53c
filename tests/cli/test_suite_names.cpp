// The suite runs what it says: CTest registers each doctest case by name (doctest_discover_tests),
// and a ';' in a name is CMake's list separator, so the registered test asks doctest for the name
// cut at the ';', matches no case and passes having run nothing. Twelve cases were lost that way
// (one had gone stale). Every TEST_CASE name in tests/ must be free of ';'.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/cli_run.hpp"

namespace {

// The names of the TEST_CASEs in `text` (each at the start of a line, as the suite writes them):
// the adjacent string literals after the opening parenthesis, joined.
std::vector<std::string> case_names(const std::string& text) {
  std::vector<std::string> names;
  const std::string marker = "\nTEST_CASE(";
  for (std::size_t at = text.find(marker); at != std::string::npos;
       at = text.find(marker, at + marker.size())) {
    std::size_t i = at + marker.size();
    std::string name;
    while (true) {
      while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
      if (i >= text.size() || text[i] != '"') break;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
        if (i < text.size()) name += text[i];
      }
      ++i;  // the closing quote
    }
    names.push_back(name);
  }
  return names;
}

}  // namespace

TEST_CASE("case names are read from adjacent literals") {
  const std::vector<std::string> names = case_names(
      "\nTEST_CASE(\"a, b\") {}\nTEST_CASE(\n    \"first \"\n    \"second\") {}\n"
      "  // TEST_CASE(\"not one\")\nTEST_CASE(\"x; y\") {}");
  CHECK(names == std::vector<std::string>{"a, b", "first second", "x; y"});
}

TEST_CASE(
    "no test case name holds a semicolon, which would make CTest run nothing under its name") {
  namespace fs = std::filesystem;
  int cases = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests")) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string text = "\n" + cs::test::read_text_file(entry.path().string());
    for (const std::string& name : case_names(text)) {
      ++cases;
      INFO(entry.path().string() << ": " << name);
      CHECK(name.find(';') == std::string::npos);
    }
  }
  CHECK(cases > 300);
}
