// --nodes: how many servers a topology file's cluster gets on the command line ("4", or a list
// "1,2,4,8" that a command runs in turn). The loader does the resizing (topology/loader.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace cs::cli {

// "4" -> {4}; "1,2,4" -> {1, 2, 4} in the order given; empty -> {0} (0: as the file says).
// Throws InputError naming --nodes for anything but integers from 1 to 1,000,000.
std::vector<int> parse_node_counts(const std::string& text);

// Adds the --nodes option to a command; `list` says whether it takes several counts.
void add_nodes_option(CLI::App* cmd, std::string& text, bool list);

}  // namespace cs::cli
