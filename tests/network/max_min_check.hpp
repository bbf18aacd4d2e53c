// The test oracle of max-min fairness, shared by the solver and flow-network property tests.
#pragma once

#include <doctest/doctest.h>

#include <vector>

#include "network/maxmin/maxmin.hpp"

namespace cs::net::test {

// Checks the two conditions that define max-min fairness: feasibility (no channel over its
// capacity) and that every flow is either at its cap or crosses a saturated channel on which no
// other flow gets more (its bottleneck).
inline void check_max_min(const MaxMinSharing& sharing,
                          const std::vector<MaxMinSharing::FlowIndex>& flows,
                          const std::vector<double>& caps) {
  const double tolerance = 1e-9;
  for (int c = 0; c < sharing.channel_count(); ++c) {
    REQUIRE(sharing.load_Bps(c) <= sharing.capacity_Bps(c) * (1 + tolerance));
  }
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const double rate = sharing.rate_Bps(flows[i]);
    REQUIRE(rate >= 0);
    if (rate >= caps[i] * (1 - tolerance)) continue;
    bool bottlenecked = false;
    for (const ChannelUse& use : sharing.uses(flows[i])) {
      const double capacity = sharing.capacity_Bps(use.channel);
      if (sharing.load_Bps(use.channel) < capacity * (1 - tolerance)) continue;
      bool largest = true;
      for (std::size_t j = 0; j < flows.size(); ++j) {
        for (const ChannelUse& other : sharing.uses(flows[j])) {
          if (other.channel == use.channel && sharing.rate_Bps(flows[j]) > rate * (1 + tolerance)) {
            largest = false;
          }
        }
      }
      if (largest) bottlenecked = true;
    }
    REQUIRE_MESSAGE(bottlenecked, "flow " << i << " at " << rate << " has no bottleneck");
  }
}

}  // namespace cs::net::test
