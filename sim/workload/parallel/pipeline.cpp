// Pipeline schedules as each rank's task order, and the pipeline's task graph in time.
#include "workload/parallel/pipeline.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace cs::workload {

std::vector<std::vector<PipelineTask>> pipeline_order(PipelineSchedule schedule, int ranks,
                                                      int virtual_stages, int micro_batches) {
  const int p = ranks, m = micro_batches;
  std::vector<std::vector<PipelineTask>> order(static_cast<std::size_t>(p));
  if (schedule != PipelineSchedule::interleaved && virtual_stages != 1) {
    throw InputError("flag '--virtual-stages': " + std::to_string(virtual_stages) +
                     " chunks per rank need --schedule interleaved-1f1b");
  }
  for (int r = 0; r < p; ++r) {
    std::vector<PipelineTask>& o = order[static_cast<std::size_t>(r)];
    switch (schedule) {
      case PipelineSchedule::gpipe:
        // GPipe (Huang et al. 2019; PyTorch's ScheduleGPipe): all forwards, then all backwards.
        for (int i = 0; i < m; ++i) o.push_back({false, 0, i});
        for (int i = 0; i < m; ++i) o.push_back({true, 0, i});
        break;
      case PipelineSchedule::one_f_one_b: {
        // PipeDream-Flush (Narayanan et al. 2021; Megatron-LM's
        // forward_backward_pipelining_without_interleaving, PyTorch's Schedule1F1B).
        const int warmup = std::min(p - r - 1, m);
        for (int i = 0; i < warmup; ++i) o.push_back({false, 0, i});
        for (int i = 0; i < m - warmup; ++i) {
          o.push_back({false, 0, warmup + i});
          o.push_back({true, 0, i});
        }
        for (int i = m - warmup; i < m; ++i) o.push_back({true, 0, i});
        break;
      }
      case PipelineSchedule::interleaved: {
        // Megatron-LM's forward_backward_pipelining_with_interleaving: micro-batches in groups
        // of p, each group through chunk 0, then chunk 1, ...; backward through the chunks in
        // reverse.
        const int v = virtual_stages;
        if (m % p != 0) {
          throw InputError(
              "flag '--grad-accum': interleaved 1F1B runs micro-batches in groups of "
              "the " +
              std::to_string(p) + " pipeline ranks; " + std::to_string(m) + " is not a multiple");
        }
        const int total = m * v;
        const int warmup = m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * p, total);
        const auto task = [p, v](int k, bool backward) {
          const int in_group = k % (p * v);
          int chunk = in_group / p;
          if (backward) chunk = v - chunk - 1;
          return PipelineTask{backward, chunk, (k / (p * v)) * p + k % p};
        };
        for (int k = 0; k < warmup; ++k) o.push_back(task(k, false));
        for (int k = 0; k < total - warmup; ++k) {
          o.push_back(task(k + warmup, false));
          o.push_back(task(k, true));
        }
        for (int k = total - warmup; k < total; ++k) o.push_back(task(k, true));
        break;
      }
    }
  }
  return order;
}

std::vector<int> in_flight(const std::vector<std::vector<PipelineTask>>& order) {
  std::vector<int> out;
  for (const std::vector<PipelineTask>& o : order) {
    int held = 0, most = 0;
    for (const PipelineTask& t : o) {
      held += t.backward ? -1 : 1;
      most = std::max(most, held);
    }
    out.push_back(most);
  }
  return out;
}

PipelineRun run_pipeline(const std::vector<std::vector<PipelineTask>>& order,
                         const PipelineTimes& times) {
  const auto p = static_cast<int>(order.size());
  const auto stages = static_cast<int>(times.forward_us.size());
  CS_ASSERT(p > 0 && stages % p == 0, "stages are chunks of every rank");
  int micro = 0;
  for (const auto& o : order) {
    for (const PipelineTask& t : o) micro = std::max(micro, t.micro + 1);
  }
  const auto cell = [micro](int stage, int mb) {
    return static_cast<std::size_t>(stage) * static_cast<std::size_t>(micro) +
           static_cast<std::size_t>(mb);
  };
  const std::size_t cells = static_cast<std::size_t>(stages) * static_cast<std::size_t>(micro);
  std::vector<double> forward_end(cells, -1), backward_end(cells, -1);
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<double> free(static_cast<std::size_t>(p), 0);
  PipelineRun run;
  run.busy_us.assign(static_cast<std::size_t>(p), 0);
  // Each pass runs every task whose input is known; a schedule that deadlocks leaves one unrun.
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      while (next[ri] < order[ri].size()) {
        const PipelineTask& t = order[ri][next[ri]];
        const int s = t.chunk * p + r;
        double ready = 0;
        if (!t.backward && s > 0) {
          const double e = forward_end[cell(s - 1, t.micro)];
          if (e < 0) break;
          ready = e + times.send_us[static_cast<std::size_t>(s - 1)];
        } else if (t.backward && s + 1 < stages) {
          const double e = backward_end[cell(s + 1, t.micro)];
          if (e < 0) break;
          ready = e + times.send_us[static_cast<std::size_t>(s)];
        } else if (t.backward) {
          ready = forward_end[cell(s, t.micro)];
          if (ready < 0) break;
        }
        const double us =
            (t.backward ? times.backward_us : times.forward_us)[static_cast<std::size_t>(s)];
        const double start = std::max(free[ri], ready);
        const double end = start + us;
        (t.backward ? backward_end : forward_end)[cell(s, t.micro)] = end;
        free[ri] = end;
        run.busy_us[ri] += us;
        run.spans.push_back({r, t, start, end});
        ++next[ri];
        progress = true;
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    CS_ASSERT(next[static_cast<std::size_t>(r)] == order[static_cast<std::size_t>(r)].size(),
              "a pipeline schedule that deadlocks");
  }
  run.end_us = free;
  for (int r = 0; r < p; ++r) {
    const auto ri = static_cast<std::size_t>(r);
    const double tail = ri < times.tail_us.size() ? times.tail_us[ri] : 0.0;
    if (free[ri] + tail > run.step_us) {
      run.step_us = free[ri] + tail;
      run.critical_rank = r;
    }
  }
  const auto c = static_cast<std::size_t>(run.critical_rank);
  run.bubble_us = run.end_us[c] - run.busy_us[c];
  return run;
}

