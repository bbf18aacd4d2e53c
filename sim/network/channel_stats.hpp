// What a network model reports per channel (link direction) for utilization tables.
#pragma once

#include "core/units.hpp"

namespace cs::net {

struct ChannelStats {
  double bytes = 0;             // bytes carried (a flow crossing it k times counts k times)
  TimePs busy_ps = 0;           // time during which at least one flow loaded it
  double peak_utilization = 0;  // highest load / capacity seen (1 = saturated)
};

}  // namespace cs::net
