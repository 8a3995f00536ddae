// The SVG back end of chart.h, for the self-contained HTML reports: the same layout as the PNG
// (title, labelled axes, legend panel on the right), with real text.
#pragma once

#include <string>
#include <string_view>

#include "agent/chart.h"

namespace hlox {

// `text` with &, <, >, " and ' replaced by character references: safe in HTML/SVG text and in
// quoted attribute values.
std::string HtmlEscape(std::string_view text);

// An <svg> element (viewBox width x height, scaled to its container) drawing `spec`.
std::string ChartSvg(const ChartSpec& spec, int width = 1000, int height = 540);

}  // namespace hlox
