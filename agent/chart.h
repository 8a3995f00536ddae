// A chart as plain data, drawn by two back ends: a PNG raster (plot.h) and inline SVG for the HTML
// reports (report_svg.h). Both read the same spec and the same axis layout (ChartAxes), so the PNG
// and the report show one picture.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hlox {

enum class SeriesStyle {
  kLine,        // solid polyline
  kDashed,      // thin dashed polyline: an estimate, not a verified figure
  kPoints,      // one dot per point
  kAxisCrosses  // one cross per x on the bottom edge (y ignored): e.g. invalid evaluations
};

struct ChartSeries {
  std::string label;  // legend text; "" = not in the legend
  std::vector<double> x, y;
  uint32_t rgb = 0x1f77b4;
  SeriesStyle style = SeriesStyle::kLine;
};

// A verified figure: a filled square at (x, y) with a bar over [low, high], its `text` written
// beside it; `label` is its legend entry.
struct ChartMark {
  std::string label, text;
  double x = 0, y = 1, low = 1, high = 1;
  uint32_t rgb = 0x1f77b4;
};

struct ChartSpec {
  std::string title, x_label, y_label;
  std::vector<ChartSeries> series;
  std::vector<ChartMark> marks;
  double reference_y = 1.0;      // dashed horizontal line (NaN = none)
  std::string reference_label;   // its legend entry
  uint32_t reference_rgb = 0xd62728;
};

// The data ranges and ticks of a spec: every finite point, mark and the reference line fit, with
// a little room above and below.
struct ChartAxes {
  double xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  std::vector<double> xticks, yticks;
};
ChartAxes LayoutAxes(const ChartSpec& spec);

// Where things go on a width x height picture, the same for both back ends: the title band on
// top, the plot area [left, right] x [top, bottom], the legend panel right of it.
struct ChartFrame {
  int width = 0, height = 0;
  int left = 78, right = 0, top = 44, bottom = 0;
  static constexpr int kLegendWidth = 300;
  ChartAxes axes;
  double X(double x) const { return left + (x - axes.xmin) / (axes.xmax - axes.xmin) * (right - left); }
  double Y(double y) const { return bottom - (y - axes.ymin) / (axes.ymax - axes.ymin) * (bottom - top); }
};
ChartFrame LayoutFrame(const ChartSpec& spec, int width, int height);

// A tick label: integers plainly, else up to three significant decimals.
std::string TickLabel(double v);

// `text` split at spaces into lines of at most `width` characters (a longer word is cut).
std::vector<std::string> WrapText(const std::string& text, size_t width);

}  // namespace hlox
