// A minimal raster line plot: axes, grid, ticks with numeric labels, polylines.
#include "agent/plot.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hlox {
namespace {

// 3x5 glyphs for "0123456789.-x", one row per 3 bits.
const char* kGlyphs = "0123456789.-x";
const uint8_t kFont[13][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
    {0, 0, 0, 0, 2}, {0, 0, 7, 0, 0}, {0, 5, 2, 5, 0}};

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
  void Line(double x0, double y0, double x1, double y1, uint32_t rgb, int thick = 1, bool dashed = false) {
    int n = static_cast<int>(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0))) + 1;
    for (int i = 0; i <= n; ++i) {
      double t = static_cast<double>(i) / n;
      int x = static_cast<int>(std::lround(x0 + t * (x1 - x0))), y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
      // The dash pattern follows the canvas, not the segment, so a curve drawn as many short
      // segments is dashed too.
      if (dashed && ((x + y) / 6) % 2) continue;
      for (int dx = 0; dx < thick; ++dx)
        for (int dy = 0; dy < thick; ++dy) Set(x + dx, y + dy, rgb);
    }
  }
  void Text(int x, int y, const std::string& s, int scale = 2) {
    for (char c : s) {
      const char* g = std::strchr(kGlyphs, c);
      if (g && c) {
        const uint8_t* rows = kFont[g - kGlyphs];
        for (int r = 0; r < 5; ++r)
          for (int b = 0; b < 3; ++b)
            if (rows[r] & (4 >> b))
              for (int sx = 0; sx < scale; ++sx)
                for (int sy = 0; sy < scale; ++sy) Set(x + b * scale + sx, y + r * scale + sy, 0x222222);
      }
      x += 4 * scale;
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
    std::fclose(f);
    return absl::OkStatus();
  }

 private:
  int w_, h_;
  std::vector<uint8_t> px_;
};

std::string Label(double v) {
  std::string s = std::fabs(v) >= 100 || v == std::floor(v) ? absl::StrFormat("%.0f", v) : absl::StrFormat("%.2f", v);
  return s;
}

}  // namespace

absl::Status WriteLinePlot(const std::string& path, const std::vector<PlotSeries>& series, double reference_y,
                           const std::vector<PlotMark>& marks, int width, int height) {
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const PlotSeries& s : series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      xmin = std::min(xmin, s.x[i]);
      xmax = std::max(xmax, s.x[i]);
      ymin = std::min(ymin, s.y[i]);
      ymax = std::max(ymax, s.y[i]);
    }
  }
  for (const PlotMark& m : marks) {
    for (double y : {m.y, m.low, m.high}) {
      if (!std::isfinite(y) || !std::isfinite(m.x)) continue;
      xmin = std::min(xmin, m.x);
      xmax = std::max(xmax, m.x);
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
  }
  if (std::isfinite(reference_y)) {
    ymin = std::min(ymin, reference_y);
    ymax = std::max(ymax, reference_y);
  }
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  if (xmax == xmin) xmax = xmin + 1;
  if (ymax == ymin) ymax = ymin + 1;
  double pad = (ymax - ymin) * 0.08;
  ymin -= pad;
  ymax += pad;
  const int left = 70, right = 20, top = 20, bottom = 50;
  Canvas c(width, height);
  auto px = [&](double x) { return left + (x - xmin) / (xmax - xmin) * (width - left - right); };
  auto py = [&](double y) { return height - bottom - (y - ymin) / (ymax - ymin) * (height - top - bottom); };
  for (int t = 0; t <= 5; ++t) {
    double yv = ymin + (ymax - ymin) * t / 5, xv = xmin + (xmax - xmin) * t / 5;
    c.Line(left, py(yv), width - right, py(yv), 0xdddddd);
    c.Line(px(xv), top, px(xv), height - bottom, 0xdddddd);
    c.Text(4, static_cast<int>(py(yv)) - 5, Label(yv));
    c.Text(static_cast<int>(px(xv)) - 10, height - bottom + 10, Label(xv));
  }
  c.Line(left, height - bottom, width - right, height - bottom, 0x000000, 2);
  c.Line(left, top, left, height - bottom, 0x000000, 2);
  if (std::isfinite(reference_y)) c.Line(left, py(reference_y), width - right, py(reference_y), 0xd62728, 1, true);
  for (const PlotSeries& s : series) {
    for (size_t i = 1; i < s.x.size() && i < s.y.size(); ++i) {
      if (std::isfinite(s.y[i - 1]) && std::isfinite(s.y[i])) {
        c.Line(px(s.x[i - 1]), py(s.y[i - 1]), px(s.x[i]), py(s.y[i]), s.rgb, s.dashed ? 1 : 2, s.dashed);
      }
    }
  }
  for (const PlotMark& m : marks) {
    if (!std::isfinite(m.x) || !std::isfinite(m.y)) continue;
    const double lo = std::isfinite(m.low) ? m.low : ymin, hi = std::isfinite(m.high) ? m.high : ymax;
    c.Line(px(m.x), py(lo), px(m.x), py(hi), m.rgb, 2);
    c.Line(px(m.x) - 5, py(lo), px(m.x) + 5, py(lo), m.rgb, 2);
    c.Line(px(m.x) - 5, py(hi), px(m.x) + 5, py(hi), m.rgb, 2);
    for (int d = -4; d <= 4; ++d) c.Line(px(m.x) - 4, py(m.y) + d, px(m.x) + 4, py(m.y) + d, m.rgb);
  }
  return c.Save(path);
}

}  // namespace hlox
