// Capacity planning's arithmetic, each expected number derived by hand in the comments.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "plan/candidates.hpp"

using namespace cs::plan;

namespace {

Candidate priced(const std::string& name, double hours, double usd) {
  Candidate c;
  c.topology = name;
  c.hours = hours;
  c.usd = usd;
  return c;
}

// 2 servers of 8 GPUs, without a price; per-GPU batch 4 of 1,024 tokens; 0.5 s per step on 16
// GPUs, 0.4 s on one.
Candidate two_servers() {
  Candidate c;
  c.topology = "t";
  c.servers = 2;
  c.gpus = 16;
  c.batch_per_gpu = 4;
  c.seq = 1024;
  c.step_s = 0.5;
  c.single_gpu_step_s = 0.4;
  return c;
}

}  // namespace

TEST_CASE("a model-parallel candidate counts its data-parallel ranks, not its GPUs") {
  // two_servers() as TP 4 x PP 2: 16 / 8 = 2 data-parallel ranks of 4 samples each.
  Candidate c = two_servers();
  c.model_parallel = 8;
  c.single_gpu_step_s = 0;  // no single-GPU step under TP x PP
  evaluate(c, {TargetKind::tokens, 1e9}, {});
  // 2 x 4 = 8 samples per 0.5 s = 16 samples/s = 16,384 tokens/s.
  CHECK(c.samples_per_s == doctest::Approx(16));
  CHECK(c.tokens_per_s == doctest::Approx(16384));
  CHECK(c.efficiency == 0);  // unknown
  // 1e9 / (8 x 1,024 = 8,192 tokens per step) = 122,070.3 -> 122,071 steps.
  CHECK(c.steps == 122071);
}

TEST_CASE("time, cost and throughput of one candidate") {
  // two_servers() at 10 USD/h a server.
  Candidate c = two_servers();
  c.usd_per_hour = 20;
  SUBCASE("tokens") {
    evaluate(c, {TargetKind::tokens, 1e9}, {});
    // 16 x 4 = 64 samples per step over 0.5 s = 128 samples/s = 131,072 tokens/s.
    CHECK(c.samples_per_s == doctest::Approx(128));
    CHECK(c.tokens_per_s == doctest::Approx(131072));
    // Per GPU 128 / 16 = 8 samples/s against 4 / 0.4 = 10 on one GPU.
    CHECK(c.efficiency == doctest::Approx(0.8));
    // 1e9 / (64 x 1,024 = 65,536 tokens per step) = 15,258.8 -> 15,259 whole steps.
    CHECK(c.steps == 15259);
    // 15,259 x 0.5 s = 7,629.5 s = 2.119306 h; x 20 USD/h = 42.386 USD.
    CHECK(c.hours == doctest::Approx(7629.5 / 3600));
    CHECK(c.usd == doctest::Approx(7629.5 / 3600 * 20));
    // 20 USD/h = 1/180 USD/s over 131,072 tokens/s, per million tokens: 0.0423855.
    CHECK(c.usd_per_million == doctest::Approx(20.0 / 3600 / 131072 * 1e6));
    CHECK(c.over_limit.empty());
  }
  SUBCASE("samples and steps") {
    evaluate(c, {TargetKind::samples, 640}, {});
    CHECK(c.steps == 10);  // 640 / 64
    CHECK(c.usd_per_million == doctest::Approx(20.0 / 3600 / 128 * 1e6));
    Candidate d = c;
    evaluate(d, {TargetKind::steps, 10}, {});
    CHECK(d.hours == doctest::Approx(5.0 / 3600));
  }
  SUBCASE("limits mark, they do not drop") {
    Candidate slow = c;
    evaluate(slow, {TargetKind::tokens, 1e9}, {2.0, 0});  // 2.119 h > 2 h
    CHECK(slow.over_limit == "over --max-hours");
    Candidate dear = c;
    evaluate(dear, {TargetKind::tokens, 1e9}, {0, 40.0});  // 42.39 USD > 40
    CHECK(dear.over_limit == "over --max-cost");
  }
  SUBCASE("tokens need a sequence length") {
    c.seq = 0;
    evaluate(c, {TargetKind::tokens, 1e9}, {});
    CHECK(c.why_not.find("no sequence length") != std::string::npos);
  }
}

TEST_CASE("the Pareto front: no other candidate both faster and cheaper") {
  // (hours, USD): A (1, 10); B (2, 5); C (2, 12) loses to A on both; D (3, 5) costs what B costs
  // but takes longer; E (4, 1); F (0.5, 100) is fastest but over the limit, so it does not push A
  // off the front; G cannot run.
  std::vector<Candidate> cs = {priced("A", 1, 10), priced("B", 2, 5), priced("C", 2, 12),
                               priced("D", 3, 5),  priced("E", 4, 1), priced("F", 0.5, 100),
                               priced("G", 0, 0)};
  cs[5].over_limit = "over --max-cost";
  cs[6].why_not = "does not fit";
  mark_pareto(cs);
  std::string front;
  for (const Candidate& c : cs) front += c.pareto ? c.topology : "";
  CHECK(front == "ABE");
  // Cheapest first, equal cost by time; what cannot run goes last.
  sort_by_cost(cs);
  std::string order;
  for (const Candidate& c : cs) order += c.topology;
  CHECK(order == "EBDACFG");
}

TEST_CASE("two identical candidates are both on the front") {
  std::vector<Candidate> cs = {priced("A", 1, 10), priced("B", 1, 10), priced("C", 2, 20)};
  mark_pareto(cs);
  CHECK(cs[0].pareto);
  CHECK(cs[1].pareto);
  CHECK_FALSE(cs[2].pareto);
}

TEST_CASE("a candidate without a price has its time, not its cost") {
  // two_servers(), whose price is unknown: 16 GPUs x 4 samples of 1,024 tokens, 0.5 s a step.
  Candidate c = two_servers();
  c.cost_unknown = "no price for server template 't'";
  evaluate(c, {TargetKind::tokens, 1e9}, {0, 1.0});
  CHECK(c.why_not.empty());
  // As with a price: 15,259 steps of 0.5 s = 2.119306 h at 131,072 tokens/s, efficiency 0.8.
  CHECK(c.steps == 15259);
  CHECK(c.hours == doctest::Approx(7629.5 / 3600));
  CHECK(c.tokens_per_s == doctest::Approx(131072));
  CHECK(c.efficiency == doctest::Approx(0.8));
  // No cost, so --max-cost (1 USD here) cannot mark it.
  CHECK(c.usd == 0);
  CHECK(c.usd_per_million == 0);
  CHECK(c.over_limit.empty());

  // Neither on the front (no cost to compare) nor among the priced: after them by time, before
  // what cannot run. U (1 h) is faster than V (3 h); A and B are priced.
  std::vector<Candidate> cs = {priced("V", 3, 0), priced("A", 2, 10), priced("G", 0, 0),
                               priced("U", 1, 0), priced("B", 4, 5)};
  cs[0].cost_unknown = "no price";
  cs[2].why_not = "does not fit";
  cs[3].cost_unknown = "no price";
  mark_pareto(cs);
  std::string front;
  for (const Candidate& k : cs) front += k.pareto ? k.topology : "";
  CHECK(front == "AB");
  sort_by_cost(cs);
  std::string order;
  for (const Candidate& k : cs) order += k.topology;
  CHECK(order == "BAUVG");
}
