// Typo suggestions and name lists for loader error messages.
#include "topology/parse/loader_names.hpp"

#include <algorithm>

namespace cs::topo::names {

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> previous(b.size() + 1);
  std::vector<int> current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string closest(std::string_view typo, const std::vector<std::string>& candidates) {
  // A third of the name's length (at least 2 edits) still reads as a misspelling; more is a
  // different word and a suggestion would mislead.
  const int allowed = std::max(2, static_cast<int>(typo.size()) / 3);
  std::string best;
  int best_distance = allowed + 1;
  for (const auto& candidate : candidates) {
    const int distance = edit_distance(typo, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string join_truncated(const std::vector<std::string>& items, std::size_t limit) {
  if (items.empty()) return "(none)";
  std::string out;
  const std::size_t shown = std::min(limit, items.size());
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += items[i];
  }
  if (items.size() > shown) out += ", ... (" + std::to_string(items.size() - shown) + " more)";
  return out;
}

std::string did_you_mean(std::string_view typo, const std::vector<std::string>& candidates) {
  const std::string best = closest(typo, candidates);
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

}  // namespace cs::topo::names
