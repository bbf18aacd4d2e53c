// clustersim's entry point: parses the command line and turns errors into exit codes
// (0 success, 2 bad input or usage, 3 internal error), each error one line on standard error.
// Library code never exits.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "cli/output/version.hpp"
#include "core/error.hpp"

namespace {

// CLI11's messages may span lines; an error is one line.
std::string one_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

// The subcommand names, for the message about a word that is none of them.
std::string command_names(CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

int run(int argc, char** argv) {
  CLI::App app{"clustersim: a discrete-event simulator of multi-GPU clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "clustersim " + cs::cli::version_text(),
                       "Print the version, the git commit it was built from and the build type");
  app.footer(
      "Which GPUs: every command takes every GPU of the topology file, or of the cluster --nodes "
      "resizes it to, unless a flag picks fewer (coll -n, scale --gpus); except ddp, which runs "
      "on one GPU unless -n or --nodes says otherwise.");
  cs::cli::add_topo_command(app);
  cs::cli::add_coll_command(app);
  cs::cli::add_flows_command(app);
  cs::cli::add_fit_command(app);
  cs::cli::add_validate_command(app);
  cs::cli::add_discover_command(app);
  cs::cli::add_ddp_command(app);
  cs::cli::add_scale_command(app);
  cs::cli::add_plan_command(app);
  cs::cli::add_sweep_command(app);
  cs::cli::add_compare_command(app);
  try {
    // CLI11 would call a misspelt command "A subcommand is required"; name it instead.
    if (argc > 1 && argv[1][0] != '-') {
      const std::string word = argv[1];
      const auto known =
          app.get_subcommands([&](const CLI::App* s) { return s->check_name(word); });
      if (known.empty()) {
        std::cerr << "clustersim: error: unknown command '" << word
                  << "'; valid: " << command_names(app) << "\n";
        return 2;
      }
    }
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "clustersim: error: " << one_line(e.what()) << " (see --help)\n";
    return 2;
  } catch (const cs::InputError& e) {
    std::cerr << "clustersim: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const cs::UnitError& e) {
    std::cerr << "clustersim: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "clustersim: internal error: " << one_line(e.what()) << "\n";
    return 3;
  }
  // A full disk behind standard output is a failed run, not a success. (A closed pipe ends the
  // process before this, by SIGPIPE, which is a failure too.)
  if (!std::cout.flush()) {
    std::cerr << "clustersim: error: standard output: the write failed (disk full?)\n";
    return 2;
  }
  return 0;
}

}  // namespace

// Everything, building the command line included, inside one handler: nothing escapes main.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (...) {
    std::fputs("clustersim: internal error: an exception escaped while starting\n", stderr);
    return 3;
  }
}