std::pair<int, int> stage_layers(const Model& model, int stages, int stage,
                                 const std::vector<int>& blocks_per_stage) {
  const auto blocks = static_cast<int>(model.blocks.size());
  std::vector<int> counts = blocks_per_stage;
  if (counts.empty()) {
    for (int s = 0; s < stages; ++s) counts.push_back(blocks / stages + (s < blocks % stages));
  }
  int first_block = 0;
  for (int s = 0; s < stage; ++s) first_block += counts[static_cast<std::size_t>(s)];
  const int end_block = first_block + counts[static_cast<std::size_t>(stage)];
  const int first =
      stage == 0 ? 0 : model.blocks[static_cast<std::size_t>(first_block)].first_layer;
  const int end = stage + 1 == stages
                      ? static_cast<int>(model.layers.size())
                      : model.blocks[static_cast<std::size_t>(end_block)].first_layer;
  return {first, end};
}

namespace {
constexpr const char* kRootLayer = "(root)";
}  // namespace

Model stage_model(const Model& model, int first_layer, int end_layer) {
  Model out;
  out.name = model.name;
  out.source = model.source;
  out.file = model.file;
  out.settings = model.settings;
  out.recorded_at = model.recorded_at;
  out.measurements = model.measurements;
  out.layers.assign(model.layers.begin() + first_layer, model.layers.begin() + end_layer);
  // An export lists the root module first and records under it what the root saves for backward:
  // the loss's inputs (the logits). The loss runs on the last stage, so those bytes are held there.
  const bool last = end_layer == static_cast<int>(model.layers.size());
  for (Layer& layer : out.layers) {
    if (layer.name == kRootLayer && layer.block < 0 && !last) layer.activation_bytes = 0;
  }
  // (The stage's last layer takes them: its ops and parameters stay with the first stage, and the
  // stage keeps the layers of [first_layer, end_layer), which TP's collectives index.)
  if (last && first_layer > 0 && !out.layers.empty()) {
    for (int i = 0; i < first_layer; ++i) {
      const Layer& root = model.layers[static_cast<std::size_t>(i)];
      if (root.name != kRootLayer || root.block >= 0) continue;
      Layer& holder = out.layers.back();
      if (holder.activation_bytes == 0) {
        holder.activation_scale_batch = root.activation_scale_batch;
        holder.activation_scale_seq = root.activation_scale_seq;
      }
      holder.activation_bytes += root.activation_bytes;
    }
  }
  int first_block = -1;
  for (const Layer& layer : out.layers) {
    if (layer.block >= 0 && first_block < 0) first_block = layer.block;
  }
  for (Layer& layer : out.layers) {
    if (layer.block >= 0) layer.block -= first_block;
  }
  for (const Block& b : model.blocks) {
    if (b.first_layer >= first_layer && b.first_layer < end_layer) {
      Block copy = b;
      copy.first_layer -= first_layer;
      out.blocks.push_back(copy);
    }
  }
  // A measurement's whole-model figures carried to the stage by its share.
  const double params = model.param_count();
  const double share = params > 0 ? out.param_count() / params : 0.0;
  for (Measurement& m : out.measurements) {
    int fwd_all = 0, bwd_all = 0, fwd = 0, bwd = 0;
    for (std::size_t i = 0; i < model.layers.size(); ++i) {
      const auto it = model.layers[i].measured.find(m.id);
      if (it == model.layers[i].measured.end()) continue;
      const bool here = static_cast<int>(i) >= first_layer && static_cast<int>(i) < end_layer;
      fwd_all += it->second.forward_kernels;
      bwd_all += it->second.backward_kernels;
      if (here) {
        fwd += it->second.forward_kernels;
        bwd += it->second.backward_kernels;
      }
    }
    if (fwd_all > 0) m.host_forward_us *= static_cast<double>(fwd) / fwd_all;
    if (bwd_all > 0) m.host_backward_us *= static_cast<double>(bwd) / bwd_all;
    m.optimizer_us *= share;
    m.host_optimizer_us *= share;
    m.optimizer_kernels = std::max(1, static_cast<int>(std::lround(m.optimizer_kernels * share)));
  }
  return out;
}

}  // namespace cs::workload
