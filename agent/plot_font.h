// A small bitmap font for the PNG plots: every printable ASCII character as a 5x7 glyph on a
// 6x10 cell (7 rows above the baseline, 2 for descenders, 1 of line spacing). Drawn for hlox,
// kept as ASCII art so a glyph is checked at a glance.
#pragma once

#include <string_view>

namespace hlox {

inline constexpr int kGlyphWidth = 5;    // pixels drawn per row
inline constexpr int kGlyphRows = 9;     // 7 above the baseline, 2 below
inline constexpr int kGlyphAdvance = 6;  // horizontal step per character
inline constexpr int kGlyphLine = 10;    // vertical step per line

// The glyph's rows, top first, each kGlyphWidth characters of '#' (ink) or '.', or nullptr past
// the rows it uses; nullptr for a character outside printable ASCII (drawn as '?').
const char* const* GlyphRows(char c);

// Width in pixels of `text` drawn at `scale`.
inline int TextWidth(std::string_view text, int scale) {
  return static_cast<int>(text.size()) * kGlyphAdvance * scale;
}

}  // namespace hlox
