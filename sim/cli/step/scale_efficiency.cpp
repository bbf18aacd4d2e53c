#include "cli/step/scale_efficiency.hpp"

#include <cstdio>

namespace cs::cli {
namespace {

std::string format(const char* pattern, double a, double b = 0, double c = 0) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

}  // namespace

StepFigures step_figures(const system::DdpPrediction& p, int gpus) {
  StepFigures f;
  f.gpus = gpus;
  const workload::StepBreakdown& b = p.result.breakdown;
  f.step_ms = b.step_us / 1e3;
  f.stretched_ms = b.communication_slowdown_us / 1e3;
  f.alone_ms = b.communication_us / 1e3 - f.stretched_ms;
  f.exposed_ms = b.exposed_communication_us / 1e3;
  f.cap_gbps = p.plan.overlap.comm_cap_compute_gbps;
  // The largest bucket speaks for the all-reduces: the others share its choice or are small.
  const std::vector<workload::Bucket>& buckets = p.plan.buckets;
  std::size_t largest = buckets.size();
  for (std::size_t i = 0; i < buckets.size() && i < p.plan.allreduce_ctas.size(); ++i) {
    if (largest == buckets.size() || buckets[i].bytes > buckets[largest].bytes) largest = i;
  }
  if (largest < buckets.size() && largest < p.plan.allreduce_rate_gbps.size()) {
    f.channels = p.plan.allreduce_ctas[largest];
    f.gbps_per_channel = p.plan.allreduce_rate_gbps[largest];
  }
  return f;
}

std::vector<std::string> efficiency_notes(const std::string& topology,
                                          const std::vector<StepFigures>& points) {
  if (points.empty()) return {};
  const StepFigures& base = points.front();
  const StepFigures* best = nullptr;
  std::string where;
  for (const StepFigures& p : points) {
    if (p.efficiency < 1.0005) continue;  // 100.0 % as printed, or less
    where += (where.empty() ? "" : ", ") + std::to_string(p.gpus);
    if (best == nullptr || p.efficiency > best->efficiency) best = &p;
  }
  if (best == nullptr) return {};
  const std::string head = topology + ": eff above 100% at " + where + " GPUs: a step of " +
                           format("%.3f ms", best->step_ms) + " at " + std::to_string(best->gpus) +
                           " GPUs against " + format("%.3f ms", base.step_ms) + " at " +
                           std::to_string(base.gpus) + ".";
  const bool fewer_channels_stretched = best->channels > base.channels && base.channels > 0 &&
                                        base.gbps_per_channel > base.cap_gbps &&
                                        best->stretched_ms < base.stretched_ms;
  if (!fewer_channels_stretched) {
    return {head + " `clustersim ddp --json` at both sizes shows which part of the step shrank."};
  }
  return {head,
          "  At " + std::to_string(base.gpus) + " GPUs NCCL runs each all-reduce on " +
              std::to_string(base.channels) + " channels of " +
              format("%.1f GB/s, more than the %.1f GB/s a channel keeps beside GEMMs "
                     "(calibrate/overlap/): compute beside them stretches the all-reduces by "
                     "%.1f ms a step.",
                     base.gbps_per_channel, base.cap_gbps, base.stretched_ms),
          "  At " + std::to_string(best->gpus) + " GPUs, on " + std::to_string(best->channels) +
              " channels of " +
              format("%.1f GB/s, by %.1f ms: the all-reduces take longer alone (%.1f ms ",
                     best->gbps_per_channel, best->stretched_ms, best->alone_ms) +
              format("against %.1f) but less of them is exposed (%.1f ms against %.1f).",
                     base.alone_ms, best->exposed_ms, base.exposed_ms)};
}

}  // namespace cs::cli
