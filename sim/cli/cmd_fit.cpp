// `clustersim fit DATA --topology T -o FILE`: fits NCCL's constants, the copy paths and the
// compute side of one machine from its measurement files and writes one calibration file
// (atomically). The topology is the measured machine's: NCCL's channel search runs on its links.
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include "calibration/fit/fit.hpp"
#include "calibration/fit/fit_nccl.hpp"
#include "calibration/measurements/timing_select.hpp"
#include "calibration/validate/machine_match.hpp"
#include "cli/commands.hpp"
#include "cli/output/output_guard.hpp"
#include "core/error.hpp"
#include "topology/loader.hpp"

namespace cs::cli {
namespace {

struct FitArgs {
  std::string data;
  std::string topology;
  std::string out;
  std::string holdout_ranks = "auto";
  std::string holdout_sizes = "odd";
  std::string timing = "host_paced";
};

// "auto" = the default split's rank counts; "none" = none; else a list "3" or "3,5".
cal::Split split_from(const FitArgs& a, const cal::Measurements& data) {
  cal::Split split = cal::default_split(cal::nccl_rank_counts(data));
  split.sizes = cal::parse_size_holdout(a.holdout_sizes, "holdout-sizes");
  if (a.holdout_ranks == "auto") return split;
  split.holdout_ranks.clear();
  if (a.holdout_ranks == "none") return split;
  std::stringstream in(a.holdout_ranks);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 6)
      throw InputError("key 'holdout-ranks': '" + a.holdout_ranks +
                       "' is not auto, none or a list of rank counts like 3 or 3,5");
    split.holdout_ranks.push_back(std::stoi(item));
  }
  // A rank count that was not measured holds nothing out; holding out every one leaves no NCCL
  // record to fit.
  const std::vector<int> measured = cal::nccl_rank_counts(data);
  std::string list;
  for (const int n : measured) list += (list.empty() ? "" : ", ") + std::to_string(n);
  for (const int n : split.holdout_ranks) {
    if (std::find(measured.begin(), measured.end(), n) == measured.end())
      throw InputError("key 'holdout-ranks': " + std::to_string(n) +
                       " ranks were not measured; measured: " + (list.empty() ? "none" : list));
  }
  if (!measured.empty() && std::all_of(measured.begin(), measured.end(), [&](int n) {
        return std::find(split.holdout_ranks.begin(), split.holdout_ranks.end(), n) !=
               split.holdout_ranks.end();
      }))
    throw InputError("key 'holdout-ranks': '" + a.holdout_ranks +
                     "' holds out every measured rank count (" + list +
                     "), which leaves no NCCL record to fit");
  return split;
}

void run_fit(const FitArgs& a) {
  const cal::NcclTiming timing = cal::nccl_timing_option(a.timing, "timing");
  cal::Measurements data = cal::read_measurements(a.data);
  std::vector<NamedPath> inputs = measurement_inputs(data, FittedFiles::replaceable);
  inputs.push_back({"--topology file", a.topology});
  refuse_outputs_over_inputs({{"--out", a.out}}, inputs);
  const cal::TimingSelection selected = cal::select_nccl_timing(data, timing);
  const cal::Split split = split_from(a, data);
  const topo::Cluster cluster = topo::load_cluster(a.topology);
  cal::check_measurements_match(data, cluster);
  const topo::ClusterGraph graph(cluster);
  cal::Calibration c =
      cal::fit_calibration(data, split, graph, cal::base_name(a.data), cal::base_name(a.topology));
  c.timing = timing;
  cal::save_calibration(c, a.out);
  std::cout << "fitted " << data.nccl.size() << " NCCL, " << data.copies.size() << " copy, "
            << data.gemms.size() << " GEMM points of " << c.machine << " (" << split.describe()
            << ") -> " << a.out << "\n  " << selected.describe() << "\n";
  for (const cal::NcclConfigFit& f : c.nccl.configs) {
    std::cout << "  " << coll::to_string(f.algo) << "/" << coll::to_string(f.proto) << ": base "
              << f.base_us << " us, hop " << f.hop_us << " us, busBw " << f.bus_GBps
              << " GB/s, rms error " << 100 * f.rms_rel_error << "% over " << f.points
              << " points\n";
  }
  // The host floors of the default runs (each forced configuration has its own in the file).
  for (const cal::NcclFit& f : c.nccl_by_op) {
    std::string line;
    for (const cal::HostFloor& h : f.host_floors.curves) {
      if (h.config != "default") continue;
      std::ostringstream one;
      one << " " << h.n_ranks << (h.n_ranks == 1 ? " rank " : " ranks ") << h.floor_us << " us";
      line += one.str();
    }
    if (!line.empty()) std::cout << "  host floor, " << f.op << ":" << line << "\n";
  }
}

}  // namespace

void add_fit_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("fit", "Fit a calibration file from a machine's measurements");
  auto args = std::make_shared<FitArgs>();
  cmd->add_option("data", args->data, "Folder of measurement JSON files (calibrate/data/<machine>)")
      ->required();
  cmd->add_option("--topology,-t", args->topology, "The measured machine's topology YAML")
      ->required();
  cmd->add_option("-o,--out", args->out, "Calibration file to write")->required();
  cmd->add_option("--holdout-ranks", args->holdout_ranks,
                  "NCCL rank counts kept out of the fit: auto (those between the smallest and "
                  "largest), none, or a list like 3");
  cmd->add_option("--holdout-sizes", args->holdout_sizes,
                  "Size-ladder steps kept out of the fit: odd, even or none");
  cmd->add_option("--timing", args->timing,
                  "NCCL records to fit: host_paced (nccl-tests' convention, the default) or gated "
                  "(host_paced where a size has no gated record)");
  cmd->callback([args] { run_fit(*args); });
}

}  // namespace cs::cli
