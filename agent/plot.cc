// The PNG back end of chart.h: an RGB canvas with lines, dots, crosses and bitmap text, laid out
// as title on top, plot area on the left, legend panel on the right.
#include "agent/plot.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/plot_font.h"

namespace hlox {
namespace {

constexpr uint32_t kInk = 0x222222, kGrid = 0xe4e4e4, kAxis = 0x000000;

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), px_(static_cast<size_t>(w) * h * 3, 255) {}
  void Set(int x, int y, uint32_t rgb) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
    uint8_t* p = &px_[(static_cast<size_t>(y) * w_ + x) * 3];
    p[0] = rgb >> 16;
    p[1] = (rgb >> 8) & 255;
    p[2] = rgb & 255;
  }
  void Rect(int x0, int y0, int x1, int y1, uint32_t rgb) {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) Set(x, y, rgb);
  }
  void Line(double x0, double y0, double x1, double y1, uint32_t rgb, int thick = 1, bool dashed = false) {
    int n = static_cast<int>(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0))) + 1;
    for (int i = 0; i <= n; ++i) {
      double t = static_cast<double>(i) / n;
      int x = static_cast<int>(std::lround(x0 + t * (x1 - x0))), y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
      // The dash pattern follows the canvas, not the segment, so a curve drawn as many short
      // segments is dashed too.
      if (dashed && ((x + y) / 6) % 2) continue;
      Rect(x, y, x + thick - 1, y + thick - 1, rgb);
    }
  }
  void Dot(double x, double y, uint32_t rgb) {
    const int cx = static_cast<int>(std::lround(x)), cy = static_cast<int>(std::lround(y));
    for (int dy = -2; dy <= 2; ++dy)
      for (int dx = -2; dx <= 2; ++dx)
        if (dx * dx + dy * dy <= 5) Set(cx + dx, cy + dy, rgb);
  }
  void Cross(double x, double y, uint32_t rgb) {
    Line(x - 3, y - 3, x + 3, y + 3, rgb, 2);
    Line(x - 3, y + 3, x + 3, y - 3, rgb, 2);
  }
  // `text` with its top-left corner at (x, y); vertical: rotated a quarter turn anticlockwise,
  // read bottom to top, starting at (x, y) and going up.
  void Text(int x, int y, const std::string& text, int scale, uint32_t rgb = kInk, bool vertical = false) {
    for (char c : text) {
      const char* const* rows = GlyphRows(c);
      if (rows == nullptr) rows = GlyphRows('?');
      for (int r = 0; r < kGlyphRows && rows[r] != nullptr; ++r) {
        for (int b = 0; b < kGlyphWidth; ++b) {
          if (rows[r][b] != '#') continue;
          const int gx = vertical ? x + r * scale : x + b * scale, gy = vertical ? y - b * scale : y + r * scale;
          Rect(gx, gy, gx + scale - 1, gy + (vertical ? -(scale - 1) : scale - 1), rgb);
        }
      }
      if (vertical) {
        y -= kGlyphAdvance * scale;
      } else {
        x += kGlyphAdvance * scale;
      }
    }
  }
  absl::Status Save(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
      png_destroy_write_struct(&png, &info);
      std::fclose(f);
      return absl::InternalError(absl::StrCat("PNG encoding failed for ", path));
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, w_, h_, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < h_; ++y) png_write_row(png, &px_[static_cast<size_t>(y) * w_ * 3]);
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    if (std::fclose(f) != 0) return absl::InternalError(absl::StrCat("cannot write ", path));
    return absl::OkStatus();
  }

 private:
  int w_, h_;
  std::vector<uint8_t> px_;
};

// A legend entry's 24-pixel sample of how the series is drawn, centred vertically on y.
void Swatch(Canvas& c, int x, int y, const ChartSeries& s) {
  switch (s.style) {
    case SeriesStyle::kLine: c.Line(x, y, x + 24, y, s.rgb, 2); break;
    case SeriesStyle::kDashed: c.Line(x, y, x + 24, y, s.rgb, 1, true); break;
    case SeriesStyle::kPoints: c.Dot(x + 6, y, s.rgb), c.Dot(x + 18, y, s.rgb); break;
    case SeriesStyle::kAxisCrosses: c.Cross(x + 12, y, s.rgb); break;
  }
}

