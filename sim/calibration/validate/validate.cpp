// validate: predictions of every point, then the error rows over the held-out ones.
#include "calibration/validate/validate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>

#include "calibration/fit/fit_least_squares.hpp"
#include "calibration/fit/fit_links.hpp"
#include "calibration/fit/fit_nccl.hpp"
#include "calibration/predict/predictor.hpp"

namespace cs::cal {
namespace {

// "RING/LL", and "/22" channels where NCCL logged its channels (`with_channels`).
std::string choice_name(const coll::TunerChoice& c, bool with_channels) {
  std::string name = std::string(c.p2p ? "P2P" : coll::to_string(c.estimate.algo)) + "/" +
                     coll::to_string(c.estimate.proto);
  if (with_channels) name += "/" + std::to_string(c.n_channels);
  return name;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Calibrated predictors, one per collective: each op runs with its own fitted constants.
class CalibratedPredictors {
 public:
  CalibratedPredictors(const topo::Cluster& cluster, const Calibration& cal)
      : cluster_(cluster), cal_(cal) {}
  Predictor& for_op(const std::string& op) {
    auto& p = by_op_[op];
    if (!p) {
      const NcclFit& fit = op.empty() ? cal_.nccl : nccl_fit_for(cal_, op);
      topo::Cluster cluster = cluster_;
      apply_links(cal_, cluster);
      apply_op_links(fit, cluster);
      p = std::make_unique<Predictor>(std::move(cluster), fit.params);
    }
    return *p;
  }

 private:
  const topo::Cluster& cluster_;
  const Calibration& cal_;
  std::map<std::string, std::unique_ptr<Predictor>> by_op_;
};

void predict_nccl(const Measurements& data, const Calibration& cal, Predictor& prior,
                  CalibratedPredictors& calibrated, std::vector<Prediction>& out) {
  for (const NcclPoint& p : data.nccl) {
    const auto op = coll::parse_op(p.op);
    const auto options = forced_options(p);
    if (!op || !options || p.n_ranks < 1 || p.n_ranks > prior.gpu_count()) continue;
    Prediction r;
    r.kind = "nccl";
    r.group = p.op;
    r.n_ranks = p.n_ranks;
    r.config = p.config();
    r.bytes = p.bytes;
    r.held_out = cal.split.held_out(p.n_ranks, p.bytes, nccl_curve_gap(data, p));
    r.measured_us = p.time_us;
    const coll::CollectiveResult a = prior.collective(*op, p.n_ranks, p.bytes, *options);
    // The calibrated communicator keeps NCCL's choice and only times it (coll::choose_timed).
    const coll::CollectiveResult b =
        calibrated.for_op(p.op).collective(*op, p.n_ranks, p.bytes, *options);
    // The simulator times the GPUs; a host-paced record also pays the host's launches, which
    // the calibration knows as its floor (where it fitted one for the collective), and the
    // priors as the measured prior floor.
    const bool paced = p.timing == NcclTiming::host_paced;
    r.prior_us = paced ? std::max(prior_host_floor_us(p.n_ranks), a.time_us()) : a.time_us();
    const HostFloors& floors = nccl_fit_for(cal, p.op).host_floors;
    r.calibrated_us =
        paced ? floors.host_paced_us(p.config(), p.n_ranks, b.time_us()) : b.time_us();
    const bool logged_channels = p.channels > 0;
    r.prior_choice = choice_name(a.choice, logged_channels);
    r.calibrated_choice = choice_name(b.choice, logged_channels);
    if (!p.algo.empty() && !p.proto.empty()) {
      r.nccl_choice = upper(p.algo) + "/" + upper(p.proto);
      if (logged_channels) r.nccl_choice += "/" + std::to_string(p.channels);
    }
    out.push_back(r);
  }
}

void predict_copies(const Measurements& data, const Calibration& cal, const Predictor& prior,
                    const Predictor& calibrated, std::vector<Prediction>& out) {
  std::map<std::string, int> gaps;
  for (const CopyPoint& c : data.copies) {
    if (std::max(c.src, c.dst) >= prior.gpu_count()) continue;
    const std::string path = copy_path(c);
    if (!gaps.count(path)) gaps[path] = copy_gap(data, path);
    Prediction r;
    r.kind = "copy";
    r.group = path;
    r.bytes = c.bytes;
    r.held_out = cal.split.size_held_out(c.bytes, gaps[path]);
    r.measured_us = c.time_us;
    r.prior_us = prior.copy_us(c);
    r.calibrated_us = calibrated.copy_us(c);
    // The d2d fit's intercept is the host's issue interval of back-to-back copies (apply_links).
    if (const CopyFit* d2d = find_copy_fit(cal.copies, "d2d"); d2d && path == "d2d")
      r.calibrated_us = std::max(d2d->latency_us, r.calibrated_us);
    out.push_back(r);
  }
}

ErrorRow row_of(const std::vector<const Prediction*>& points) {
  ErrorRow row;
  const Prediction& first = *points.front();
  row.kind = first.kind;
  row.group = first.group;
  row.n_ranks = first.n_ranks;
  row.config = first.config;
  std::vector<double> prior;
  std::vector<double> calibrated;
  for (const Prediction* p : points) {
    prior.push_back(relative_error(p->prior_us, p->measured_us));
    calibrated.push_back(relative_error(p->calibrated_us, p->measured_us));
    row.prior_worst = std::max(row.prior_worst, std::fabs(prior.back()));
    row.calibrated_worst = std::max(row.calibrated_worst, std::fabs(calibrated.back()));
    if (p->nccl_choice.empty()) continue;
    ++row.choice_points;
    row.prior_choice_matches += p->prior_choice == p->nccl_choice;
    row.calibrated_choice_matches += p->calibrated_choice == p->nccl_choice;
  }
  row.points = static_cast<int>(points.size());
  row.prior_median = median_abs(prior);
  row.calibrated_median = median_abs(calibrated);
  return row;
}

}  // namespace

Validation validate(const Measurements& data, const topo::Cluster& cluster,
                    const Calibration& calibration) {
  Validation v;
  v.machine = calibration.machine;
  v.topology = cluster.name;
  v.split = calibration.split.describe();
  Predictor prior(cluster, coll::nccl_priors(coll::arch_from_gpu_name(data.node.gpu_name)));
  CalibratedPredictors calibrated(cluster, calibration);
  predict_nccl(data, calibration, prior, calibrated, v.predictions);
  predict_copies(data, calibration, prior, calibrated.for_op(""), v.predictions);

  // Rows keyed so that NCCL comes first, ops and configs in a fixed order.
  using Key = std::tuple<std::string, std::string, int, std::string>;
  std::map<Key, std::vector<const Prediction*>> rows;
  std::map<std::pair<std::string, std::string>, std::vector<const Prediction*>> summary;
  for (const Prediction& p : v.predictions) {
    if (!p.held_out) continue;
    rows[{p.kind == "nccl" ? "0nccl" : "1copy", p.group, p.n_ranks, p.config}].push_back(&p);
    if (p.kind == "copy" || p.config == "default")
      summary[{p.kind == "nccl" ? "0nccl" : "1copy", p.group}].push_back(&p);
  }
  for (const auto& [key, points] : rows) v.rows.push_back(row_of(points));
  for (const auto& [key, points] : summary) {
    ErrorRow r = row_of(points);
    r.n_ranks = 0;
    r.config = r.kind == "nccl" ? "default" : "";
    v.summary.push_back(r);
  }
  return v;
}

}  // namespace cs::cal
