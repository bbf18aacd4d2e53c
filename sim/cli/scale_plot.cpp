// The plot is a gnuplot script and its data in a temporary folder; gnuplot writes the image beside
// the target, which is then renamed into place.
#include "cli/scale_plot.hpp"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.hpp"

namespace cs::cli {
namespace {

namespace fs = std::filesystem;

std::string terminal_for(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".png") return "pngcairo size 1400,560 font 'sans,11'";
  if (ext == ".svg") return "svg size 1400,560 font 'sans,11'";
  throw InputError("key 'plot': '" + path + "' is neither .png nor .svg");
}

// gnuplot's own quoting: a single-quoted string doubles its quotes.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

}  // namespace

void plot_scaling(const std::vector<PlotPoint>& points, const std::string& model,
                  const std::string& path) {
  const std::string terminal = terminal_for(path);
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    throw InputError("key 'plot': gnuplot is not installed (Debian: apt-get install gnuplot-nox)");
  }
  const fs::path dir = fs::temp_directory_path() /
                       ("clustersim-plot-" + std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(dir);
  std::map<std::string, std::vector<const PlotPoint*>> by_topology;
  std::vector<std::string> order;
  for (const PlotPoint& p : points) {
    if (by_topology[p.topology].empty()) order.push_back(p.topology);
    by_topology[p.topology].push_back(&p);
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    std::ofstream data(dir / ("t" + std::to_string(i) + ".dat"));
    for (const PlotPoint* p : by_topology[order[i]]) {
      data << p->gpus << " " << p->samples_per_s << " " << 100 * p->efficiency << "\n";
    }
  }
  const fs::path target(path);
  const fs::path partial = target.parent_path() / ("." + target.filename().string() + ".partial");
  std::ostringstream g;
  g << "set terminal " << terminal << "\n"
    << "set output " << quoted(partial.string()) << "\n"
    << "set multiplot layout 1,2 title " << quoted("clustersim scale: " + model + ", DDP") << "\n"
    << "set logscale x 2\nset logscale y 10\nset grid\nset key top left\n"
    << "set xlabel 'GPUs'\nset ylabel 'samples/s (all GPUs)'\nset title 'throughput'\n"
    << "plot ";
  for (std::size_t i = 0; i < order.size(); ++i) {
    g << (i ? ", " : "") << quoted((dir / ("t" + std::to_string(i) + ".dat")).string())
      << " using 1:2 with linespoints lw 2 pt 7 title " << quoted(order[i]);
  }
  g << "\nunset logscale y\nset key bottom left\nset ylabel 'scaling efficiency (%)'\n"
    << "set title 'throughput per GPU against the smallest count'\nset yrange [*:102]\nplot ";
  for (std::size_t i = 0; i < order.size(); ++i) {
    g << (i ? ", " : "") << quoted((dir / ("t" + std::to_string(i) + ".dat")).string())
      << " using 1:3 with linespoints lw 2 pt 7 title " << quoted(order[i]);
  }
  g << "\nunset multiplot\n";
  std::ofstream(dir / "plot.gp") << g.str();
  const std::string command =
      "gnuplot " + quoted((dir / "plot.gp").string()) + " 2>" + quoted((dir / "err").string());
  const int status = std::system(command.c_str());
  std::string first_error;
  std::getline(std::ifstream(dir / "err"), first_error);
  fs::remove_all(dir);
  if (status != 0 || !fs::exists(partial)) {
    fs::remove(partial);
    throw InputError("key 'plot': gnuplot failed: " + first_error);
  }
  fs::rename(partial, target);
}

}  // namespace cs::cli
