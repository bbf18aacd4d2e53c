// Where each value of a JSON document sits: nlohmann_json keeps no line numbers, so this scan
// maps every value's JSON pointer ("/nccl_by_op/0/params/max_threads") to the 1-based line on
// which it starts (an object member: the line of its key), for errors that name file:line.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace cs::cal {

// Every value's line by JSON pointer; the whole document is "". Tolerates text that is not JSON
// (it only places an error that the real parser found).
std::map<std::string, int> json_value_lines(std::string_view text);

// A JSON file's name and value lines: the location of a pointer, or of its nearest enclosing
// value that exists (a missing key is reported on the line of the object that lacks it).
class JsonLines {
 public:
  JsonLines(std::string file, std::string_view text)
      : file_(std::move(file)), lines_(json_value_lines(text)) {}
  SourceLoc at(std::string pointer) const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::map<std::string, int> lines_;
};

// One pointer step: "/" and the key with '~' and '/' escaped as RFC 6901 says.
std::string pointer_step(std::string_view key);

}  // namespace cs::cal
