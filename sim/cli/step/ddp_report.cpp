// Renderings of one simulated step.
#include "cli/step/ddp_report.hpp"

#include "cli/step/parallel_report.hpp"
#include "cli/step/trust.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>

namespace cs::cli {
namespace {

// Model replicas: every rank, or the data-parallel groups of a TP x PP layout.
int replicas(const DdpReport& r) {
  return r.parallel != nullptr ? r.parallel->groups.dp : r.ranks;
}

double samples_per_s(const DdpReport& r) {
  const double step_s = r.result.breakdown.step_us * 1e-6;
  return step_s > 0
             ? static_cast<double>(workload::samples_per_step(r.options)) * replicas(r) / step_s
             : 0.0;
}

std::string settings_line(const DdpReport& r) {
  std::string s = "batch " + std::to_string(r.options.batch);
  if (r.options.seq) s += " x seq " + std::to_string(*r.options.seq);
  s += ", ";
  s += workload::to_string(r.options.precision);
  s += ", ";
  s += workload::to_string(r.options.optimizer);
  if (workload::sharded(r.options.strategy)) {
    const workload::FsdpOptions& f = r.fsdp_options;
    if (f.replicas > 1)
      s += ", HSDP (sharded over " + std::to_string(f.shard_ranks) + " GPUs, replicated " +
           std::to_string(f.replicas) + " times)";
    s += ", FSDP2 (fully_shard on " + std::to_string(r.fsdp_units - 1) + " blocks and the root, " +
         (r.options.fsdp.reshard_after_forward ? "reshard after forward" : "no reshard") +
         ", params " + workload::to_string(r.options.fsdp.param_dtype) + ", reduce " +
         workload::to_string(r.options.fsdp.reduce_dtype) + ")";
  } else if (r.parallel != nullptr && r.parallel->groups.dp == 1) {
    s += ", no data parallelism";
  } else if (r.parallel != nullptr && r.options.parallel.reduce_after_backward()) {
    s += ", each stage's gradients all-reduced over DP after its last backward";
  } else if (r.options.ddp.enabled) {
    char cap[32];
    std::snprintf(cap, sizeof cap, "%g", r.options.ddp.bucket_cap_mb);
    s += ", DDP (" + std::string(cap) + " MiB buckets: " + std::to_string(r.plan.buckets.size()) +
         (r.options.ddp.gradient_as_bucket_view ? ", gradient_as_bucket_view" : "") +
         (r.options.ddp.find_unused_parameters ? ", find_unused_parameters" : "") +
         (r.options.ddp.first_step ? ", first step" : "") + ")";
  } else {
    s += ", no DDP";
  }
  s += r.options.input_pinned ? ", pinned input" : ", pageable input";
  if (r.options.grad_accum > 1)
    s += ", " + std::to_string(r.options.grad_accum) + " micro-batches a step" +
         (r.options.sync_every_micro ? " (each synchronised)" : "");
  if (r.options.activation_checkpointing) s += ", activation checkpointing";
  return s;
}

struct Row {
  const char* key;
  const char* label;
  double us;
};

// The recomputation and accumulation rows only where the step has them.
std::vector<Row> rows(const workload::StepBreakdown& b, const workload::TrainingOptions& o) {
  const bool fsdp = workload::sharded(o.strategy);
  const bool after = o.parallel.reduce_after_backward();
  std::vector<Row> out = {{"input_copy", "input copy", b.input_copy_us},
                          {"forward", "forward", b.forward_us},
                          {"backward", "backward", b.backward_us}};
  // Stepped micro-batch by micro-batch (a pipeline's stages, Megatron's data parallelism), the
  // recomputation and the accumulation run inside the backward.
  if (o.activation_checkpointing)
    out.push_back(
        {"recompute", after ? "  of it, recompute" : "recomputed forward", b.recompute_us});
  if (o.grad_accum > 1)
    out.push_back({"grad_accumulate", after ? "  of it, accumulation" : "gradient accumulation",
                   b.grad_accumulate_us});
  const bool tp = o.parallel.tp > 1;
  if (after) {
    if (tp) out.push_back({"tp_exposed", "  of them, TP waits", b.tp_exposed_us});
    out.push_back({"pipeline_bubble", "pipeline bubble", b.pipeline_bubble_us});
    out.push_back({"dp_sync", "DP all-reduce", b.exposed_communication_us});
    out.push_back({"optimizer", "optimizer", b.optimizer_us});
    return out;
  }
  const std::vector<Row> rest = {
      {"ddp_copies", fsdp ? "FSDP copies" : "DDP copies", b.ddp_copies_us},
      {"optimizer", "optimizer", b.optimizer_us},
      {"kernel_gaps", "gaps between kernels", b.kernel_gaps_us},
      {"overlap_slowdown", "overlap slowdown", b.overlap_slowdown_us},
      {"exposed_communication", "exposed communication", b.exposed_communication_us},
      {"host_bound_idle", "host-bound idle", b.host_bound_idle_us}};
  out.insert(out.end(), rest.begin(), rest.end());
  if (tp) {
    const auto at = std::find_if(out.begin(), out.end(), [](const Row& r) {
      return std::string_view(r.key) == "exposed_communication";
    });
    out.insert(at + 1, {"tp_exposed", "  of it, TP waits", b.tp_exposed_us});
  }
  return out;
}

}  // namespace

std::string ddp_text(const DdpReport& r) {
  const workload::StepBreakdown& b = r.result.breakdown;
  std::ostringstream out;
  char line[256];
  out << "# clustersim ddp: " << r.model.name << " on " << r.cluster.name << ", " << r.ranks
      << (r.ranks == 1 ? " GPU (" : " GPUs (") << r.gpu.name << ")";
  if (r.servers > 1) out << " on " << r.servers << " servers";
  if (r.parallel != nullptr) {
    out << "\n" << kModelParallelTrust << "\n";
  } else {
    out << "\n" << trust_line(r.options.strategy, r.ranks, r.servers) << "\n";
  }
  out << "# " << settings_line(r) << "\n";
  if (r.parallel != nullptr)
    out << "# layout: " << layout_line(*r.parallel, r.options.parallel) << "\n";
  out << "# compute: " << r.plan.compute_note << "; GEMMs: " << r.compute.gemm_source << "\n";
  out << "# host: " << r.plan.host_note << "\n";
  std::snprintf(line, sizeof line,
                "# memory: %.1f GiB of %.1f GiB (params %.2f, grads %.2f, optimizer %.2f, "
                "%s %.2f, activations %.2f, outside PyTorch %.2f)\n",
                r.memory.total / kGiB, r.memory.capacity / kGiB, r.memory.params / kGiB,
                r.memory.grads / kGiB, r.memory.optimizer_state / kGiB,
                workload::sharded(r.options.strategy) ? "unsharded and reduce buffers" : "buckets",
                (r.memory.ddp_buckets + r.memory.unsharded) / kGiB, r.memory.activations / kGiB,
                r.memory.outside / kGiB);
  out << line;
  std::snprintf(line, sizeof line, "step                     %10.3f ms   %10.1f samples/s\n",
                b.step_us / 1e3, samples_per_s(r));
  out << line;
  for (const Row& row : rows(b, r.options)) {
    std::snprintf(line, sizeof line, "  %-22s %10.3f ms\n", row.label, row.us / 1e3);
    out << line;
  }
  const bool after = r.parallel != nullptr && r.options.parallel.reduce_after_backward();
  if (!after)
    std::snprintf(
        line, sizeof line,
        "  (%s %.3f ms on %s, %.3f ms of it slowed by compute beside "
        "it; host busy %.3f ms)\n",
        workload::sharded(r.options.strategy) ? "all-gather and reduce-scatter" : "all-reduce",
        b.communication_us / 1e3,
        workload::sharded(r.options.strategy) ? "their streams" : "the NCCL stream",
        b.communication_slowdown_us / 1e3, b.host_busy_us / 1e3);
  if (!after) out << line;
  if (after) {
    out << "# pipeline stages (rank = stage mod " << r.parallel->groups.pp
        << "); ms per micro-batch, TP waits included; send: activations to the next stage\n";
    out << "#  stage   layers   forward   backward  TP waits   DP sync  optimizer   send  "
           "in flight  memory GiB\n";
    for (std::size_t i = 0; i < r.parallel->stages.size(); ++i) {
      const system::StagePrediction& st = r.parallel->stages[i];
      const double send = i < r.parallel->send_us.size() ? r.parallel->send_us[i] : 0.0;
      std::snprintf(line, sizeof line,
                    "  %6zu %4d-%-4d %9.3f %10.3f %9.3f %9.3f %10.3f %6.3f %10d %11.1f\n", i,
                    st.first_layer, st.end_layer - 1, st.forward_us / 1e3, st.backward_us / 1e3,
                    st.tp_exposed_us / 1e3, st.dp_sync_us / 1e3, st.optimizer_us / 1e3, send / 1e3,
                    st.in_flight, st.memory.total / kGiB);
      out << line;
    }
  }
  if (r.ranks > 1 && !r.result.buckets.empty()) {
    out << "# buckets in launch order; times in ms from the step's start; alone: the all-reduce "
           "without compute beside it\n";
    out << "#  bucket       MiB tensors      ready      start        end      alone  nccl\n";
    for (std::size_t i = 0; i < r.result.buckets.size(); ++i) {
      const workload::BucketTiming& t = r.result.buckets[i];
      std::snprintf(line, sizeof line, "  %7zu %9.2f %7d %10.3f %10.3f %10.3f %10.3f  %s\n", i,
                    t.bytes / (1024.0 * 1024.0), t.tensors, t.ready_us / 1e3, t.start_us / 1e3,
                    t.end_us / 1e3, t.alone_us / 1e3, t.label.c_str());
      out << line;
    }
  }
  return out.str();
}

nlohmann::json ddp_json(const DdpReport& r) {
  const workload::StepBreakdown& b = r.result.breakdown;
  nlohmann::json out;
  out["model"] = r.model.name;
  out["topology"] = r.cluster.name;
  out["gpu"] = r.gpu.name;
  out["ranks"] = r.ranks;
  out["servers"] = r.servers;
  out["batch"] = r.options.batch;
  if (r.options.seq) out["seq"] = *r.options.seq;
  out["precision"] = workload::to_string(r.options.precision);
  out["optimizer"] = workload::to_string(r.options.optimizer);
  out["ddp"] = r.options.ddp.enabled;
  out["bucket_cap_mb"] = r.options.ddp.bucket_cap_mb;
  out["find_unused_parameters"] = r.options.ddp.find_unused_parameters;
  out["first_step"] = r.options.ddp.first_step;
  if (r.options.grad_accum > 1) out["grad_accum"] = r.options.grad_accum;
  if (r.options.sync_every_micro) out["sync_every_micro_batch"] = true;
  if (r.options.activation_checkpointing) out["activation_checkpointing"] = true;
  if (r.parallel != nullptr) {
    const system::ParallelGroups& g = r.parallel->groups;
    out["layout"] = {{"tp", g.tp},
                     {"pp", g.pp},
                     {"dp", g.dp},
                     {"order", r.options.parallel.order},
                     {"sequence_parallel", r.options.parallel.sequence_parallel},
                     {"tp_servers", g.tp_servers}};
    if (g.pp > 1) {
      out["layout"]["schedule"] = workload::to_string(r.parallel->schedule);
      out["layout"]["micro_batches"] = r.parallel->micro_batches;
      out["layout"]["virtual_stages"] = r.options.parallel.virtual_stages;
    }
  }
  out["compute"] = r.plan.compute_note;
  out["host"] = r.plan.host_note;
  out["measurement"] = r.plan.measurement;
  out["step_ms"] = b.step_us / 1e3;
  out["samples_per_s"] = samples_per_s(r);
  nlohmann::json breakdown;
  for (const Row& row : rows(b, r.options)) breakdown[row.key] = row.us / 1e3;
  breakdown["communication"] = b.communication_us / 1e3;
  breakdown["communication_slowdown"] = b.communication_slowdown_us / 1e3;
  breakdown["host_busy"] = b.host_busy_us / 1e3;
  out["breakdown_ms"] = breakdown;
  out["memory_bytes"] = {{"params", r.memory.params},
                         {"grads", r.memory.grads},
                         {"optimizer_state", r.memory.optimizer_state},
                         {"ddp_buckets", r.memory.ddp_buckets},
                         {"activations", r.memory.activations},
                         {"outside_allocator", r.memory.outside},
                         {"total", r.memory.total},
                         {"capacity", r.memory.capacity}};
  nlohmann::json buckets = nlohmann::json::array();
  for (const workload::BucketTiming& t : r.result.buckets) {
    buckets.push_back({{"bytes", t.bytes},
                       {"nccl", t.label},
                       {"tensors", t.tensors},
                       {"ready_ms", t.ready_us / 1e3},
                       {"start_ms", t.start_us / 1e3},
                       {"end_ms", t.end_us / 1e3},
                       {"alone_ms", t.alone_us / 1e3}});
  }
  out["buckets"] = buckets;
  return out;
}

std::string ddp_csv(const DdpReport& r) {
  const workload::StepBreakdown& b = r.result.breakdown;
  std::ostringstream head;
  std::ostringstream row;
  head << "model,topology,gpu,gpus,servers,batch,seq,precision,optimizer,ddp,step_ms,samples_per_s";
  row << r.model.name << "," << r.cluster.name << "," << r.gpu.name << "," << r.ranks << ","
      << r.servers << "," << r.options.batch << ","
      << (r.options.seq ? std::to_string(*r.options.seq) : "") << ","
      << workload::to_string(r.options.precision) << "," << workload::to_string(r.options.optimizer)
      << "," << (r.options.ddp.enabled ? "true" : "false");
  char num[64];
  std::snprintf(num, sizeof num, ",%.6f,%.6f", b.step_us / 1e3, samples_per_s(r));
  row << num;
  for (const Row& x : rows(b, r.options)) {
    head << "," << x.key << "_ms";
    std::snprintf(num, sizeof num, ",%.6f", x.us / 1e3);
    row << num;
  }
  head << ",communication_ms,communication_slowdown_ms\n";
  std::snprintf(num, sizeof num, ",%.6f,%.6f\n", b.communication_us / 1e3,
                b.communication_slowdown_us / 1e3);
  row << num;
  return head.str() + row.str();
}

std::string ddp_trace_json(const DdpReport& r) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"},
                    {"pid", 0},
                    {"name", "process_name"},
                    {"args", {{"name", "rank 0 (" + r.gpu.name + ")"}}}});
  for (std::size_t tid = 0; tid < r.result.lanes.size(); ++tid) {
    events.push_back({{"ph", "M"},
                      {"pid", 0},
                      {"tid", tid},
                      {"name", "thread_name"},
                      {"args", {{"name", r.result.lanes[tid]}}}});
  }
  for (const workload::Span& s : r.result.spans) {
    events.push_back({{"ph", "X"},
                      {"pid", 0},
                      {"tid", s.lane},
                      {"name", s.name},
                      {"cat", s.category},
                      {"ts", us_from_ps(s.start)},
                      {"dur", us_from_ps(s.end - s.start)}});
  }
  if (r.links != nullptr && !r.links->empty()) {
    events.push_back({{"ph", "M"},
                      {"pid", 1},
                      {"name", "process_name"},
                      {"args", {{"name", "busiest links (utilization during all-reduces)"}}}});
    for (const LinkLoad& link : *r.links) {
      for (std::size_t b = 0; b < r.result.buckets.size() && b < link.bucket_bytes.size(); ++b) {
        const workload::BucketTiming& t = r.result.buckets[b];
        const double seconds = (t.end_us - t.start_us) * 1e-6;
        if (seconds <= 0 || link.bucket_bytes[b] <= 0) continue;
        const double utilization = link.bucket_bytes[b] / link.capacity_Bps / seconds;
        events.push_back({{"ph", "C"},
                          {"pid", 1},
                          {"name", link.name},
                          {"ts", t.start_us},
                          {"args", {{"utilization", utilization}}}});
        events.push_back({{"ph", "C"},
                          {"pid", 1},
                          {"name", link.name},
                          {"ts", t.end_us},
                          {"args", {{"utilization", 0.0}}}});
      }
    }
  }
  if (r.parallel != nullptr) add_pipeline_events(events, *r.parallel, 2);
  nlohmann::json trace;
  trace["traceEvents"] = events;
  trace["displayTimeUnit"] = "ms";
  return trace.dump() + "\n";
}

}  // namespace cs::cli
