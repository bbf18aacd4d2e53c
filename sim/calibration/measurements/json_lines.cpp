// A character scan with a stack of open objects and arrays: each value is recorded under the
// pointer of the member key or array index that leads to it, at the line of that key (a member)
// or of the value itself (an array element or the document). A key's escapes are not decoded
// ("\u00e9" stays "u00e9"), so a member whose key holds one is found at its parent's line.
#include "calibration/measurements/json_lines.hpp"

#include <cctype>
#include <vector>

namespace cs::cal {
namespace {

struct Frame {
  bool array = false;
  int index = 0;     // arrays: the element being read
  std::string key;   // objects: the member being read
  int key_line = 0;  // objects: the line its key stands on
};

std::string pointer_of(const std::vector<Frame>& stack) {
  std::string out;
  for (const Frame& f : stack) out += f.array ? "/" + std::to_string(f.index) : pointer_step(f.key);
  return out;
}

}  // namespace

std::string pointer_step(std::string_view key) {
  std::string out = "/";
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::map<std::string, int> json_value_lines(std::string_view text) {
  enum class Expect { value, key, colon, next };
  std::map<std::string, int> lines;
  std::vector<Frame> stack;
  Expect expect = Expect::value;
  int line = 1;
  std::size_t i = 0;
  // Reads the string that opens at text[i] (a quote); leaves i after its closing quote.
  const auto read_string = [&]() {
    std::string s;
    for (++i; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\n') ++line;
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      s += text[i];
    }
    ++i;
    return s;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (expect == Expect::key) {
      if (c == '"') {
        stack.back().key_line = line;
        stack.back().key = read_string();
        expect = Expect::colon;
        continue;
      }
      if (c == '}' && !stack.empty()) {
        stack.pop_back();
        expect = Expect::next;
      }
      ++i;
      continue;
    }
    if (expect == Expect::colon) {
      if (c == ':') expect = Expect::value;
      ++i;
      continue;
    }
    if (expect == Expect::next) {
      if (c == ',' && !stack.empty()) {
        if (stack.back().array) {
          ++stack.back().index;
          expect = Expect::value;
        } else {
          expect = Expect::key;
        }
      } else if ((c == ']' || c == '}') && !stack.empty()) {
        stack.pop_back();
      }
      ++i;
      continue;
    }
    // A value starts here (or an empty array ends).
    if (c == ']' && !stack.empty() && stack.back().array) {
      stack.pop_back();
      expect = Expect::next;
      ++i;
      continue;
    }
    lines.emplace(pointer_of(stack),
                  !stack.empty() && !stack.back().array ? stack.back().key_line : line);
    if (c == '{' || c == '[') {
      stack.push_back(Frame{c == '[', 0, {}, 0});
      expect = c == '{' ? Expect::key : Expect::value;
      ++i;
    } else if (c == '"') {
      read_string();
      expect = Expect::next;
    } else {
      while (i < text.size() && text[i] != ',' && text[i] != ']' && text[i] != '}' &&
             !std::isspace(static_cast<unsigned char>(text[i])))
        ++i;
      expect = Expect::next;
    }
  }
  return lines;
}

SourceLoc JsonLines::at(std::string pointer) const {
  while (true) {
    const auto found = lines_.find(pointer);
    if (found != lines_.end()) return SourceLoc{file_, found->second};
    if (pointer.empty()) return SourceLoc{file_, 0};
    pointer.erase(pointer.rfind('/'));
  }
}

}  // namespace cs::cal
