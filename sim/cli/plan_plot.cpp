// `clustersim plan --plot`: cost against time, drawn by gnuplot (cli/output/gnuplot.hpp).
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/output/gnuplot.hpp"
#include "plan/candidates.hpp"

namespace cs::cli {

// Cost against time: a series of points per topology, each labelled with its server count, and
// the Pareto front as a line through its candidates.
void plot_plan(const std::vector<plan::Candidate>& cs, const std::string& title,
               const std::string& path) {
  GnuplotJob job("--plot", path);
  std::vector<std::string> order;
  std::map<std::string, std::ostringstream> series;
  std::vector<const plan::Candidate*> on_front;
  for (const plan::Candidate& c : cs) {
    if (!c.why_not.empty() || !c.cost_unknown.empty()) continue;  // no cost to draw
    if (!series.count(c.topology)) order.push_back(c.topology);
    series[c.topology] << c.hours << " " << c.usd << " \"x" << c.servers << "\"\n";
    if (c.pareto) on_front.push_back(&c);
  }
  std::sort(on_front.begin(), on_front.end(),
            [](const plan::Candidate* a, const plan::Candidate* b) { return a->hours < b->hours; });
  std::ostringstream front;
  for (const plan::Candidate* c : on_front) front << c->hours << " " << c->usd << "\n";
  std::ostringstream g;
  g << job.header(1000, 650) << "set title " << gnuplot_quoted(title) << "\n"
    << "set grid\nset logscale x\nset xlabel 'time to train (hours)'\n"
    << "set ylabel 'cost to train (USD)'\nset yrange [0:*]\nset key outside right top\n"
    << "set offsets graph 0.08, graph 0.08, graph 0.1, 0\n"
    << "plot " << job.data("front.dat", front.str())
    << " using 1:2 with lines lw 3 lc rgb '#bbbbbb' title 'Pareto front'";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::string file = job.data("t" + std::to_string(i) + ".dat", series[order[i]].str());
    g << ", " << file << " using 1:2 with points pt 7 ps 1.6 lc " << i + 1 << " title "
      << gnuplot_quoted(order[i]) << ", " << file << " using 1:2:3 with labels offset char 0,char "
      << "1.1 font ',9' notitle";
  }
  g << "\n";
  job.run(g.str());
}

}  // namespace cs::cli
