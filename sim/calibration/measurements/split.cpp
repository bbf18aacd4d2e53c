// The train / held-out split and its ladder arithmetic.
#include "calibration/measurements/split.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace cs::cal {

int size_step(double bytes) {
  return static_cast<int>(std::ceil(std::log2(std::max(bytes, 1.0)) - 1e-9));
}

int ladder_gap(std::vector<double> sizes) {
  std::sort(sizes.begin(), sizes.end());
  int gap = 0;
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    const int d = size_step(sizes[i]) - size_step(sizes[i - 1]);
    if (d > 0 && (gap == 0 || d < gap)) gap = d;
  }
  return std::max(gap, 1);
}

bool Split::rank_held_out(int n_ranks) const {
  return std::find(holdout_ranks.begin(), holdout_ranks.end(), n_ranks) != holdout_ranks.end();
}

bool Split::size_held_out(double bytes, int gap) const {
  if (sizes == SizeHoldout::none) return false;
  const bool odd = (size_step(bytes) / std::max(gap, 1)) % 2 != 0;
  return sizes == SizeHoldout::odd ? odd : !odd;
}

std::string Split::describe() const {
  std::string ranks;
  for (int r : holdout_ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
  return "held out: rank counts {" + ranks + "} and the " + to_string(sizes) +
         " steps of each size ladder (step = ceil(log2 bytes) / ladder gap)";
}

const char* to_string(SizeHoldout sizes) {
  switch (sizes) {
    case SizeHoldout::odd:
      return "odd";
    case SizeHoldout::even:
      return "even";
    case SizeHoldout::none:
      return "none";
  }
  return "?";
}

SizeHoldout parse_size_holdout(const std::string& text, const std::string& key) {
  if (text == "odd") return SizeHoldout::odd;
  if (text == "even") return SizeHoldout::even;
  if (text == "none") return SizeHoldout::none;
  throw InputError("key '" + key + "': unknown size holdout '" + text +
                   "'; valid: odd, even, none");
}

Split default_split(const std::vector<int>& rank_counts) {
  Split split;
  // One rank is NCCL's copy, no collective: it neither bounds nor joins the held-out counts.
  std::vector<int> collective;
  for (int r : rank_counts) {
    if (r >= 2) collective.push_back(r);
  }
  if (collective.empty()) return split;
  const auto [lo, hi] = std::minmax_element(collective.begin(), collective.end());
  for (int r : collective) {
    if (r > *lo && r < *hi &&
        std::find(split.holdout_ranks.begin(), split.holdout_ranks.end(), r) ==
            split.holdout_ranks.end())
      split.holdout_ranks.push_back(r);
  }
  std::sort(split.holdout_ranks.begin(), split.holdout_ranks.end());
  return split;
}

}  // namespace cs::cal
