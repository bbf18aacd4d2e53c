// The model-parallel parts of ddp's report: the layout line and the pipeline's trace threads.
#include "cli/step/parallel_report.hpp"

#include <string>
#include <vector>

namespace cs::cli {

std::string layout_line(const system::ParallelPrediction& p,
                        const workload::ModelParallelOptions& options) {
  const system::ParallelGroups& g = p.groups;
  std::string s = "TP " + std::to_string(g.tp) + " x PP " + std::to_string(g.pp) + " x DP " +
                  std::to_string(g.dp) + " (order " + options.order + ")";
  if (g.tp > 1) {
    s += std::string(options.sequence_parallel ? ", sequence parallel" : "") + ", TP group on " +
         std::to_string(g.tp_servers) +
         (g.tp_servers == 1 ? " server" : " servers: its collectives cross the fabric") + ", " +
         std::to_string(p.tp_collectives) + " TP collectives per micro-batch";
  }
  if (g.pp > 1) {
    s += std::string(", ") + workload::to_string(p.schedule) + ", " +
         std::to_string(p.micro_batches) + " micro-batches, " + std::to_string(p.stages.size()) +
         " stages";
  }
  return s;
}

void add_pipeline_events(nlohmann::json& events, const system::ParallelPrediction& p, int pid) {
  if (p.pipeline.spans.empty()) return;
  const int ranks = p.groups.pp;
  const auto stages = static_cast<int>(p.stages.size());
  events.push_back({{"ph", "M"},
                    {"pid", pid},
                    {"name", "process_name"},
                    {"args",
                     {{"name", "pipeline (" + std::to_string(ranks) + " ranks, " +
                                   std::to_string(p.micro_batches) + " micro-batches)"}}}});
  std::vector<double> tail(static_cast<std::size_t>(ranks), 0.0);
  for (int r = 0; r < ranks; ++r) {
    std::string held;
    for (int s = r; s < stages; s += ranks) {
      const system::StagePrediction& st = p.stages[static_cast<std::size_t>(s)];
      held += (held.empty() ? "" : ", ") + std::to_string(s);
      tail[static_cast<std::size_t>(r)] += st.dp_sync_us + st.optimizer_us;
    }
    events.push_back(
        {{"ph", "M"},
         {"pid", pid},
         {"tid", r},
         {"name", "thread_name"},
         {"args", {{"name", "pipeline rank " + std::to_string(r) + " (stage " + held + ")"}}}});
  }
  for (const workload::PipelineSpan& s : p.pipeline.spans) {
    const std::string name = std::string(s.task.backward ? "B" : "F") +
                             std::to_string(s.task.micro) +
                             (stages > ranks ? " chunk " + std::to_string(s.task.chunk) : "");
    events.push_back({{"ph", "X"},
                      {"pid", pid},
                      {"tid", s.rank},
                      {"name", name},
                      {"cat", s.task.backward ? "backward" : "forward"},
                      {"ts", s.start_us},
                      {"dur", s.end_us - s.start_us}});
  }
  for (int r = 0; r < ranks; ++r) {
    const auto k = static_cast<std::size_t>(r);
    if (k >= p.pipeline.end_us.size() || !(tail[k] > 0)) continue;
    events.push_back({{"ph", "X"},
                      {"pid", pid},
                      {"tid", r},
                      {"name", "DP all-reduce + optimizer"},
                      {"cat", "tail"},
                      {"ts", p.pipeline.end_us[k]},
                      {"dur", tail[k]}});
  }
}

}  // namespace cs::cli
