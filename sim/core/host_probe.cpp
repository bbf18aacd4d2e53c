// The host index (geometric mean of the probe's six classes) and the factor between two hosts.
#include "core/host_probe.hpp"

#include <cmath>

namespace cs {

double HostProbe::index_us() const {
  double log_sum = 0;
  for (double u : us) log_sum += std::log(u);
  return std::exp(log_sum / static_cast<double>(us.size()));
}

double host_scale(const HostProbe& from, const HostProbe& to) {
  return to.index_us() / from.index_us();
}

}  // namespace cs