// Title (cut to the width), axis labels, grid, ticks with labels, the axes, the reference line.
void DrawFrame(Canvas& c, const ChartSpec& spec, const ChartFrame& f) {
  std::string title = spec.title;
  const size_t title_chars = static_cast<size_t>((f.width - 20) / (kGlyphAdvance * 2));
  if (title.size() > title_chars) title = title.substr(0, title_chars - 3) + "...";
  c.Text((f.width - TextWidth(title, 2)) / 2, 12, title, 2);
  c.Text((f.left + f.right - TextWidth(spec.x_label, 1)) / 2, f.bottom + 30, spec.x_label, 1);
  c.Text(12, (f.top + f.bottom + TextWidth(spec.y_label, 1)) / 2, spec.y_label, 1, kInk, true);
  for (double t : f.axes.yticks) {
    c.Line(f.left, f.Y(t), f.right, f.Y(t), kGrid);
    const std::string l = TickLabel(t);
    c.Text(f.left - 6 - TextWidth(l, 1), static_cast<int>(f.Y(t)) - 3, l, 1);
  }
  for (double t : f.axes.xticks) {
    c.Line(f.X(t), f.top, f.X(t), f.bottom, kGrid);
    const std::string l = TickLabel(t);
    c.Text(static_cast<int>(f.X(t)) - TextWidth(l, 1) / 2, f.bottom + 8, l, 1);
  }
  c.Line(f.left, f.bottom, f.right, f.bottom, kAxis, 2);
  c.Line(f.left, f.top, f.left, f.bottom, kAxis, 2);
  if (std::isfinite(spec.reference_y)) {
    c.Line(f.left, f.Y(spec.reference_y), f.right, f.Y(spec.reference_y), spec.reference_rgb, 1, true);
  }
}

void DrawSeries(Canvas& c, const ChartSeries& s, const ChartFrame& f) {
  for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
    const bool ok = std::isfinite(s.x[i]) && std::isfinite(s.y[i]);
    switch (s.style) {
      case SeriesStyle::kLine:
      case SeriesStyle::kDashed:
        if (i > 0 && ok && std::isfinite(s.x[i - 1]) && std::isfinite(s.y[i - 1])) {
          c.Line(f.X(s.x[i - 1]), f.Y(s.y[i - 1]), f.X(s.x[i]), f.Y(s.y[i]), s.rgb, s.style == SeriesStyle::kLine ? 2 : 1,
                 s.style == SeriesStyle::kDashed);
        }
        break;
      case SeriesStyle::kPoints:
        if (ok) c.Dot(f.X(s.x[i]), f.Y(s.y[i]), s.rgb);
        break;
      case SeriesStyle::kAxisCrosses:
        if (std::isfinite(s.x[i])) c.Cross(f.X(s.x[i]), f.bottom - 6, s.rgb);
        break;
    }
  }
}

// A verified figure: the interval as a bar with caps, a filled square, its figure above and to the
// left on a white patch (the mark sits at the right edge of the plot, often on the line at 1).
void DrawMark(Canvas& c, const ChartMark& m, const ChartFrame& f) {
  if (!std::isfinite(m.x) || !std::isfinite(m.y)) return;
  const double lo = std::isfinite(m.low) ? m.low : m.y, hi = std::isfinite(m.high) ? m.high : m.y;
  const double x = f.X(m.x);
  const int ix = static_cast<int>(x), iy = static_cast<int>(f.Y(m.y));
  c.Line(x, f.Y(lo), x, f.Y(hi), m.rgb, 2);
  c.Line(x - 5, f.Y(lo), x + 5, f.Y(lo), m.rgb, 2);
  c.Line(x - 5, f.Y(hi), x + 5, f.Y(hi), m.rgb, 2);
  c.Rect(ix - 4, iy - 4, ix + 4, iy + 4, m.rgb);
  if (m.text.empty()) return;
  const int tx = ix - 8 - TextWidth(m.text, 1), ty = iy - 18;  // above the reference line at y = 1
  c.Rect(tx - 2, ty - 2, ix - 7, ty + kGlyphLine - 1, 0xffffff);
  c.Text(tx, ty, m.text, 1, m.rgb);
}

// The legend panel: per entry a swatch, then its label wrapped to the panel.
void DrawLegend(Canvas& c, const ChartSpec& spec, const ChartFrame& f) {
  int ly = f.top;
  const int x = f.right;
  const size_t chars = static_cast<size_t>((ChartFrame::kLegendWidth - 60) / kGlyphAdvance);
  auto entry = [&](const std::string& label, auto draw) {
    if (label.empty()) return;
    draw(ly + 3);
    for (const std::string& line : WrapText(label, chars)) {
      c.Text(x + 50, ly, line, 1);
      ly += kGlyphLine + 1;
    }
    ly += 6;
  };
  if (std::isfinite(spec.reference_y)) {
    entry(spec.reference_label, [&](int y) { c.Line(x + 20, y, x + 44, y, spec.reference_rgb, 1, true); });
  }
  for (const ChartSeries& s : spec.series) entry(s.label, [&](int y) { Swatch(c, x + 20, y, s); });
  for (const ChartMark& m : spec.marks) {
    entry(m.label, [&](int y) {
      c.Line(x + 32, y - 6, x + 32, y + 6, m.rgb, 2);
      c.Rect(x + 29, y - 3, x + 35, y + 3, m.rgb);
    });
  }
}

}  // namespace

absl::Status WritePlotPng(const std::string& path, const ChartSpec& spec, int width, int height) {
  const ChartFrame f = LayoutFrame(spec, width, height);
  Canvas c(width, height);
  DrawFrame(c, spec, f);
  for (const ChartSeries& s : spec.series) DrawSeries(c, s, f);
  for (const ChartMark& m : spec.marks) DrawMark(c, m, f);
  DrawLegend(c, spec, f);
  return c.Save(path);
}

}  // namespace hlox
