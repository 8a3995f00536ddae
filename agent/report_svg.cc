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

std::string ChartSvg(const ChartSpec& spec, int width, int height) {
  const ChartAxes a = LayoutAxes(spec);
  const int legend_w = 300, left = 78, right = width - legend_w, top = 44, bottom = height - 56;
  auto px = [&](double x) { return left + (x - a.xmin) / (a.xmax - a.xmin) * (right - left); };
  auto py = [&](double y) { return bottom - (y - a.ymin) / (a.ymax - a.ymin) * (bottom - top); };
  std::string s = absl::StrFormat(
      "<svg class='chart' viewBox='0 0 %d %d' role='img' "
      "aria-label='%s' font-family='sans-serif' font-size='12'>\n",
      width, height, HtmlEscape(spec.title));
  absl::StrAppendFormat(&s, "<rect width='%d' height='%d' fill='#fff'/>\n", width, height);
  absl::StrAppendFormat(&s, "<text class='title' x='%d' y='26' text-anchor='middle' font-size='16' font-weight='bold'>%s</text>\n",
                        width / 2, HtmlEscape(spec.title));
  absl::StrAppendFormat(&s, "<text x='%d' y='%d' text-anchor='middle'>%s</text>\n", (left + right) / 2, bottom + 42,
                        HtmlEscape(spec.x_label));
  absl::StrAppendFormat(&s, "<text transform='translate(18 %d) rotate(-90)' text-anchor='middle'>%s</text>\n",
                        (top + bottom) / 2, HtmlEscape(spec.y_label));
  for (double t : a.yticks) {
    absl::StrAppendFormat(&s, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#e4e4e4'/>", left, py(t), right, py(t));
    absl::StrAppendFormat(&s, "<text x='%d' y='%.1f' text-anchor='end'>%s</text>\n", left - 6, py(t) + 4, TickLabel(t));
  }
  for (double t : a.xticks) {
    absl::StrAppendFormat(&s, "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#e4e4e4'/>", px(t), top, px(t), bottom);
    absl::StrAppendFormat(&s, "<text x='%.1f' y='%d' text-anchor='middle'>%s</text>\n", px(t), bottom + 18, TickLabel(t));
  }
  absl::StrAppendFormat(&s, "<path d='M%d %dV%dH%d' fill='none' stroke='#000' stroke-width='2'/>\n", left, top, bottom,
                        right);
  if (std::isfinite(spec.reference_y)) {
    absl::StrAppendFormat(&s, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='%s' stroke-dasharray='5 4'/>\n", left,
                          py(spec.reference_y), right, py(spec.reference_y), Color(spec.reference_rgb));
  }
  for (const ChartSeries& c : spec.series) {
    const std::string col = Color(c.rgb);
    if (c.style == SeriesStyle::kLine || c.style == SeriesStyle::kDashed) {
      std::string d;
      bool pen = false;
      for (size_t i = 0; i < c.x.size() && i < c.y.size(); ++i) {
        if (!std::isfinite(c.x[i]) || !std::isfinite(c.y[i])) {
          pen = false;
          continue;
        }
        absl::StrAppendFormat(&d, "%s%.1f %.1f", pen ? "L" : "M", px(c.x[i]), py(c.y[i]));
        pen = true;
      }
      if (!d.empty()) {
        absl::StrAppendFormat(&s, "<path d='%s' fill='none' stroke='%s' stroke-width='%s'%s/>\n", d, col,
                              c.style == SeriesStyle::kLine ? "2" : "1.5",
                              c.style == SeriesStyle::kDashed ? " stroke-dasharray='5 4'" : "");
      }
      continue;
    }
    s += absl::StrFormat("<g fill='%s' stroke='%s'>", col, col);
    for (size_t i = 0; i < c.x.size() && i < c.y.size(); ++i) {
      if (!std::isfinite(c.x[i])) continue;
      if (c.style == SeriesStyle::kPoints && std::isfinite(c.y[i])) {
        absl::StrAppendFormat(&s, "<circle cx='%.1f' cy='%.1f' r='2.5' stroke='none'/>", px(c.x[i]), py(c.y[i]));
      } else if (c.style == SeriesStyle::kAxisCrosses) {
        absl::StrAppendFormat(&s, "<path d='M%.1f %dl6 6m0 -6l-6 6' stroke-width='2'/>", px(c.x[i]) - 3, bottom - 9);
      }
    }
    s += "</g>\n";
  }
  for (const ChartMark& m : spec.marks) {
    if (!std::isfinite(m.x) || !std::isfinite(m.y)) continue;
    const double lo = std::isfinite(m.low) ? m.low : m.y, hi = std::isfinite(m.high) ? m.high : m.y;
    const double x = px(m.x);
    const std::string col = Color(m.rgb);
    absl::StrAppendFormat(&s, "<g class='mark' stroke='%s' fill='%s' stroke-width='2'>", col, col);
    absl::StrAppendFormat(&s, "<path d='M%.1f %.1fV%.1fM%.1f %.1fh10M%.1f %.1fh10'/>", x, py(lo), py(hi), x - 5, py(lo),
                          x - 5, py(hi));
    absl::StrAppendFormat(&s, "<rect x='%.1f' y='%.1f' width='9' height='9' stroke='none'/>", x - 4.5, py(m.y) - 4.5);
    if (!m.text.empty()) {
      absl::StrAppendFormat(&s, "<text x='%.1f' y='%.1f' text-anchor='end' stroke='none'>%s</text>", x - 10, py(m.y) + 4,
                            HtmlEscape(m.text));
    }
    s += "</g>\n";
  }
  // Legend panel.
  int ly = top + 6;
  auto entry = [&](const std::string& label, const std::string& swatch) {
    if (label.empty()) return;
    absl::StrAppendFormat(&s, "<g class='legend'>%s<text font-size='11'>", swatch);
    for (const std::string& line : WrapText(label, 40)) {
      absl::StrAppendFormat(&s, "<tspan x='%d' y='%d'>%s</tspan>", right + 50, ly + 4, HtmlEscape(line));
      ly += 14;
    }
    s += "</text></g>\n";
    ly += 8;
  };
  if (std::isfinite(spec.reference_y)) {
    entry(spec.reference_label,
          absl::StrFormat("<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-dasharray='5 4'/>", right + 20, ly,
                          right + 44, ly, Color(spec.reference_rgb)));
  }
  for (const ChartSeries& c : spec.series) entry(c.label, SvgSwatch(c, right + 20, ly));
  for (const ChartMark& m : spec.marks) {
    entry(m.label, absl::StrFormat("<path d='M%d %dv12' stroke='%s' stroke-width='2'/><rect x='%d' y='%d' width='7' "
                                   "height='7' fill='%s'/>",
                                   right + 32, ly - 6, Color(m.rgb), right + 29, ly - 3, Color(m.rgb)));
  }
  s += "</svg>\n";
  return s;
}

}  // namespace hlox
