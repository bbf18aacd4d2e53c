// The READMEs' examples stay true: every `$ clustersim ...` line inside a fenced block is run from
// the source folder, and the lines under it must be what the binary prints on standard output,
// in order. A line `...` stands for any number of lines left out (also at the start or the end);
// without one, the example must begin at the output's first line and end at its last. A command
// with no lines under it must only succeed.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_run.hpp"

namespace {

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

// The READMEs a user reads; each example in them is checked.
const char* const kReadmes[] = {"README.md",
                                "sim/README.md",
                                "topologies/README.md",
                                "models/README.md",
                                "calibrate/README.md",
                                "sim/plan/README.md",
                                "tests/fuzz/README.md",
                                "calibrate/fsdp/README.md"};

struct Example {
  std::string readme;
  int line = 0;      // of the `$ clustersim` line
  std::string args;  // after `clustersim`
  std::vector<std::string> expected;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<Example> examples_in(const std::string& readme) {
  const std::vector<std::string> lines =
      split_lines(cs::test::read_text_file(kRoot + "/" + readme));
  const std::string prompt = "$ clustersim ";
  std::vector<Example> out;
  bool in_block = false;
  Example* open = nullptr;  // the example whose output lines are being read
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      open = nullptr;
    } else if (in_block && line.rfind(prompt, 0) == 0) {
      out.push_back(Example{readme, static_cast<int>(i + 1), line.substr(prompt.size()), {}});
      open = &out.back();
    } else if (in_block && line.rfind("$ ", 0) == 0) {
      open = nullptr;  // another program's command: not checked here
    } else if (open != nullptr) {
      open->expected.push_back(line);
    }
  }
  return out;
}

// Whether `expected` (segments split at "..." lines) matches `actual` as described at the top.
// On a mismatch, `why` names the first example line that could not be placed.
bool matches(const std::vector<std::string>& expected, const std::vector<std::string>& actual,
             std::string& why) {
  std::vector<std::vector<std::string>> segments(1);
  for (const std::string& line : expected) {
    if (line == "...") {
      segments.emplace_back();
    } else {
      segments.back().push_back(line);
    }
  }
  const bool open_start = segments.size() > 1 && segments.front().empty();
  const bool open_end = segments.size() > 1 && segments.back().empty();
  std::size_t at = 0;  // first output line not yet matched
  for (std::size_t s = 0; s < segments.size(); ++s) {
    const std::vector<std::string>& seg = segments[s];
    if (seg.empty()) continue;
    const bool anchored = s == 0 && !open_start;
    std::size_t found = actual.size();
    std::size_t longest = 0;  // the most lines of the segment matched from one start
    for (std::size_t start = at; start < actual.size(); ++start) {
      std::size_t k = 0;
      while (k < seg.size() && start + k < actual.size() && actual[start + k] == seg[k]) ++k;
      if (k == seg.size()) {
        found = start;
        break;
      }
      longest = std::max(longest, k);
      if (anchored) break;
    }
    if (found == actual.size()) {
      why = "example line not printed where the example puts it: '" + seg[longest] + "'";
      return false;
    }
    at = found + seg.size();
  }
  if (!open_end && !expected.empty() && at != actual.size()) {
    why = "the binary prints more lines after the example's last: '" + actual[at] + "'";
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("the matcher: '...' skips lines, and an example is anchored where it has none") {
  std::string why;
  const std::vector<std::string> out = {"a", "b", "c", "d"};
  CHECK(matches({"a", "b", "c", "d"}, out, why));
  CHECK(matches({"a", "...", "d"}, out, why));
  CHECK(matches({"...", "c", "..."}, out, why));
  CHECK_FALSE(matches({"a", "c"}, out, why));         // c does not follow a
  CHECK_FALSE(matches({"b", "...", "d"}, out, why));  // not the first line
  CHECK_FALSE(matches({"a", "..."}, {"x", "a"}, why));
  CHECK_FALSE(matches({"...", "b"}, out, why));  // the output goes on after b
  CHECK(why.find("'c'") != std::string::npos);
}

TEST_CASE("every clustersim example in the READMEs prints what the README shows") {
  int checked = 0;
  for (const char* readme : kReadmes) {
    for (const Example& ex : examples_in(readme)) {
      INFO(ex.readme << ":" << ex.line << ": clustersim " << ex.args);
      const cs::test::CommandResult r = cs::test::run_command(
          "cd '" + kRoot + "' && '" + std::string(CLUSTERSIM_BINARY) + "' " + ex.args);
      CHECK(r.status == 0);
      std::string why;
      CHECK_MESSAGE(matches(ex.expected, split_lines(r.output), why), why);
      ++checked;
    }
  }
  CHECK(checked >= 8);  // the top README alone has eight
}
