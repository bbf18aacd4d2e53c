// Name patterns of topology files: "gpu[0-7]" is gpu0 .. gpu7, "psw[0,0,1,1]" repeats names,
// "node[0-1]/nic[0-1]" is the product (the last group varies fastest). Pure; a bad pattern throws
// PatternError saying what is wrong, which the loader turns into an InputError with a location.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cs::topo::names {

class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Expands one pattern; more than `max_names` results is an error (a typo like gpu[0-99999999]).
std::vector<std::string> expand_pattern(std::string_view pattern, std::size_t max_names);

}  // namespace cs::topo::names
