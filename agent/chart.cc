// Axis ranges and "nice" ticks (steps of 1, 2 or 5 times a power of ten) for a ChartSpec.
#include "agent/chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace hlox {
namespace {

// About `target` ticks over [lo, hi], at multiples of a 1-2-5 step.
std::vector<double> NiceTicks(double lo, double hi, int target) {
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

}  // namespace

ChartAxes LayoutAxes(const ChartSpec& spec) {
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  auto add = [&](double x, double y) {
    if (std::isfinite(x)) xmin = std::min(xmin, x), xmax = std::max(xmax, x);
    if (std::isfinite(y)) ymin = std::min(ymin, y), ymax = std::max(ymax, y);
  };
  for (const ChartSeries& s : spec.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      add(s.x[i], s.style == SeriesStyle::kAxisCrosses ? NAN : s.y[i]);
    }
  }
  for (const ChartMark& m : spec.marks) {
    for (double y : {m.y, m.low, m.high}) add(m.x, y);
  }
  add(NAN, spec.reference_y);
  ChartAxes a;
  if (std::isfinite(xmin)) a.xmin = xmin, a.xmax = xmax;
  if (std::isfinite(ymin)) a.ymin = ymin, a.ymax = ymax;
  if (a.xmax == a.xmin) a.xmax = a.xmin + 1;
  if (a.ymax == a.ymin) a.ymin -= 0.5, a.ymax += 0.5;
  const double pad = (a.ymax - a.ymin) * 0.08;
  a.ymin -= pad;
  a.ymax += pad;
  a.xmax += (a.xmax - a.xmin) * 0.02;
  a.xticks = NiceTicks(a.xmin, a.xmax, 6);
  a.yticks = NiceTicks(a.ymin, a.ymax, 6);
  return a;
}

std::vector<std::string> WrapText(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(i, end - i);
    i = end + 1;
    while (word.size() > width) {
      if (!line.empty()) lines.push_back(line), line.clear();
      lines.push_back(word.substr(0, width));
      word = word.substr(width);
    }
    if (!line.empty() && line.size() + 1 + word.size() > width) lines.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

ChartFrame LayoutFrame(const ChartSpec& spec, int width, int height) {
  ChartFrame f;
  f.width = width;
  f.height = height;
  f.right = width - ChartFrame::kLegendWidth;
  f.bottom = height - 56;
  f.axes = LayoutAxes(spec);
  return f;
}

std::string TickLabel(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e9) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.3g", v);
}

}  // namespace hlox
