// The plot is a gnuplot script and its data in a temporary folder; gnuplot writes the image beside
// the target, which is then renamed into place.
#include "cli/output/scale_plot.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "cli/output/gnuplot.hpp"

namespace cs::cli {

void plot_scaling(const std::vector<PlotPoint>& points, const std::string& model,
                  const std::string& path) {
  GnuplotJob job("--plot", path);
  std::map<std::string, std::vector<const PlotPoint*>> by_topology;
  std::vector<std::string> order;
  for (const PlotPoint& p : points) {
    if (by_topology[p.topology].empty()) order.push_back(p.topology);
    by_topology[p.topology].push_back(&p);
  }
  // The efficiency axis reaches 2 points past the highest point, and at least to 102 %: a larger
  // cluster can pass 100 % (scale_efficiency.hpp), and a point past the axis would not be drawn.
  double highest = 0;
  for (const PlotPoint& p : points) highest = std::max(highest, 100 * p.efficiency);
  const int top = std::max(102, static_cast<int>(std::ceil(highest)) + 2);
  std::vector<std::string> files;
  for (std::size_t i = 0; i < order.size(); ++i) {
    std::ostringstream data;
    for (const PlotPoint* p : by_topology[order[i]]) {
      data << p->gpus << " " << p->samples_per_s << " " << 100 * p->efficiency << "\n";
    }
    files.push_back(job.data("t" + std::to_string(i) + ".dat", data.str()));
  }
  std::ostringstream g;
  g << job.header(1400, 560) << "set multiplot layout 1,2 title "
    << gnuplot_quoted("clustersim scale: " + model + ", DDP")
    << "\nset logscale x 2\nset logscale y 10\nset grid\nset key top left\n"
    << "set xlabel 'GPUs'\nset ylabel 'samples/s (all GPUs)'\nset title 'throughput'\n"
    << "plot ";
  for (std::size_t i = 0; i < order.size(); ++i) {
    g << (i ? ", " : "") << files[i] << " using 1:2 with linespoints lw 2 pt 7 title "
      << gnuplot_quoted(order[i]);
  }
  g << "\nunset logscale y\nset key bottom left\nset ylabel 'scaling efficiency (%)'\n"
    << "set title 'throughput per GPU against the smallest count'\nset yrange [*:" << top
    << "]\nplot ";
  for (std::size_t i = 0; i < order.size(); ++i) {
    g << (i ? ", " : "") << files[i] << " using 1:3 with linespoints lw 2 pt 7 title "
      << gnuplot_quoted(order[i]);
  }
  g << "\nunset multiplot\n";
  job.run(g.str());
}

}  // namespace cs::cli
