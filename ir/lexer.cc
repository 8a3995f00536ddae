// Lexer implementation: whitespace/comment skipping, names, numbers, strings, raw values and
// caret diagnostics. Every loop consumes input, so no input makes it hang.
#include "ir/lexer.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "absl/strings/str_cat.h"

namespace hlox {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '$';
}

Lexer::Lexer(std::string_view text, std::string_view filename)
    : text_(text), filename_(filename) {}

size_t Lexer::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      size_t nl = text_.find('\n', pos_);
      pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      pos_ = end == std::string_view::npos ? text_.size() : end + 2;
    } else {
      break;
    }
  }
  return pos_;
}

bool Lexer::AtEnd() { return SkipSpace() >= text_.size(); }

char Lexer::Peek() {
  SkipSpace();
  return pos_ < text_.size() ? text_[pos_] : '\0';
}

bool Lexer::TryConsume(char c) {
  if (Peek() != c || pos_ >= text_.size()) return false;
  ++pos_;
  return true;
}

bool Lexer::TryConsume(std::string_view s) {
  SkipSpace();
  if (text_.substr(pos_, s.size()) != s) return false;
  pos_ += s.size();
  return true;
}

absl::Status Lexer::Expect(char c, std::string_view context) {
  if (TryConsume(c)) return absl::OkStatus();
  return Error(absl::StrCat("expected '", std::string(1, c), "' ", std::string(context)));
}

std::string_view Lexer::PeekName() {
  SkipSpace();
  size_t p = pos_;
  if (p < text_.size() && text_[p] == '%') ++p;
  size_t start = p;
  while (p < text_.size() && IsNameChar(text_[p])) {
    if (text_[p] == '-' && p + 1 < text_.size() && text_[p + 1] == '>') break;
    ++p;
  }
  return text_.substr(start, p - start);
}

std::string_view Lexer::ConsumeName() {
  std::string_view n = PeekName();
  if (n.empty()) return n;
  pos_ = static_cast<size_t>(n.data() - text_.data()) + n.size();
  return n;
}

bool Lexer::TryConsumeWord(std::string_view w) {
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == '%') return false;
  if (PeekName() != w) return false;
  pos_ += w.size();
  return true;
}

absl::Status Lexer::ConsumeInt(int64_t* out, std::string_view what) {
  SkipSpace();
  size_t start = pos_;
  size_t p = pos_;
  if (p < text_.size() && (text_[p] == '-' || text_[p] == '+')) ++p;
  size_t digits = p;
  while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
  if (p == digits) return Error(absl::StrCat("expected an integer (", std::string(what), ")"));
  const char* b = text_.data() + start + (text_[start] == '+' ? 1 : 0);
  auto [ptr, ec] = std::from_chars(b, text_.data() + p, *out);
  if (ec != std::errc() || ptr != text_.data() + p) {
    return ErrorAt(start, absl::StrCat("integer out of range (", std::string(what), ")"));
  }
  pos_ = p;
  return absl::OkStatus();
}

std::string_view Lexer::PeekNumberText() {
  SkipSpace();
  size_t p = pos_;
  if (p < text_.size() && (text_[p] == '-' || text_[p] == '+')) ++p;
  auto word = [&](std::string_view w) { return text_.substr(p, w.size()) == w; };
  if (word("nan") || word("inf")) {
    size_t q = p + 3;
    if (word("nan") && q < text_.size() && text_[q] == '(') {  // nan(0x...) payload form
      size_t close = text_.find(')', q);
      if (close != std::string_view::npos && close - q < 24) q = close + 1;
    }
    if (q < text_.size() && IsNameChar(text_[q]) && text_[q] != '-') return {};
    return text_.substr(pos_, q - pos_);
  }
  size_t d = p;
  while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
  bool any = p > d;
  if (p < text_.size() && text_[p] == '.') {
    ++p;
    size_t f = p;
    while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
    any = any || p > f;
  }
  if (!any) return {};
  if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
    size_t q = p + 1;
    if (q < text_.size() && (text_[q] == '-' || text_[q] == '+')) ++q;
    size_t e = q;
    while (q < text_.size() && std::isdigit(static_cast<unsigned char>(text_[q]))) ++q;
    if (q > e) p = q;
  }
  return text_.substr(pos_, p - pos_);
}

