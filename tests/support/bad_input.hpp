// What every bad-input test checks of a command that should refuse its input: exit status 2 and
// exactly one line (its standard error) holding the expected message.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "support/cli_run.hpp"

namespace cs::test {

inline void check_bad_input(const CommandResult& r, const std::string& message) {
  CHECK(r.status == 2);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
  CHECK(r.output.find(message) != std::string::npos);
}

}  // namespace cs::test
