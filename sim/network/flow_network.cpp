// Flows over max-min shared channels. A start or a drain marks the sharing dirty and schedules one
// re-solve at the current time, so every change made at one instant (a collective starting
// hundreds of flows) costs one solve. After a solve only flows whose rate changed are touched:
// their remaining bytes are advanced at the old rate and their drain time moves in the drain heap.
// The event queue holds one wakeup for the earliest drain, stamped with a version: a wakeup made
// stale by an earlier one is ignored, and one that comes early (its flows slowed down) re-arms.
// So the queue never fills with one stale event per flow per rate change, whatever the churn.
#include "network/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "network/transfer_time.hpp"

namespace cs::net {
namespace {

// How many changed flows ahead apply_update() fetches a flow's record.
constexpr std::size_t kFetchAhead = 8;

}  // namespace

FlowNetwork::FlowNetwork(EventQueue& queue, const topo::ClusterGraph& graph)
    : FlowNetwork(queue, graph.capacities_Bps()) {}

FlowNetwork::FlowNetwork(EventQueue& queue, std::vector<double> capacity_Bps)
    : queue_(queue), sharing_([&] {
        for (std::size_t c = 0; c < capacity_Bps.size(); ++c) {
          // The loader rejects links without bandwidth; a flow on one would never finish.
          CS_ASSERT(capacity_Bps[c] > 0, "channel " + std::to_string(c) + " has no bandwidth");
        }
        return std::move(capacity_Bps);
      }()) {
  accounts_.resize(static_cast<std::size_t>(sharing_.channel_count()));
}

FlowId FlowNetwork::start(FlowSpec spec, Completion on_complete) {
  CS_ASSERT(std::isfinite(spec.bytes) && spec.bytes >= 0,
            "flow of " + std::to_string(spec.bytes) + " bytes");
  CS_ASSERT(spec.max_rate_Bps > 0, "flow capped at a rate of " + std::to_string(spec.max_rate_Bps));
  CS_ASSERT(spec.latency >= 0, "flow with negative latency");
  const FlowId id = next_id_++;
  if (spec.bytes == 0) {  // nothing to drain: done after its latency
    finish(std::move(on_complete), queue_.now() + spec.latency);
    return id;
  }
  const auto index = sharing_.add(spec.channels, spec.max_rate_Bps);
  if (static_cast<std::size_t>(index) >= flows_.size())
    flows_.resize(static_cast<std::size_t>(index) + 1);
  Flow& flow = flows_[static_cast<std::size_t>(index)];
  flow.id = id;
  flow.remaining_bytes = spec.bytes;
  flow.last_update = queue_.now();
  flow.rate_Bps = 0;
  flow.max_rate_Bps = spec.max_rate_Bps;
  flow.latency = spec.latency;
  flow.active = true;
  flow.on_complete = std::move(on_complete);
  request_update();
  return id;
}

void FlowNetwork::request_update() {
  if (update_pending_) return;
  update_pending_ = true;
  queue_.schedule(queue_.now(), [this] { apply_update(); });
}

void FlowNetwork::apply_update() {
  update_pending_ = false;
  const TimePs now = queue_.now();
  const auto touched = sharing_.update();
  ++rate_updates_;
  flows_resolved_ += touched.size();

  for (topo::ChannelId c : sharing_.updated_channels()) {
    ChannelAccount& account = accounts_[static_cast<std::size_t>(c)];
    if (account.load_Bps > 0) account.stats.busy_ps += now - account.last_change;
    account.load_Bps = sharing_.load_Bps(c);
    account.last_change = now;
    account.stats.peak_utilization =
        std::max(account.stats.peak_utilization, account.load_Bps / sharing_.capacity_Bps(c));
  }

  const auto changed = sharing_.changed_flows();
  for (std::size_t i = 0; i < changed.size(); ++i) {
    // The records of changed flows lie at random places, and a drain heap update is too long for
    // the processor to reach the next record by itself: fetch it a few flows ahead.
    if (i + kFetchAhead < changed.size()) {
      __builtin_prefetch(&flows_[static_cast<std::size_t>(changed[i + kFetchAhead])]);
    }
    const auto index = changed[i];
    Flow& flow = flows_[static_cast<std::size_t>(index)];
    const double rate = sharing_.rate_Bps(index);
    const bool scheduled = flow.rate_Bps > 0;
    if (scheduled && rate == flow.rate_Bps) continue;  // its drain time still holds
    if (scheduled) {
      const double moved =
          std::min(flow.remaining_bytes, flow.rate_Bps * seconds_from_ps(now - flow.last_update));
      flow.remaining_bytes -= moved;
      credit(index, moved);
    }
    flow.last_update = now;
    flow.rate_Bps = rate;
    ++rate_changes_;
    drains_.set(index, now + transfer_time_ps(flow.remaining_bytes, rate));
  }
  arm_wakeup();
  if (observer_) observer_();
}

void FlowNetwork::arm_wakeup() {
  if (drains_.empty()) return;
  const TimePs next = drains_.top_time();
  if (wakeup_armed_ && wakeup_at_ <= next) return;  // an earlier wakeup re-arms when it fires
  wakeup_armed_ = true;
  wakeup_at_ = next;
  const std::uint64_t version = ++wakeup_version_;
  queue_.schedule(next, [this, version] { on_wakeup(version); });
}

void FlowNetwork::on_wakeup(std::uint64_t version) {
  if (version != wakeup_version_) return;  // superseded by an earlier wakeup
  wakeup_armed_ = false;
  while (!drains_.empty() && drains_.top_time() <= queue_.now()) {
    const auto index = drains_.top();
    drains_.erase(index);
    on_drained(index);
  }
  arm_wakeup();
}

void FlowNetwork::on_drained(MaxMinSharing::FlowIndex index) {
  Flow& flow = flows_[static_cast<std::size_t>(index)];
  flow.active = false;
  credit(index, flow.remaining_bytes);  // its drain time has come: the rest has arrived
  flow.remaining_bytes = 0;
  flow.last_update = queue_.now();
  sharing_.remove(index);
  request_update();
  finish(std::move(flow.on_complete), queue_.now() + flow.latency);
  flow.on_complete = nullptr;
}

void FlowNetwork::credit(MaxMinSharing::FlowIndex index, double bytes) {
  for (const ChannelUse& use : sharing_.uses(index)) {
    accounts_[static_cast<std::size_t>(use.channel)].stats.bytes += use.multiplicity * bytes;
  }
}

void FlowNetwork::finish(Completion on_complete, TimePs at) {
  queue_.schedule(at, [callback = std::move(on_complete), at] {
    if (callback) callback(at);
  });
}

double FlowNetwork::moved_since_update(const Flow& flow) const {
  if (!(flow.rate_Bps > 0)) return 0;  // not yet solved
  return std::min(flow.remaining_bytes,
                  flow.rate_Bps * seconds_from_ps(queue_.now() - flow.last_update));
}

std::vector<FlowNetwork::ActiveFlow> FlowNetwork::active_flows() const {
  std::vector<ActiveFlow> active;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    const Flow& flow = flows_[i];
    if (!flow.active) continue;
    active.push_back(ActiveFlow{flow.id, static_cast<MaxMinSharing::FlowIndex>(i), flow.rate_Bps,
                                flow.max_rate_Bps,
                                flow.remaining_bytes - moved_since_update(flow)});
  }
  return active;
}

ChannelStats FlowNetwork::channel_stats(topo::ChannelId channel) const {
  const ChannelAccount& account = accounts_[static_cast<std::size_t>(channel)];
  ChannelStats stats = account.stats;
  if (account.load_Bps > 0) stats.busy_ps += queue_.now() - account.last_change;
  for (const auto& member : sharing_.members(channel)) {
    stats.bytes +=
        member.multiplicity * moved_since_update(flows_[static_cast<std::size_t>(member.flow)]);
  }
  return stats;
}

}  // namespace cs::net
