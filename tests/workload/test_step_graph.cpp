// The step graph and its executor on graphs written by hand, timelines derived by hand: two
// streams, an event between them, a collective overlapping compute.
#include <doctest/doctest.h>

#include "workload/step/step_graph.hpp"

namespace cs::workload {
namespace {

Task kernel(const char* name, double gpu_us, double host_us) {
  Task t;
  t.name = name;
  t.gpu_us = gpu_us;
  t.kernels = 1;
  t.host_us_per_kernel = host_us;
  return t;
}

// Beside 32 CTAs of communication a compute kernel takes twice as long; a CTA moves at most 5 GB/s
// beside compute, so a collective that needs 10 GB/s per CTA also takes twice as long.
OverlapSlowdown curve() {
  OverlapSlowdown o{{32}, {2.0}, {2.0}};
  o.comm_cap_compute_gbps = 5;
  o.comm_cap_memory_gbps = 5;
  return o;
}

CollectiveKernel allreduce(double alone_us) {
  CollectiveKernel k;
  k.name = "allreduce";
  k.alone_us = alone_us;
  k.ctas = 32;
  k.rate_gbps = 10;
  return k;
}

// A (100 us) on the compute stream; an all-reduce of `allreduce_us` on the communication stream
// after an event recorded behind A; B (100 us) on the compute stream; D (10 us) after an event
// recorded behind the all-reduce. The host takes 10 us per kernel launch and 5 us for the
// collective's; the GPU leaves 1 us between queued kernels of a stream.
Execution two_streams(double allreduce_us) {
  StepGraph g;
  const StreamId c = g.add_stream("compute", StreamKind::compute);
  const StreamId n = g.add_stream("comm", StreamKind::communication);
  g.kernels(c, kernel("A", 100, 10), "forward");
  g.collective(n, allreduce(allreduce_us), 5, {g.record(c)});
  g.kernels(c, kernel("B", 100, 10), "forward");
  g.kernels(c, kernel("D", 10, 10), "optimizer", {g.record(n)});
  return execute(g, 1, curve());
}

TEST_CASE("step graph: a collective behind an event overlaps the next compute kernel") {
  // Host: A launched at 10, the all-reduce at 15, B at 25, D at 35. A runs 10..110 alone. The
  // all-reduce waits for A's event (110) and runs alone 110..111 (39 us left); B starts at 111
  // (A's end and the 1 us gap). Side by side both run at half speed: the all-reduce's 39 us take
  // 78 (ends 189) while B does 39 of its 100; B's last 61 run alone, to 250. D's event fired at
  // 189, so D starts after the gap, 251..261.
  const Execution x = two_streams(40);
  REQUIRE(x.nodes.size() == 4);
  CHECK(x.nodes[0].start == ps_from_seconds(10e-6));
  CHECK(x.nodes[0].end == ps_from_seconds(110e-6));
  CHECK(x.nodes[1].ready == ps_from_seconds(110e-6));
  CHECK(x.nodes[1].start == ps_from_seconds(110e-6));
  CHECK(x.nodes[1].end == ps_from_seconds(189e-6));
  CHECK(x.nodes[2].start == ps_from_seconds(111e-6));
  CHECK(x.nodes[2].end == ps_from_seconds(250e-6));
  CHECK(x.nodes[3].ready == ps_from_seconds(189e-6));
  CHECK(x.nodes[3].start == ps_from_seconds(251e-6));
  CHECK(x.step_us == doctest::Approx(261));
  // The compute stream's 261 us: 210 of kernels alone, 2 of gaps (before B and D), B's 39 of
  // slowdown, 10 waiting for the host's first launch, nothing waiting on the all-reduce.
  CHECK(x.gpu_us_of("forward") == doctest::Approx(200));
  CHECK(x.gpu_us_of("optimizer") == doctest::Approx(10));
  CHECK(x.kernel_gaps_us == doctest::Approx(2));
  CHECK(x.overlap_slowdown_us == doctest::Approx(39));
  CHECK(x.host_bound_idle_us == doctest::Approx(10));
  CHECK(x.exposed_communication_us == doctest::Approx(0));
  CHECK(x.communication_us == doctest::Approx(79));
  CHECK(x.communication_slowdown_us == doctest::Approx(39));
  CHECK(x.host_busy_us == doctest::Approx(35));
}

TEST_CASE("step graph: a kernel that waits on a longer collective exposes it") {
  // The all-reduce takes 200 us alone: 1 us alone (199 left), then beside B at half speed until
  // B ends at 111 + 200 = 311 (100 done, 99 left), then alone to 410. D waits for its event:
  // 410..420. Of D's 99 us of idle, 1 is the gap and 98 exposed communication.
  const Execution x = two_streams(200);
  CHECK(x.nodes[2].end == ps_from_seconds(311e-6));
  CHECK(x.nodes[1].end == ps_from_seconds(410e-6));
  CHECK(x.nodes[3].start == ps_from_seconds(410e-6));
  CHECK(x.step_us == doctest::Approx(420));
  CHECK(x.exposed_communication_us == doctest::Approx(98));
  CHECK(x.overlap_slowdown_us == doctest::Approx(100));
  CHECK(x.kernel_gaps_us == doctest::Approx(2));
  CHECK(x.host_bound_idle_us == doctest::Approx(10));
  CHECK(x.communication_us == doctest::Approx(300));
  // The sum: 210 + 2 + 100 + 98 + 10.
  CHECK(x.step_us == doctest::Approx(210 + x.kernel_gaps_us + x.overlap_slowdown_us +
                                     x.exposed_communication_us + x.host_bound_idle_us));
}

TEST_CASE("step graph: a collective that waits for nothing runs beside the kernel before it") {
  // FSDP's prefetch: the all-gather is issued after A without an event, so it starts at its
  // launch (15) while A runs. A: 10..15 alone (95 left); both at half speed, the all-gather's 40
  // take 80 (ends 95) while A does 40; A's last 55 alone end at 150.
  StepGraph g;
  const StreamId c = g.add_stream("compute", StreamKind::compute);
  const StreamId n = g.add_stream("all-gather", StreamKind::communication);
  g.kernels(c, kernel("A", 100, 10), "forward");
  g.collective(n, allreduce(40), 5);
  const Execution x = execute(g, 1, curve());
  CHECK(x.nodes[1].start == ps_from_seconds(15e-6));
  CHECK(x.nodes[1].end == ps_from_seconds(95e-6));
  CHECK(x.nodes[0].end == ps_from_seconds(150e-6));
  CHECK(x.step_us == doctest::Approx(150));
  CHECK(x.lanes == std::vector<std::string>{"host thread", "compute", "all-gather"});
}

TEST_CASE("step graph: two communication streams beside one kernel add their CTAs") {
  // Two collectives of 16 CTAs each, launched right after A, start with it at 10: beside 32 CTAs
  // in all A runs at half speed.
  // Each collective needs 10 GB/s per CTA against a 5 GB/s cap: half speed too. Both 40 us
  // collectives end at 10 + 80 = 90; A has done 40, its last 60 alone end at 150.
  StepGraph g;
  const StreamId c = g.add_stream("compute", StreamKind::compute);
  const StreamId n1 = g.add_stream("all-gather", StreamKind::communication);
  const StreamId n2 = g.add_stream("reduce-scatter", StreamKind::communication);
  CollectiveKernel k = allreduce(40);
  k.ctas = 16;
  g.kernels(c, kernel("A", 100, 10), "backward");
  g.collective(n1, k, 0);
  g.collective(n2, k, 0);
  const Execution x = execute(g, 1, curve());
  CHECK(x.nodes[1].end == ps_from_seconds(90e-6));
  CHECK(x.nodes[2].end == ps_from_seconds(90e-6));
  CHECK(x.nodes[0].end == ps_from_seconds(150e-6));
  CHECK(x.communication_us == doctest::Approx(160));
}

TEST_CASE("step graph: a blocking copy holds the host until the stream has run it") {
  // The host waits for A (10..110), spends 5 us of its own (already past), and the copy runs
  // 110..130 on the copy engine; B is launched at 140 and starts then.
  StepGraph g;
  const StreamId c = g.add_stream("compute", StreamKind::compute);
  g.kernels(c, kernel("A", 100, 10), "forward");
  g.blocking_copy(c, "copy", "input", 20, 5);
  g.kernels(c, kernel("B", 10, 10), "forward");
  const Execution x = execute(g, 1, curve());
  CHECK(x.nodes[1].start == ps_from_seconds(110e-6));
  CHECK(x.nodes[1].end == ps_from_seconds(130e-6));
  CHECK(x.nodes[2].start == ps_from_seconds(140e-6));
  CHECK(x.step_us == doctest::Approx(150));
  CHECK(x.gpu_us_of("input") == doctest::Approx(20));
}

}  // namespace
}  // namespace cs::workload
