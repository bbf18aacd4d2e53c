// Tensor and pipeline parallelism (workload/parallel/, system/model_parallel.cpp): a TP=2 MLP
// block's split and collectives, its step timeline, 1F1B and GPipe over 4 stages and 8
// micro-batches, and the placement of TP4 x PP2 x DP2 on two 8-GPU servers; every figure by hand.
#include <doctest/doctest.h>

#include <string>

#include "core/error.hpp"
#include "support/step_tasks.hpp"
#include "system/model_parallel.hpp"
#include "topology/loader.hpp"
#include "workload/ddp/step_sim.hpp"
#include "workload/parallel/pipeline.hpp"
#include "workload/parallel/tensor_parallel.hpp"

namespace cs::workload {
namespace {

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;

Op gemm(double m, double n, double k, Dim tokens) {
  Op op;
  op.kind = OpKind::gemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.grows_batch = tokens;
  op.grows_seq = tokens;
  return op;
}

Op memory(double bytes) {
  Op op;
  op.kind = OpKind::memory;
  op.bytes = bytes;
  return op;
}

Layer layer(const char* name, std::int64_t params) {
  Layer l;
  l.name = name;
  l.block = 0;
  if (params > 0) l.params.push_back({"weight", params, Dtype::fp32});
  return l;
}

// One MLP block of hidden 1024 and FFN 4096 at batch 2 x seq 512 (1024 tokens): a norm, the
// column-parallel up projection, the activation, the row-parallel down projection. The GEMMs
// as PyTorch records a Linear's: forward (tokens, out, in), weight gradient (out, in, tokens),
// input gradient (tokens, in, out).
Model mlp_block() {
  Model m;
  m.name = "mlp-block";
  m.file = "mlp-block.yaml";
  m.settings.batch = 2;
  m.settings.seq = 512;
  m.recorded_at.batch = 2;
  m.recorded_at.seq = 512;
  Layer ln = layer("h.0.ln", 1024);
  ln.forward = {memory(4 << 20)};
  ln.activation_bytes = 4 << 20;
  Layer fc = layer("h.0.mlp.c_fc", 1024 * 4096);
  fc.forward = {gemm(1024, 4096, 1024, Dim::m)};
  fc.backward = {gemm(4096, 1024, 1024, Dim::k), gemm(1024, 1024, 4096, Dim::m)};
  fc.activation_bytes = 2 << 20;
  Layer act = layer("h.0.mlp.act", 0);
  act.forward = {memory(16 << 20)};
  act.activation_bytes = 8 << 20;
  Layer proj = layer("h.0.mlp.c_proj", 4096 * 1024);
  proj.forward = {gemm(1024, 1024, 4096, Dim::m)};
  m.layers = {ln, fc, act, proj};
  m.blocks = {Block{"h.0", -1, 0, 0, 4}};
  return m;
}

TrainingOptions options_of(const Model& m) {
  return default_options(m);
}

TEST_CASE("TP=2 splits an MLP block as Megatron: column up, row down, one all-reduce each way") {
  const Model m = mlp_block();
  const TensorParallel tp = plan_tensor_parallel(m, 2, false, options_of(m));
  CHECK(tp.hidden == 1024);
  CHECK(tp.roles[0] == TpRole::replicated);
  CHECK(tp.roles[1] == TpRole::column);
  CHECK(tp.roles[2] == TpRole::split);  // between the column and the row layer
  CHECK(tp.roles[3] == TpRole::row);
  REQUIRE(tp.collectives.size() == 2);
  // Forward: the down projection's partial output summed, 1024 tokens x 1024 in bf16 = 2 MiB.
  REQUIRE(tp.layers[3].forward_after.size() == 1);
  const TpCollective& fwd = tp.collectives[static_cast<std::size_t>(tp.layers[3].forward_after[0])];
  CHECK(fwd.op == TpOp::all_reduce);
  CHECK(fwd.bytes == 1024.0 * 1024 * 2);
  // Backward: the up projection's input gradient, in the fp32 residual stream of autocast: 4 MiB.
  REQUIRE(tp.layers[1].backward_after.size() == 1);
  const TpCollective& bwd =
      tp.collectives[static_cast<std::size_t>(tp.layers[1].backward_after[0])];
  CHECK(bwd.op == TpOp::all_reduce);
  CHECK(bwd.bytes == 1024.0 * 1024 * 4);
  // PyTorch's DTensor dispatch: one parameter tensor in each Linear, none in the activation.
  CHECK(tp.forward_host_us[1] == kDtensorForwardUsPerTensor);
  CHECK(tp.backward_host_us[3] == kDtensorBackwardUsPerTensor);
  CHECK(tp.forward_host_us[2] == 0);
  CHECK(tp.forward_host_us[0] == 0);
  // Megatron: bf16 gradients, no DTensor.
  const TensorParallel meg = plan_tensor_parallel(m, 2, false, options_of(m), true);
  CHECK(meg.collectives[1].bytes == 1024.0 * 1024 * 2);
  CHECK(meg.forward_host_us[1] == 0);
}

TEST_CASE("TP=2 shards the GEMMs' non-hidden dimension, the parameters and the activations") {
  const Model m = mlp_block();
  const TensorParallel tp = plan_tensor_parallel(m, 2, false, options_of(m));
  const Model r = shard_model(m, tp, "H200-SXM-141GB", GpuCompute{});
  // Up projection: forward out 4096 -> 2048; weight gradient out 4096 -> 2048; input gradient's
  // contraction (out) 4096 -> 2048.
  CHECK(r.layers[1].forward[0].n == 2048);
  CHECK(r.layers[1].forward[0].k == 1024);
  CHECK(r.layers[1].backward[0].m == 2048);
  CHECK(r.layers[1].backward[1].k == 2048);
  // Down projection: forward contraction (in) 4096 -> 2048.
  CHECK(r.layers[3].forward[0].k == 2048);
  CHECK(r.layers[3].forward[0].n == 1024);
  CHECK(r.layers[1].params[0].elements == 2048 * 1024);
  CHECK(r.layers[3].params[0].elements == 2048 * 1024);
  CHECK(r.layers[2].forward[0].bytes == 8 << 20);  // the activation on its half
  CHECK(r.layers[2].activation_bytes == 4 << 20);
  CHECK(r.layers[0].forward[0].bytes == 4 << 20);  // the norm whole on every rank
  CHECK(r.layers[0].params[0].elements == 1024);
  // Sequence parallelism: the norm on half the tokens.
  const TensorParallel sp = plan_tensor_parallel(m, 2, true, options_of(m));
  const Model s = shard_model(m, sp, "H200-SXM-141GB", GpuCompute{});
  CHECK(s.layers[0].forward[0].bytes == 2 << 20);
  CHECK(s.layers[0].activation_bytes == 2 << 20);
}

TEST_CASE(
    "TP=2 with sequence parallelism: all-gather before the column, reduce-scatter after "
    "the row, and their mirrors in backward") {
  const Model m = mlp_block();
  const TensorParallel tp = plan_tensor_parallel(m, 2, true, options_of(m));
  REQUIRE(tp.collectives.size() == 4);
  const auto at = [&tp](int id) { return tp.collectives[static_cast<std::size_t>(id)]; };
  REQUIRE(tp.layers[1].forward_before.size() == 1);
  CHECK(at(tp.layers[1].forward_before[0]).op == TpOp::all_gather);
  CHECK(at(tp.layers[1].forward_before[0]).bytes == 1024.0 * 1024 * 4);  // the fp32 norm output
  CHECK(at(tp.layers[3].forward_after[0]).op == TpOp::reduce_scatter);
  CHECK(at(tp.layers[3].forward_after[0]).bytes == 1024.0 * 1024 * 2);
  CHECK(at(tp.layers[3].backward_before[0]).op == TpOp::all_gather);
  CHECK(at(tp.layers[3].backward_before[0]).bytes == 1024.0 * 1024 * 2);
  CHECK(at(tp.layers[1].backward_after[0]).op == TpOp::reduce_scatter);
  CHECK(at(tp.layers[1].backward_after[0]).bytes == 1024.0 * 1024 * 4);
}

TEST_CASE("TP=2 block timeline: the compute stream waits for each all-reduce") {
  // Forward 10, 20, 5, 20 us; backward 10, 40, 10, 40 us; optimizer 12; all-reduces 7 us alone,
  // no host cost, no kernel gap, no slowdown beside communication.
  StepPlan plan;
  const double fwd[] = {10, 20, 5, 20}, bwd[] = {10, 40, 10, 40};
  for (int i = 0; i < 4; ++i) {
    LayerTasks t;
    t.forward = test::kernel("f", fwd[i]);
    t.backward = test::kernel("b", bwd[i]);
    plan.layers.push_back(t);
  }
  plan.optimizer = test::kernel("opt", 12);
  plan.overlap = {{32}, {1.0}, {1.0}};
  CollectiveKernel ar;
  ar.name = "TP all-reduce";
  ar.alone_us = 7;
  plan.layer_collectives.resize(4);
  plan.layer_collectives[3].forward_after = {ar};
  plan.layer_collectives[1].backward_after = {ar};
  const StepResult r = simulate_step(plan);
  // Forward 55 + 7; backward 40 + 10 + 40 + 7 + 10; optimizer 12: 181 us, 14 of it waiting.
  CHECK(r.breakdown.step_us == doctest::Approx(181));
  CHECK(r.breakdown.exposed_communication_us == doctest::Approx(14));
  CHECK(r.breakdown.communication_us == doctest::Approx(14));
}

TEST_CASE("TP refuses heads it does not divide, naming --tp") {
  Model m = mlp_block();
  Op attention;
  attention.kind = OpKind::attention;
  attention.heads = 6;
  m.layers[2].forward.push_back(attention);
  CHECK_THROWS_WITH_AS(plan_tensor_parallel(m, 4, false, options_of(m)),
                       doctest::Contains("flag '--tp': 4 does not divide the 6 attention heads"),
                       InputError);
}

// Four stages of equal forward 1 us and backward 2 us, no sends, no tail.
PipelineTimes even_stages(int stages) {
  PipelineTimes t;
  t.forward_us.assign(static_cast<std::size_t>(stages), 1.0);
  t.backward_us.assign(static_cast<std::size_t>(stages), 2.0);
  t.send_us.assign(static_cast<std::size_t>(stages - 1), 0.0);
  return t;
}

TEST_CASE("1F1B over 4 stages and 8 micro-batches: the order, the timeline and the bubble") {
  const auto order = pipeline_order(PipelineSchedule::one_f_one_b, 4, 1, 8);
  // Rank 0: three warm-up forwards, then one forward and one backward in turn, then backwards.
  std::string first;
  for (const PipelineTask& t : order[0])
    first += (t.backward ? "B" : "F") + std::to_string(t.micro) + " ";
  CHECK(first == "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7 ");
  // The last rank: forward and backward in turn from the start.
  CHECK(order[3][0].backward == false);
  CHECK(order[3][1].backward == true);
  const PipelineRun run = run_pipeline(order, even_stages(4));
  // (m + p - 1) slots of forward plus backward: 11 x 3 = 33 us; each rank busy 8 x 3 = 24, so
  // the bubble is 9 us, (p - 1) / (m + p - 1) = 3 / 11 of the step.
  CHECK(run.step_us == doctest::Approx(33));
  CHECK(run.bubble_us == doctest::Approx(9));
  CHECK(run.bubble_us / run.step_us == doctest::Approx(3.0 / 11));
  // Rank 3's first forward starts when the three before it have run: at 3 us.
  CHECK(run.spans[0].rank == 0);
  for (const PipelineSpan& s : run.spans) {
    if (s.rank == 3 && !s.task.backward && s.task.micro == 0) CHECK(s.start_us == 3);
  }
  // Activations held: rank 0 up to 4 micro-batches, the last rank 1.
  const std::vector<int> held = in_flight(order);
  CHECK(held == std::vector<int>{4, 3, 2, 1});
}

TEST_CASE("GPipe takes as long as 1F1B on even stages and holds every micro-batch") {
  const auto order = pipeline_order(PipelineSchedule::gpipe, 4, 1, 8);
  CHECK(run_pipeline(order, even_stages(4)).step_us == doctest::Approx(33));
  CHECK(in_flight(order) == std::vector<int>{8, 8, 8, 8});
  // A send of 0.5 us on each boundary: the fill and the drain cross 3 boundaries each way.
  PipelineTimes t = even_stages(4);
  t.send_us.assign(3, 0.5);
  CHECK(run_pipeline(order, t).step_us == doctest::Approx(33 + 3));
}

TEST_CASE("Interleaved 1F1B runs every chunk's micro-batches and needs groups of the ranks") {
  const auto order = pipeline_order(PipelineSchedule::interleaved, 2, 2, 4);
  for (const auto& o : order) CHECK(o.size() == 16);  // 4 micro-batches x 2 chunks x F and B
  // Two chunks of half the work per stage: a shorter bubble than one chunk of the whole.
  PipelineTimes half;
  half.forward_us.assign(4, 0.5);
  half.backward_us.assign(4, 1.0);
  half.send_us.assign(3, 0.0);
  PipelineTimes whole = even_stages(2);
  const double interleaved = run_pipeline(order, half).step_us;
  const double plain =
      run_pipeline(pipeline_order(PipelineSchedule::one_f_one_b, 2, 1, 4), whole).step_us;
  // 1F1B: (4 + 1) x 3 = 15 us; interleaved: 12 us of work per rank and a bubble of (p - 1) / v
  // slots of 3 us = 1.5 us.
  CHECK(plain == doctest::Approx(15));
  CHECK(interleaved == doctest::Approx(13.5));
  CHECK_THROWS_AS(pipeline_order(PipelineSchedule::interleaved, 4, 2, 6), InputError);
}

TEST_CASE("TP4 x PP2 x DP2 on two 8-GPU servers: TP and DP on NVLink, the pipeline across") {
  const topo::Cluster cluster = topo::load_cluster(kRoot + "/topologies/dgx-h100-2node.yaml");
  std::vector<int> ranks;
  for (int r = 0; r < 16; ++r) ranks.push_back(r);
  ModelParallelOptions o;
  o.tp = 4;
  o.pp = 2;
  const system::ParallelGroups g = system::place_ranks(cluster, ranks, o);
  CHECK(g.dp == 2);
  CHECK(g.tp_group == std::vector<int>{0, 1, 2, 3});
  CHECK(g.dp_group == std::vector<int>{0, 4});
  CHECK(g.pipeline == std::vector<int>{0, 8});
  CHECK(g.tp_servers == 1);
  const auto server = [&cluster](int r) {
    return cluster.nodes[static_cast<std::size_t>(cluster.ranks[static_cast<std::size_t>(r)])]
        .server;
  };
  CHECK(server(0) == server(4));  // DP inside a server
  CHECK(server(0) != server(8));  // the pipeline's two stages on the two servers
  // TP outermost: its group strides over both servers.
  o.order = "dp,pp,tp";
  const system::ParallelGroups wide = system::place_ranks(cluster, ranks, o);
  CHECK(wide.tp_group == std::vector<int>{0, 4, 8, 12});
  CHECK(wide.tp_servers == 2);
  o.tp = 3;
  CHECK_THROWS_WITH_AS(system::place_ranks(cluster, ranks, o), doctest::Contains("flag '--tp'"),
                       InputError);
  o.tp = 4;
  o.order = "tp,pp";
  CHECK_THROWS_WITH_AS(system::place_ranks(cluster, ranks, o), doctest::Contains("flag '--order'"),
                       InputError);
}

}  // namespace
}  // namespace cs::workload
