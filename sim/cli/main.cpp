// clustersim's entry point: parses the command line and turns errors into exit codes
// (0 success, 2 bad input or usage, 3 internal error). Library code never exits.
#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"clustersim: a discrete-event simulator of multi-GPU clusters"};
  app.require_subcommand(1);
  cs::cli::add_topo_command(app);
  cs::cli::add_coll_command(app);
  cs::cli::add_flows_command(app);
  cs::cli::add_fit_command(app);
  cs::cli::add_validate_command(app);
  cs::cli::add_discover_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const cs::InputError& e) {
    std::cerr << "clustersim: error: " << e.what() << "\n";
    return 2;
  } catch (const cs::UnitError& e) {
    std::cerr << "clustersim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "clustersim: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
