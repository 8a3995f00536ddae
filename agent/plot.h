// Charts as PNG files (libpng, the only dependency): a title, labelled axes with ticks, a legend
// panel on the right, and the series and marks of a ChartSpec (chart.h), with text in the
// built-in bitmap font (plot_font.h).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "agent/chart.h"

namespace hlox {

// Writes `spec` as a width x height RGB PNG. Errors: the file cannot be written or encoded.
absl::Status WritePlotPng(const std::string& path, const ChartSpec& spec, int width = 1000, int height = 540);

}  // namespace hlox
