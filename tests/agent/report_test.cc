// The report pieces: the bitmap font covers printable ASCII with well-formed, distinct glyphs; the
// PNG plot decodes with libpng and has ink in its title band only when a title is drawn, and in its
// legend panel only when there is a legend; the SVG escapes text and loads nothing; CSV fields are
// quoted as RFC 4180 asks and numbers read back exactly.
#include <png.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "agent/chart.h"
#include "agent/plot.h"
#include "agent/plot_font.h"
#include "agent/report_svg.h"
#include "common/csv.h"
#include "gtest/gtest.h"

namespace hlox {
namespace {

TEST(PlotFont, EveryPrintableCharacterHasAWellFormedGlyph) {
  std::set<std::string> seen;
  for (char c = 32; c < 127; ++c) {
    const char* const* rows = GlyphRows(c);
    ASSERT_NE(rows, nullptr) << c;
    std::string art;
    int n = 0;
    for (; n < kGlyphRows && rows[n] != nullptr; ++n) {
      ASSERT_EQ(std::string(rows[n]).size(), static_cast<size_t>(kGlyphWidth)) << c << " row " << n;
      EXPECT_EQ(std::string(rows[n]).find_first_not_of(".#"), std::string::npos) << c;
      art += rows[n];
    }
    EXPECT_GE(n, 7) << c;
    EXPECT_EQ(c == ' ', art.find('#') == std::string::npos) << c;
    EXPECT_TRUE(seen.insert(art).second) << "glyph of '" << c << "' repeats another";
  }
  EXPECT_EQ(GlyphRows('\n'), nullptr);
  EXPECT_EQ(GlyphRows(static_cast<char>(200)), nullptr);
}

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  // Pixels in [x0, x1) x [y0, y1) darker than the grid lines: text, axes, marks.
  int Ink(int x0, int y0, int x1, int y1) const {
    int n = 0;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        const uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
        n += p[0] + p[1] + p[2] < 3 * 160;
      }
    return n;
  }
};

Image Decode(const std::string& path) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  Image out;
  if (!png_image_begin_read_from_file(&img, path.c_str())) return out;
  img.format = PNG_FORMAT_RGB;
  out.rgb.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.rgb.data(), 0, nullptr)) return out;
  out.width = static_cast<int>(img.width);
  out.height = static_cast<int>(img.height);
  return out;
}

ChartSpec Sample(const std::string& title, bool legend) {
  ChartSpec spec;
  spec.title = title;
  spec.x_label = "evaluation";
  spec.y_label = "speedup over default (higher is better)";
  ChartSeries points{legend ? "every evaluation" : "", {1, 2, 3, 4}, {0.9, 1.1, 0.8, 1.2}, 0x1f77b4,
                     SeriesStyle::kPoints};
  ChartSeries best{legend ? "best so far (unverified)" : "", {1, 2, 3, 4}, {0.9, 1.1, 1.1, 1.2}, 0x1f77b4,
                   SeriesStyle::kDashed};
  spec.series = {points, best};
  spec.marks.push_back({legend ? "verified 1.05x" : "", "1.05x", 4.5, 1.05, 1.01, 1.09, 0x2ca02c});
  spec.reference_label = legend ? "default policy (1.0)" : "";
  return spec;
}

TEST(PlotPng, TitleAndLegendAreDrawn) {
  const std::string dir = ::testing::TempDir();
  ASSERT_TRUE(WritePlotPng(dir + "/titled.png", Sample("mlp.hlo: random search", true)).ok());
  ASSERT_TRUE(WritePlotPng(dir + "/bare.png", Sample("", false)).ok());
  const Image titled = Decode(dir + "/titled.png"), bare = Decode(dir + "/bare.png");
  ASSERT_EQ(titled.width, 1000);
  ASSERT_EQ(titled.height, 540);
  ASSERT_EQ(bare.width, 1000);
  // Title band (above the plot area) and legend panel (right of it).
  EXPECT_GT(titled.Ink(0, 0, 1000, 36), 100);
  EXPECT_EQ(bare.Ink(0, 0, 1000, 36), 0);
  EXPECT_GT(titled.Ink(710, 44, 1000, 200), 100);
  EXPECT_EQ(bare.Ink(710, 44, 1000, 200), 0);
  // Axis labels: the x label under the ticks, the rotated y label at the left edge.
  EXPECT_GT(bare.Ink(300, 505, 500, 540), 50);
  EXPECT_GT(bare.Ink(0, 100, 24, 440), 50);
}

TEST(PlotPng, UnwritablePathIsAnError) {
  EXPECT_FALSE(WritePlotPng("/nonexistent-dir/x.png", Sample("t", true)).ok());
}

TEST(ChartSvg, EscapesTextAndLoadsNothing) {
  const std::string svg = ChartSvg(Sample("a <b> & \"c\"", true));
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_EQ(svg.find("http"), std::string::npos);
  EXPECT_NE(svg.find("default policy (1.0)"), std::string::npos);
  EXPECT_NE(svg.find("speedup over default (higher is better)"), std::string::npos);
  EXPECT_EQ(HtmlEscape("x'y"), "x&#39;y");
}

TEST(ChartAxes, EveryPointFitsAndTicksAreInside) {
  const ChartAxes a = LayoutAxes(Sample("", false));
  EXPECT_LE(a.ymin, 0.8);
  EXPECT_GE(a.ymax, 1.2);
  EXPECT_GE(a.xmax, 4.5);
  ASSERT_GE(a.yticks.size(), 3u);
  for (double t : a.yticks) EXPECT_TRUE(t >= a.ymin && t <= a.ymax) << t;
}

TEST(Csv, QuotesWhenNeededAndNumbersRoundTrip) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvRow({"a", "b"}), "a,b\r\n");
  for (double v : {0.1 + 0.2, 1.0 / 3, 1.0251234567890123, 4.63971e-05, 1e300, -2.5, 0.0}) {
    const std::string s = CsvNumber(v);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
  EXPECT_EQ(CsvNumber(1.0), "1");
  EXPECT_EQ(CsvNumber(NAN), "");
  EXPECT_EQ(WrapText("one two three", 7), (std::vector<std::string>{"one two", "three"}));
}

}  // namespace
}  // namespace hlox
