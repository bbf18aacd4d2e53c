// Which measured points the fitter may learn from and which it must predict blind. A point is
// held out when its rank count is in `holdout_ranks` or when its size sits on a held-out step of
// its size ladder: step = ceil(log2(bytes)) / g, g the smallest ceil(log2) gap between sizes of
// the same curve (1 for NCCL's x2 sweep, 2 for the copies' x4 sweep); `sizes` says whether odd
// steps, even steps or no steps are held out.
#pragma once

#include <string>
#include <vector>

namespace cs::cal {

enum class SizeHoldout { odd, even, none };

struct Split {
  std::vector<int> holdout_ranks;
  SizeHoldout sizes = SizeHoldout::odd;

  bool rank_held_out(int n_ranks) const;
  // `gap` is the curve's ladder gap in ceil(log2) units (see above).
  bool size_held_out(double bytes, int gap) const;
  bool held_out(int n_ranks, double bytes, int gap) const {
    return rank_held_out(n_ranks) || size_held_out(bytes, gap);
  }
  std::string describe() const;  // one line for tables and the calibration file
};

const char* to_string(SizeHoldout sizes);
// "odd", "even", "none"; throws InputError naming `key` otherwise.
SizeHoldout parse_size_holdout(const std::string& text, const std::string& key);

// The default split for the rank counts a machine was measured at: every count strictly between
// the smallest and the largest of 2 or more is held out (2..4 -> 3; one rank, NCCL's copy, never
// is), odd size steps are held out.
Split default_split(const std::vector<int>& rank_counts);

// ceil(log2(bytes)) as an integer (bytes >= 1).
int size_step(double bytes);
// The ladder gap of a curve's sizes (>= 1).
int ladder_gap(std::vector<double> sizes);

}  // namespace cs::cal
