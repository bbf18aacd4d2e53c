// Random flow churn for the max-min solver's tests: flows in flight under random adds and removes,
// checked after each update against max-min optimality and a one-shot solve.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "max_min_check.hpp"
#include "network/maxmin/maxmin.hpp"

namespace cs::net::test {

// Flows in flight under random changes, with the paths and caps a one-shot solve needs.
struct RandomFlows {
  std::vector<MaxMinSharing::FlowIndex> live;
  std::vector<std::vector<topo::ChannelId>> paths;
  std::vector<double> caps;
  std::vector<int> serials;  // one per flow ever added: indices are reused, serials not
  int next_serial = 0;

  // One time in three (when any is live) removes a random flow; otherwise adds one over 1 to
  // `max_hops` random channels (repeats possible), capped one time in four (at 1 to 50.9 times
  // `cap_unit`).
  void change(std::mt19937& rng, MaxMinSharing& sharing, int channel_count, int max_hops,
              double cap_unit = 1.0) {
    if (!live.empty() && rng() % 3 == 0) {
      const std::size_t victim = rng() % live.size();
      sharing.remove(live[victim]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
      paths.erase(paths.begin() + static_cast<std::ptrdiff_t>(victim));
      caps.erase(caps.begin() + static_cast<std::ptrdiff_t>(victim));
      serials.erase(serials.begin() + static_cast<std::ptrdiff_t>(victim));
      return;
    }
    std::vector<topo::ChannelId> path;
    const int length = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_hops));
    for (int h = 0; h < length; ++h)
      path.push_back(static_cast<topo::ChannelId>(rng() % channel_count));
    const double cap = rng() % 4 == 0 ? (1.0 + (rng() % 500) / 10.0) * cap_unit
                                      : std::numeric_limits<double>::infinity();
    live.push_back(sharing.add(path, cap));
    paths.push_back(path);
    caps.push_back(cap);
    serials.push_back(next_serial++);
  }

  // After an update: the member lists as the solver relies on them, max-min optimal, and every
  // rate equal to a one-shot solve's to 1e-9 (infinite rates exactly).
  void check(const MaxMinSharing& sharing, const std::vector<double>& capacity) const {
    sharing.check_lists();
    check_max_min(sharing, live, caps);
    const auto fresh = max_min_rates(capacity, paths, caps);
    for (std::size_t i = 0; i < live.size(); ++i) {
      const double rate = sharing.rate_Bps(live[i]);
      if (std::isinf(fresh[i])) {
        REQUIRE(rate == fresh[i]);
      } else {
        REQUIRE(rate == doctest::Approx(fresh[i]).epsilon(1e-9));
      }
    }
  }
};

}  // namespace cs::net::test
