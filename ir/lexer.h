// Character-level lexer for HLO text: skips whitespace and comments (`// ...`, `/* ... */`),
// reads names, integers, floats and quoted strings on demand, and turns byte offsets into
// "FILE:LINE:COL: error: message" diagnostics with the source line and a caret. The parser
// drives it directly (no token stream), which keeps attribute values available verbatim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace hlox {

class Lexer {
 public:
  Lexer(std::string_view text, std::string_view filename);

  std::string_view text() const { return text_; }
  const std::string& filename() const { return filename_; }
  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  // Skips whitespace and comments; returns the position of the next significant character.
  size_t SkipSpace();
  // True when only whitespace and comments remain.
  bool AtEnd();
  // Next significant character (after SkipSpace), or '\0' at the end.
  char Peek();
  // Consumes `c` (after SkipSpace) if it is next; returns whether it did.
  bool TryConsume(char c);
  // Consumes the literal string `s` (after SkipSpace) if it is next.
  bool TryConsume(std::string_view s);
  // Consumes `c` or returns an error "expected 'c' <context>".
  absl::Status Expect(char c, std::string_view context);

  // A name: optional '%', then [A-Za-z0-9_.$-]+ ('-' not followed by '>'). Returns the name
  // without '%'; empty if none is next (nothing consumed then).
  std::string_view ConsumeName();
  // Like ConsumeName but does not consume.
  std::string_view PeekName();
  // Consumes the word `w` only if the next name equals it exactly.
  bool TryConsumeWord(std::string_view w);

  // Signed decimal integer (optional '-'); error on overflow or when none is next.
  absl::Status ConsumeInt(int64_t* out, std::string_view what);
  // Text of a number token ([-+]digits[.digits][e[+-]digits], or nan/inf forms) without
  // consuming it; empty if none.
  std::string_view PeekNumberText();
  // Quoted string with C escapes (\n \t \" \\ \xHH, octal \NNN); returns the unescaped bytes.
  absl::Status ConsumeString(std::string* out);

  // Scans a balanced attribute value starting at the current position: stops at a top-level
  // ',' or newline, or at an unmatched closing bracket. Strings are skipped whole. Returns
  // the value text with trailing whitespace removed; error for unbalanced/unterminated input.
  absl::Status ConsumeRawValue(std::string_view* out);

  // "FILE:LINE:COL: error: msg\n<line>\n<caret>" as InvalidArgument, located at `offset`.
  absl::Status ErrorAt(size_t offset, std::string_view msg) const;
  // Error at the next significant character.
  absl::Status Error(std::string_view msg);
  // 1-based line and column of `offset`.
  void LineCol(size_t offset, int64_t* line, int64_t* col) const;

 private:
  std::string_view text_;
  std::string filename_;
  size_t pos_ = 0;
};

// True for characters that may appear inside a name.
bool IsNameChar(char c);

}  // namespace hlox
