#include "xla_plugin/stablehlo/text_cursor.h"

#include <cstdint>
#include <limits>

namespace pjrtkit {
namespace stablehlo {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// Up to 24 characters of `text` from `offset`, printable, for "found '...'".
std::string Snippet(std::string_view text, size_t offset) {
  if (offset >= text.size()) return "end of text";
  std::string out = "'";
  for (size_t i = offset; i < text.size() && i < offset + 24; ++i) {
    char c = text[i];
    if (c == '\n') break;
    out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  }
  return out + "'";
}

}  // namespace

bool IsIdentifierChar(char c) {
  return IsAlpha(c) || IsDigit(c) || c == '_' || c == '$' || c == '.';
}

void TextCursor::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      return;
    }
  }
}

bool TextCursor::AtEnd() {
  SkipSpace();
  return pos_ >= text_.size();
}

char TextCursor::Peek() {
  SkipSpace();
  return pos_ < text_.size() ? text_[pos_] : '\0';
}

char TextCursor::PeekAt(size_t ahead) {
  return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
}

bool TextCursor::TryConsume(std::string_view token) {
  SkipSpace();
  if (text_.substr(pos_, token.size()) != token) return false;
  pos_ += token.size();
  return true;
}

bool TextCursor::TryConsumeKeyword(std::string_view word) {
  SkipSpace();
  if (text_.substr(pos_, word.size()) != word) return false;
  if (pos_ + word.size() < text_.size() && IsIdentifierChar(text_[pos_ + word.size()])) {
    return false;
  }
  pos_ += word.size();
  return true;
}

Status TextCursor::Expect(std::string_view token, std::string_view what) {
  if (TryConsume(token)) return OkStatus();
  return Error(what);
}

StatusOr<std::string_view> TextCursor::BareIdentifier(std::string_view what) {
  SkipSpace();
  if (pos_ >= text_.size() || !(IsAlpha(text_[pos_]) || text_[pos_] == '_')) return Error(what);
  size_t begin = pos_;
  while (pos_ < text_.size() && IsIdentifierChar(text_[pos_])) ++pos_;
  return text_.substr(begin, pos_ - begin);
}

StatusOr<std::string_view> TextCursor::SuffixIdentifier(std::string_view what) {
  size_t begin = pos_;
  while (pos_ < text_.size() && (IsIdentifierChar(text_[pos_]) || text_[pos_] == '-')) ++pos_;
  if (pos_ == begin) return Error(what);
  return text_.substr(begin, pos_ - begin);
}

StatusOr<std::string> TextCursor::StringLiteral(std::string_view what) {
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != '"') return Error(what);
  size_t begin = pos_++;
  std::string out;
  while (pos_ < text_.size()) {
    char c = text_[pos_++];
    if (c == '"') return out;
    if (c == '\n' || c == '\r') break;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    char e = pos_ < text_.size() ? text_[pos_] : '\0';
    if (e == '\\' || e == '"') {
      out.push_back(e);
      ++pos_;
    } else if (e == 'n') {
      out.push_back('\n');
      ++pos_;
    } else if (e == 't') {
      out.push_back('\t');
      ++pos_;
    } else if (IsHexDigit(e) && pos_ + 1 < text_.size() && IsHexDigit(text_[pos_ + 1])) {
      out.push_back(static_cast<char>(HexValue(e) * 16 + HexValue(text_[pos_ + 1])));
      pos_ += 2;
    } else {
      return ErrorAt(pos_ - 1, "unknown escape in string literal");
    }
  }
  return ErrorAt(begin, "string literal without its closing '\"'");
}

StatusOr<std::string_view> TextCursor::NumberToken(std::string_view what) {
  SkipSpace();
  size_t begin = pos_;
  size_t p = pos_;
  if (p < text_.size() && (text_[p] == '-' || text_[p] == '+')) ++p;
  if (p >= text_.size() || !IsDigit(text_[p])) return Error(what);
  if (text_[p] == '0' && p + 2 < text_.size() && (text_[p + 1] == 'x' || text_[p + 1] == 'X') &&
      IsHexDigit(text_[p + 2])) {
    p += 2;
    while (p < text_.size() && IsHexDigit(text_[p])) ++p;
  } else {
    while (p < text_.size() && IsDigit(text_[p])) ++p;
    if (p < text_.size() && text_[p] == '.') {
      ++p;
      while (p < text_.size() && IsDigit(text_[p])) ++p;
    }
    if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
      size_t q = p + 1;
      if (q < text_.size() && (text_[q] == '-' || text_[q] == '+')) ++q;
      if (q < text_.size() && IsDigit(text_[q])) {
        while (q < text_.size() && IsDigit(text_[q])) ++q;
        p = q;
      }
    }
  }
  pos_ = p;
  return text_.substr(begin, p - begin);
}

StatusOr<int64_t> TextCursor::DecimalInteger(std::string_view what) {
  SkipSpace();
  size_t begin = pos_;
  int64_t value = 0;
  while (pos_ < text_.size() && IsDigit(text_[pos_])) {
    int digit = text_[pos_] - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
      return ErrorAt(begin, "integer too large for 64 bits");
    }
    value = value * 10 + digit;
    ++pos_;
  }
  if (pos_ == begin) return Error(what);
  return value;
}

StatusOr<std::string_view> TextCursor::BalancedBody(char open_bracket, std::string_view what) {
  size_t begin = pos_;
  std::string nesting(1, open_bracket);  // Open brackets, innermost last.
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '"') {
      PJRTKIT_ASSIGN_OR_RETURN(std::string ignored, StringLiteral(what));
      (void)ignored;
      continue;
    }
    ++pos_;
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      if (nesting.size() >= 256) return ErrorAt(pos_ - 1, "brackets nested too deeply");
      nesting.push_back(c);
      continue;
    }
    if (c == '>' && pos_ >= 2 && text_[pos_ - 2] == '-') continue;  // An arrow "->".
    char open = c == '>' ? '<' : c == ')' ? '(' : c == ']' ? '[' : c == '}' ? '{' : '\0';
    if (open == '\0') continue;
    if (nesting.back() != open) return ErrorAt(pos_ - 1, std::string("unbalanced '") + c + "'");
    nesting.pop_back();
    if (nesting.empty()) return text_.substr(begin, pos_ - 1 - begin);
  }
  return ErrorAt(begin, std::string("unterminated '") + open_bracket + "' in " + std::string(what));
}

Status TextCursor::Error(std::string_view what) {
  SkipSpace();
  return ErrorAt(pos_, "expected " + std::string(what) + ", found " + Snippet(text_, pos_));
}

Status TextCursor::ErrorAt(size_t offset, std::string_view message) const {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return InvalidArgument("MLIR text " + std::to_string(line) + ":" + std::to_string(column) +
                         ": " + std::string(message));
}

std::string_view TextCursor::Slice(size_t begin, size_t end) const {
  if (begin > text_.size()) begin = text_.size();
  if (end > text_.size()) end = text_.size();
  if (end < begin) end = begin;
  return text_.substr(begin, end - begin);
}

}  // namespace stablehlo
}  // namespace pjrtkit
