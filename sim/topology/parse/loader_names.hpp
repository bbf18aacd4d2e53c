// Helpers that make error messages useful: the closest valid name to a typo and a readable,
// truncated list of the names that do exist.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cs::topo::names {

// Levenshtein distance between two short names.
int edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `typo` if it is close enough to be a plausible misspelling, else "".
std::string closest(std::string_view typo, const std::vector<std::string>& candidates);

// "a, b, c" or "a, b, ... (1021 more)" after `limit` names.
std::string join_truncated(const std::vector<std::string>& items, std::size_t limit = 12);

// " (did you mean 'x'?)" or "" when nothing is close.
std::string did_you_mean(std::string_view typo, const std::vector<std::string>& candidates);

}  // namespace cs::topo::names