absl::Status Lexer::ConsumeString(std::string* out) {
  SkipSpace();
  size_t start = pos_;
  if (pos_ >= text_.size() || text_[pos_] != '"') return Error("expected a quoted string");
  size_t p = pos_ + 1;
  out->clear();
  while (true) {
    if (p >= text_.size()) return ErrorAt(start, "unterminated string");
    char c = text_[p];
    if (c == '"') break;
    if (c != '\\') {
      out->push_back(c);
      ++p;
      continue;
    }
    if (p + 1 >= text_.size()) return ErrorAt(start, "unterminated string");
    char e = text_[p + 1];
    p += 2;
    switch (e) {
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      case 'r': out->push_back('\r'); break;
      case 'a': out->push_back('\a'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'v': out->push_back('\v'); break;
      case 'x': {
        int v = 0, n = 0;
        while (n < 2 && p < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[p]))) {
          char h = text_[p++];
          v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
          ++n;
        }
        if (n == 0) return ErrorAt(p - 2, "invalid \\x escape");
        out->push_back(static_cast<char>(v));
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0', n = 1;
          while (n < 3 && p < text_.size() && text_[p] >= '0' && text_[p] <= '7') {
            v = v * 8 + (text_[p++] - '0');
            ++n;
          }
          out->push_back(static_cast<char>(v & 0xff));
        } else {
          out->push_back(e);  // \" \\ \' \? and anything else: the character itself
        }
    }
  }
  pos_ = p + 1;
  return absl::OkStatus();
}

absl::Status Lexer::ConsumeRawValue(std::string_view* out) {
  SkipSpace();
  size_t start = pos_;
  size_t p = pos_;
  std::string stack;
  while (p < text_.size()) {
    char c = text_[p];
    if (c == '"') {
      size_t q = p + 1;
      while (q < text_.size() && text_[q] != '"') q += text_[q] == '\\' ? 2 : 1;
      if (q >= text_.size()) return ErrorAt(p, "unterminated string");
      p = q + 1;
      continue;
    }
    if (c == '/' && p + 1 < text_.size() && text_[p + 1] == '*') {
      size_t end = text_.find("*/", p + 2);
      if (end == std::string_view::npos) return ErrorAt(p, "unterminated comment");
      p = end + 2;
      continue;
    }
    if (c == '{' || c == '(' || c == '[') {
      if (stack.size() >= 1000) return ErrorAt(p, "attribute value nested too deeply");
      stack.push_back(c == '{' ? '}' : c == '(' ? ')' : ']');
    } else if (c == '}' || c == ')' || c == ']') {
      if (stack.empty()) break;
      if (stack.back() != c) {
        return ErrorAt(p, absl::StrCat("mismatched '", std::string(1, c), "' in attribute value"));
      }
      stack.pop_back();
    } else if (stack.empty() && (c == ',' || c == '\n')) {
      break;
    }
    ++p;
  }
  if (!stack.empty()) return ErrorAt(start, "unbalanced brackets in attribute value");
  size_t end = p;
  while (end > start && std::isspace(static_cast<unsigned char>(text_[end - 1]))) --end;
  if (end == start) return ErrorAt(start, "expected an attribute value");
  *out = text_.substr(start, end - start);
  pos_ = p;
  return absl::OkStatus();
}

void Lexer::LineCol(size_t offset, int64_t* line, int64_t* col) const {
  offset = std::min(offset, text_.size());
  *line = 1 + std::count(text_.begin(), text_.begin() + offset, '\n');
  size_t bol = 0;
  if (offset > 0) {
    size_t nl = text_.rfind('\n', offset - 1);
    if (nl != std::string_view::npos) bol = nl + 1;
  }
  *col = static_cast<int64_t>(offset - bol) + 1;
}

absl::Status Lexer::ErrorAt(size_t offset, std::string_view msg) const {
  offset = std::min(offset, text_.size());
  int64_t line, col;
  LineCol(offset, &line, &col);
  size_t bol = offset - static_cast<size_t>(col - 1);
  size_t eol = text_.find('\n', bol);
  if (eol == std::string_view::npos) eol = text_.size();
  std::string src(text_.substr(bol, std::min<size_t>(eol - bol, 400)));
  if (!src.empty() && src.back() == '\r') src.pop_back();
  std::string caret;
  for (int64_t i = 0; i + 1 < col && i < 400; ++i) caret.push_back(src.size() > static_cast<size_t>(i) && src[i] == '\t' ? '\t' : ' ');
  caret.push_back('^');
  return absl::InvalidArgumentError(absl::StrCat(filename_, ":", line, ":", col, ": error: ",
                                                 std::string(msg), "\n", src, "\n", caret));
}

absl::Status Lexer::Error(std::string_view msg) { return ErrorAt(SkipSpace(), msg); }

}  // namespace hlox
