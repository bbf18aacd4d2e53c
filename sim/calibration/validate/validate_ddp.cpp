// Errors of predicted DDP steps, the DDP overhead per run, and their summary.
#include "calibration/validate/validate_ddp.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "calibration/fit/fit_least_squares.hpp"
#include "core/error.hpp"

namespace cs::cal {
namespace {

// The overhead of `ddp` over `plain`, two rows of one run.
DdpOverhead overhead_of(const DdpStepRow& ddp, const DdpStepRow& plain, bool calibrated) {
  DdpOverhead o;
  o.measured_ms = ddp.measured_ms - plain.measured_ms;
  o.prior_ms = ddp.prior_ms - plain.prior_ms;
  if (calibrated) o.calibrated_ms = *ddp.calibrated_ms - *plain.calibrated_ms;
  // Relative to |measured|: a DDP step measured faster than the plain one (noise on a short
  // step) keeps the sign meaning "predicted more overhead than measured".
  if (o.measured_ms != 0) {
    const double scale = std::fabs(o.measured_ms);
    o.prior_error = (o.prior_ms - o.measured_ms) / scale;
    if (o.calibrated_ms) o.calibrated_error = (*o.calibrated_ms - o.measured_ms) / scale;
  }
  return o;
}

// The prior and calibrated errors of one kind of figure for a row, where it has them.
struct Errors {
  std::optional<double> prior;
  std::optional<double> calibrated;
};
using ErrorsOf = std::function<Errors(const DdpStepRow&)>;

DdpSummaryRow summarise(const std::vector<DdpStepRow>& rows, const std::string& what,
                        const std::string& gpus, const ErrorsOf& errors_of) {
  std::vector<double> prior;
  std::vector<double> calibrated;
  for (const DdpStepRow& r : rows) {
    if ((gpus == "1" && r.gpus != 1) || (gpus == ">=2" && r.gpus < 2)) continue;
    const Errors e = errors_of(r);
    if (e.prior) prior.push_back(*e.prior);
    if (e.calibrated) calibrated.push_back(*e.calibrated);
  }
  const auto worst = [](const std::vector<double>& v) {
    double w = 0;
    for (const double e : v) w = std::max(w, std::fabs(e));
    return w;
  };
  DdpSummaryRow s{
      what,         gpus,        static_cast<int>(prior.size()), median_abs(prior), worst(prior),
      std::nullopt, std::nullopt};
  if (!calibrated.empty()) {
    s.calibrated_median = median_abs(calibrated);
    s.calibrated_worst = worst(calibrated);
  }
  return s;
}

}  // namespace

DdpValidation validate_ddp_steps(std::vector<DdpStepRow> rows, bool calibrated) {
  for (DdpStepRow& r : rows) {
    CS_ASSERT(r.measured_ms > 0, r.file + " " + r.variant + ": no measured time");
    CS_ASSERT(!calibrated || r.calibrated_ms, r.file + " " + r.variant + ": no calibrated time");
    r.prior_error = relative_error(r.prior_ms, r.measured_ms);
    if (calibrated) r.calibrated_error = relative_error(*r.calibrated_ms, r.measured_ms);
    if (r.measured_peak_bytes)
      r.memory_error = relative_error(r.predicted_peak_bytes, *r.measured_peak_bytes);
  }
  for (DdpStepRow& r : rows) {
    if (r.plain) continue;
    const auto plain = std::find_if(rows.begin(), rows.end(), [&r](const DdpStepRow& p) {
      return p.plain && p.data == r.data && p.file == r.file && p.modifiers == r.modifiers;
    });
    if (plain != rows.end()) r.overhead = overhead_of(r, *plain, calibrated);
  }
  DdpValidation v;
  // The step groups hold variants without modifiers; "ac step" and "accum step" the others.
  const auto step_if = [](bool in) {
    return [in](const DdpStepRow& r) {
      return in ? Errors{r.prior_error, r.calibrated_error} : Errors{};
    };
  };
  const auto bare = [](const DdpStepRow& r) { return r.modifiers.empty(); };
  const ErrorsOf ddp_step = [&](const DdpStepRow& r) {
    return step_if(!r.plain && !r.fsdp && bare(r))(r);
  };
  const ErrorsOf fsdp_step = [&](const DdpStepRow& r) { return step_if(r.fsdp && bare(r))(r); };
  const ErrorsOf plain_step = [&](const DdpStepRow& r) { return step_if(r.plain && bare(r))(r); };
  const ErrorsOf ac_step = [&](const DdpStepRow& r) {
    return step_if(r.activation_checkpointing)(r);
  };
  const ErrorsOf accum_step = [&](const DdpStepRow& r) { return step_if(r.grad_accum > 1)(r); };
  const ErrorsOf overhead = [&](const DdpStepRow& r) {
    return r.overhead && !r.fsdp && bare(r)
               ? Errors{r.overhead->prior_error, r.overhead->calibrated_error}
               : Errors{};
  };
  const ErrorsOf fsdp_overhead = [&](const DdpStepRow& r) {
    return r.overhead && r.fsdp && bare(r)
               ? Errors{r.overhead->prior_error, r.overhead->calibrated_error}
               : Errors{};
  };
  for (const auto& [what, errors_of] :
       {std::pair{"ddp step", ddp_step}, std::pair{"plain step", plain_step},
        std::pair{"ddp overhead", overhead}}) {
    for (const char* gpus : {"1", ">=2", "all"})
      v.summary.push_back(summarise(rows, what, gpus, errors_of));
  }
  // FSDP's groups only where FSDP2 runs were given (the DDP tables stay as they were).
  if (std::any_of(rows.begin(), rows.end(), [](const DdpStepRow& r) { return r.fsdp; })) {
    for (const auto& [what, errors_of] :
         {std::pair{"fsdp step", fsdp_step}, std::pair{"fsdp overhead", fsdp_overhead}}) {
      for (const char* gpus : {"1", ">=2", "all"})
        v.summary.push_back(summarise(rows, what, gpus, errors_of));
    }
  }
  // Activation checkpointing and accumulation (every strategy), where runs had them.
  for (const auto& [what, errors_of] :
       {std::pair{"ac step", ac_step}, std::pair{"accum step", accum_step}}) {
    if (std::none_of(rows.begin(), rows.end(),
                     [&f = errors_of](const DdpStepRow& r) { return f(r).prior.has_value(); }))
      continue;
    for (const char* gpus : {"1", ">=2", "all"})
      v.summary.push_back(summarise(rows, what, gpus, errors_of));
  }
  // Peak memory per strategy, every variant (modifiers included), where runs recorded it.
  const auto memory_if = [](bool in) {
    return [in](const DdpStepRow& r) { return in ? Errors{r.memory_error, {}} : Errors{}; };
  };
  const ErrorsOf plain_memory = [&](const DdpStepRow& r) { return memory_if(r.plain)(r); };
  const ErrorsOf ddp_memory = [&](const DdpStepRow& r) {
    return memory_if(!r.plain && !r.fsdp)(r);
  };
  const ErrorsOf fsdp_memory = [&](const DdpStepRow& r) { return memory_if(r.fsdp)(r); };
  for (const auto& [what, errors_of] :
       {std::pair{"plain memory", plain_memory}, std::pair{"ddp memory", ddp_memory},
        std::pair{"fsdp memory", fsdp_memory}}) {
    if (std::none_of(rows.begin(), rows.end(),
                     [&f = errors_of](const DdpStepRow& r) { return f(r).prior.has_value(); }))
      continue;
    for (const char* gpus : {"1", ">=2", "all"})
      v.summary.push_back(summarise(rows, what, gpus, errors_of));
  }
  v.rows = std::move(rows);
  return v;
}

DdpStepRow measured_row(const std::string& data, const DdpStepFile& f, const DdpVariant& v) {
  DdpStepRow row;
  row.data = data;
  row.file = f.file;
  row.model = f.model;
  row.batch = f.batch;
  row.gpus = f.world_size;
  row.variant = v.name;
  row.plain = v.plain();
  row.fsdp = v.fsdp;
  row.modifiers = v.modifiers();
  row.activation_checkpointing = v.activation_checkpointing;
  row.grad_accum = v.grad_accum;
  row.measured_ms = v.step_ms;
  row.measured_peak_bytes = v.peak_allocated_bytes;
  return row;
}

}  // namespace cs::cal
