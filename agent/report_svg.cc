// ChartSpec as inline SVG: polylines split at missing points, dots, crosses on the x axis,
// verified marks with their interval bars, and a legend panel.
#include "agent/report_svg.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hlox {
namespace {

std::string Color(uint32_t rgb) { return absl::StrFormat("#%06x", rgb & 0xffffff); }

// A legend entry's sample of how a series is drawn, 24 units wide, centred on y.
std::string SvgSwatch(const ChartSeries& s, int x, int y) {
  const std::string c = Color(s.rgb);
  switch (s.style) {
    case SeriesStyle::kLine:
      return absl::StrFormat("<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='2'/>", x, y, x + 24, y, c);
    case SeriesStyle::kDashed:
      return absl::StrFormat("<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-dasharray='5 4'/>", x, y,
                             x + 24, y, c);
    case SeriesStyle::kPoints:
      return absl::StrFormat("<circle cx='%d' cy='%d' r='2.5' fill='%s'/><circle cx='%d' cy='%d' r='2.5' fill='%s'/>",
                             x + 6, y, c, x + 18, y, c);
    case SeriesStyle::kAxisCrosses:
      return absl::StrFormat("<path d='M%d %dl6 6m0 -6l-6 6' stroke='%s' stroke-width='2'/>", x + 9, y - 3, c);
  }
  return "";
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// Title, axis labels, grid, ticks with labels, the axes, the reference line.
std::string SvgFrame(const ChartSpec& spec, const ChartFrame& f) {
  std::string s = absl::StrFormat("<rect width='%d' height='%d' fill='#fff'/>\n", f.width, f.height);
  absl::StrAppendFormat(&s, "<text class='title' x='%d' y='26' text-anchor='middle' font-size='16' font-weight='bold'>%s</text>\n",
                        f.width / 2, HtmlEscape(spec.title));
  absl::StrAppendFormat(&s, "<text x='%d' y='%d' text-anchor='middle'>%s</text>\n", (f.left + f.right) / 2,
                        f.bottom + 42, HtmlEscape(spec.x_label));
  absl::StrAppendFormat(&s, "<text transform='translate(18 %d) rotate(-90)' text-anchor='middle'>%s</text>\n",
                        (f.top + f.bottom) / 2, HtmlEscape(spec.y_label));
  for (double t : f.axes.yticks) {
    absl::StrAppendFormat(&s, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#e4e4e4'/>", f.left, f.Y(t), f.right,
                          f.Y(t));
    absl::StrAppendFormat(&s, "<text x='%d' y='%.1f' text-anchor='end'>%s</text>\n", f.left - 6, f.Y(t) + 4,
                          TickLabel(t));
  }
  for (double t : f.axes.xticks) {
    absl::StrAppendFormat(&s, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#e4e4e4'/>", f.X(t), f.top, f.X(t),
                          f.bottom);
    absl::StrAppendFormat(&s, "<text x='%.1f' y='%d' text-anchor='middle'>%s</text>\n", f.X(t), f.bottom + 18,
                          TickLabel(t));
  }
  absl::StrAppendFormat(&s, "<path d='M%d %dV%dH%d' fill='none' stroke='#000' stroke-width='2'/>\n", f.left, f.top,
                        f.bottom, f.right);
  if (std::isfinite(spec.reference_y)) {
    absl::StrAppendFormat(&s, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='%s' stroke-dasharray='5 4'/>\n",
                          f.left, f.Y(spec.reference_y), f.right, f.Y(spec.reference_y), Color(spec.reference_rgb));
  }
  return s;
}

std::string SvgSeries(const ChartSeries& c, const ChartFrame& f) {
  const std::string col = Color(c.rgb);
  if (c.style == SeriesStyle::kLine || c.style == SeriesStyle::kDashed) {
    std::string d;  // a path, lifting the pen at missing points
    bool pen = false;
    for (size_t i = 0; i < c.x.size() && i < c.y.size(); ++i) {
      if (!std::isfinite(c.x[i]) || !std::isfinite(c.y[i])) {
        pen = false;
        continue;
      }
      absl::StrAppendFormat(&d, "%s%.1f %.1f", pen ? "L" : "M", f.X(c.x[i]), f.Y(c.y[i]));
      pen = true;
    }
    if (d.empty()) return "";
    return absl::StrFormat("<path d='%s' fill='none' stroke='%s' stroke-width='%s'%s/>\n", d, col,
                           c.style == SeriesStyle::kLine ? "2" : "1.5",
                           c.style == SeriesStyle::kDashed ? " stroke-dasharray='5 4'" : "");
  }
  std::string s = absl::StrFormat("<g fill='%s' stroke='%s'>", col, col);
  for (size_t i = 0; i < c.x.size() && i < c.y.size(); ++i) {
    if (!std::isfinite(c.x[i])) continue;
    if (c.style == SeriesStyle::kPoints && std::isfinite(c.y[i])) {
      absl::StrAppendFormat(&s, "<circle cx='%.1f' cy='%.1f' r='2.5' stroke='none'/>", f.X(c.x[i]), f.Y(c.y[i]));
    } else if (c.style == SeriesStyle::kAxisCrosses) {
      absl::StrAppendFormat(&s, "<path d='M%.1f %dl6 6m0 -6l-6 6' stroke-width='2'/>", f.X(c.x[i]) - 3, f.bottom - 9);
    }
  }
  return s + "</g>\n";
}

// A verified figure: bar with caps over the interval, a square, its figure to the left.
std::string SvgMark(const ChartMark& m, const ChartFrame& f) {
  if (!std::isfinite(m.x) || !std::isfinite(m.y)) return "";
  const double lo = std::isfinite(m.low) ? m.low : m.y, hi = std::isfinite(m.high) ? m.high : m.y;
  const double x = f.X(m.x);
  const std::string col = Color(m.rgb);
  std::string s = absl::StrFormat("<g class='mark' stroke='%s' fill='%s' stroke-width='2'>", col, col);
  absl::StrAppendFormat(&s, "<path d='M%.1f %.1fV%.1fM%.1f %.1fh10M%.1f %.1fh10'/>", x, f.Y(lo), f.Y(hi), x - 5,
                        f.Y(lo), x - 5, f.Y(hi));
  absl::StrAppendFormat(&s, "<rect x='%.1f' y='%.1f' width='9' height='9' stroke='none'/>", x - 4.5, f.Y(m.y) - 4.5);
  if (!m.text.empty()) {
    absl::StrAppendFormat(&s, "<text x='%.1f' y='%.1f' text-anchor='end' stroke='#fff' stroke-width='4' "
                          "paint-order='stroke'>%s</text>", x - 8, f.Y(m.y) - 9, HtmlEscape(m.text));
  }
  return s + "</g>\n";
}

// The legend panel: per entry a swatch and its label, wrapped.
std::string SvgLegend(const ChartSpec& spec, const ChartFrame& f) {
  std::string s;
  int ly = f.top + 6;
  const int x = f.right;
  auto entry = [&](const std::string& label, const std::string& swatch) {
    if (label.empty()) return;
    absl::StrAppendFormat(&s, "<g class='legend'>%s<text font-size='11'>", swatch);
    for (const std::string& line : WrapText(label, 40)) {
      absl::StrAppendFormat(&s, "<tspan x='%d' y='%d'>%s</tspan>", x + 50, ly + 4, HtmlEscape(line));
      ly += 14;
    }
    s += "</text></g>\n";
    ly += 8;
  };
  if (std::isfinite(spec.reference_y)) {
    entry(spec.reference_label,
          absl::StrFormat("<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-dasharray='5 4'/>", x + 20, ly,
                          x + 44, ly, Color(spec.reference_rgb)));
  }
  for (const ChartSeries& c : spec.series) entry(c.label, SvgSwatch(c, x + 20, ly));
  for (const ChartMark& m : spec.marks) {
    entry(m.label, absl::StrFormat("<path d='M%d %dv12' stroke='%s' stroke-width='2'/><rect x='%d' y='%d' width='7' "
                                   "height='7' fill='%s'/>",
                                   x + 32, ly - 6, Color(m.rgb), x + 29, ly - 3, Color(m.rgb)));
  }
  return s;
}

}  // namespace

std::string ChartSvg(const ChartSpec& spec, int width, int height) {
  const ChartFrame f = LayoutFrame(spec, width, height);
  std::string s = absl::StrFormat(
      "<svg class='chart' viewBox='0 0 %d %d' role='img' aria-label='%s' font-family='sans-serif' font-size='12'>\n",
      width, height, HtmlEscape(spec.title));
  s += SvgFrame(spec, f);
  for (const ChartSeries& c : spec.series) s += SvgSeries(c, f);
  for (const ChartMark& m : spec.marks) s += SvgMark(m, f);
  s += SvgLegend(spec, f);
  return s + "</svg>\n";
}

}  // namespace hlox
