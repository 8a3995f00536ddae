// Line plots as PNG files (libpng), for search progress: one or more series of y against x on
// shared axes, with tick labels in a built-in 3x5 digit font. No other dependencies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace hlox {

struct PlotSeries {
  std::vector<double> x, y;
  uint32_t rgb = 0x1f77b4;
  bool dashed = false;  // thin and dashed: an estimate, not a verified figure
};

// A verified figure: a filled square at (x, y) with a vertical bar over its interval.
struct PlotMark {
  double x = 0, y = 1, low = 1, high = 1;
  uint32_t rgb = 0x1f77b4;
};

// Writes a width x height PNG; `reference_y` (if finite) draws a dashed horizontal line there.
absl::Status WriteLinePlot(const std::string& path, const std::vector<PlotSeries>& series,
                           double reference_y, const std::vector<PlotMark>& marks = {}, int width = 720,
                           int height = 420);

}  // namespace hlox
