// `scale --plot`: throughput and scaling efficiency against GPU count, one line per topology,
// drawn by gnuplot (Debian's gnuplot-nox) into a PNG or SVG.
#pragma once

#include <string>
#include <vector>

namespace cs::cli {

struct PlotPoint {
  std::string topology;
  int gpus = 0;
  double samples_per_s = 0;
  double efficiency = 0;
};

// Draws `points` into `path` (.png or .svg), written whole or not at all. InputError for another
// extension, a missing gnuplot, or gnuplot failing (its first error line).
void plot_scaling(const std::vector<PlotPoint>& points, const std::string& model,
                  const std::string& path);

}  // namespace cs::cli
