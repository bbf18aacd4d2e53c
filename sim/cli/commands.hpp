// The subcommands of the clustersim program; each lives in its own cmd_<name>.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "plan/candidates.hpp"

namespace cs::cli {

void add_topo_command(CLI::App& app);
void add_coll_command(CLI::App& app);
void add_flows_command(CLI::App& app);
void add_fit_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_discover_command(CLI::App& app);
void add_ddp_command(CLI::App& app);
void add_scale_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_compare_command(CLI::App& app);

// plan --plot: cost against time per topology, the Pareto front a line (plan_plot.cpp).
void plot_plan(const std::vector<plan::Candidate>& cs, const std::string& title,
               const std::string& path);

// compare on a file of published training runs (compare_runs.cpp).
void run_compare_runs(const std::string& file, bool csv, bool json);

}  // namespace cs::cli
