// A character scan that tracks nesting depth, strings and the last key seen at the top level.
#include "calibration/measurements_lines.hpp"

#include <string>

namespace cs::cal {

std::vector<int> measurement_record_lines(std::string_view text) {
  std::vector<int> lines;
  int line = 1;
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  std::string current;      // the string being read
  std::string last_string;  // the last complete string at depth 1 (a key, when ':' follows)
  std::string key;          // the key whose value comes next at depth 1
  bool in_measurements = false;
  for (const char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (depth == 1) last_string = current;
      } else {
        current.push_back(c);
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        current.clear();
        break;
      case ':':
        if (depth == 1) key = last_string;
        break;
      case '[':
      case '{':
        if (depth == 1 && c == '[' && key == "measurements") in_measurements = true;
        if (depth == 2 && c == '{' && in_measurements) lines.push_back(line);
        ++depth;
        break;
      case ']':
      case '}':
        --depth;
        if (depth == 1) in_measurements = false;
        break;
      case ',':
        if (depth == 1) key.clear();
        break;
      default:
        break;
    }
  }
  return lines;
}

}  // namespace cs::cal
