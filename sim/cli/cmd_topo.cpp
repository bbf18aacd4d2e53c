// `clustersim topo FILE`: placeholder wiring until the summary lands (issue 2, item 6).
#include "cli/commands.hpp"
#include "topology/loader.hpp"

namespace cs::cli {

void add_topo_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("topo", "Summarize a topology file");
  auto file = std::make_shared<std::string>();
  cmd->add_option("file", *file, "Topology YAML file")->required();
  cmd->callback([file] { (void)topo::load_cluster(*file); });
}

}  // namespace cs::cli
