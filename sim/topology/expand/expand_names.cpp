// Expansion of bracket name patterns, declared in expand_names.hpp.
#include "topology/expand/expand_names.hpp"

#include <charconv>

namespace cs::topo::names {
namespace {

long long parse_index(std::string_view text, std::string_view pattern) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) {
    throw PatternError("'" + std::string(pattern) + "': '" + std::string(text) +
                       "' is not an index; write [0-7], [0,2,4] or [0-3,8]");
  }
  return value;
}

// The indices of one bracket group's body, e.g. "0-3,8" -> 0 1 2 3 8.
std::vector<long long> parse_group(std::string_view body, std::string_view pattern,
                                   std::size_t max_names) {
  std::vector<long long> out;
  while (true) {
    const std::size_t comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      out.push_back(parse_index(item, pattern));
    } else {
      const long long first = parse_index(item.substr(0, dash), pattern);
      const long long last = parse_index(item.substr(dash + 1), pattern);
      if (last < first) {
        throw PatternError("'" + std::string(pattern) + "': range " + std::string(item) +
                           " runs backwards; write the smaller index first");
      }
      if (static_cast<std::size_t>(last - first) >= max_names) {
        throw PatternError("'" + std::string(pattern) + "' expands to more than " +
                           std::to_string(max_names) + " names");
      }
      for (long long i = first; i <= last; ++i) out.push_back(i);
    }
    if (out.size() > max_names) {
      throw PatternError("'" + std::string(pattern) + "' expands to more than " +
                         std::to_string(max_names) + " names");
    }
    if (comma == std::string_view::npos) break;
    body.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_pattern(std::string_view pattern, std::size_t max_names) {
  if (pattern.empty()) throw PatternError("a node name must not be empty");
  std::vector<std::string> names{""};
  std::size_t pos = 0;
  while (pos < pattern.size()) {
    const std::size_t open = pattern.find_first_of("[]", pos);
    if (open != std::string_view::npos && pattern[open] == ']') {
      throw PatternError("'" + std::string(pattern) + "': ']' without a matching '['");
    }
    const std::string_view literal = pattern.substr(pos, open - pos);
    for (auto& name : names) name += literal;
    if (open == std::string_view::npos) break;
    const std::size_t close = pattern.find_first_of("[]", open + 1);
    if (close == std::string_view::npos || pattern[close] != ']') {
      throw PatternError("'" + std::string(pattern) + "': '[' at position " + std::to_string(open) +
                         " is not closed by ']'");
    }
    const std::vector<long long> indices =
        parse_group(pattern.substr(open + 1, close - open - 1), pattern, max_names);
    if (names.size() * indices.size() > max_names) {
      throw PatternError("'" + std::string(pattern) + "' expands to more than " +
                         std::to_string(max_names) + " names");
    }
    std::vector<std::string> next;
    next.reserve(names.size() * indices.size());
    for (const auto& name : names) {
      for (long long index : indices) next.push_back(name + std::to_string(index));
    }
    names = std::move(next);
    pos = close + 1;
  }
  return names;
}

}  // namespace cs::topo::names
