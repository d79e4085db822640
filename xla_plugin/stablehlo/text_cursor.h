// TextCursor: the lexical layer of TextParser: a position in MLIR text, whitespace and comment
// skipping, MLIR's tokens (identifiers, string and number literals, balanced dialect bodies) and
// errors that carry line:column.
#ifndef PJRTKIT_XLA_PLUGIN_STABLEHLO_TEXT_CURSOR_H_
#define PJRTKIT_XLA_PLUGIN_STABLEHLO_TEXT_CURSOR_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {
namespace stablehlo {

// A read position in a text the caller keeps alive. Every reader skips leading whitespace and
// `//` comments first, never reads past the end, and on failure leaves an error naming what was
// expected, where (line:column, 1-based) and what was found.
class TextCursor {
 public:
  // Reads `text` from its start.
  explicit TextCursor(std::string_view text) : text_(text) {}

  // Skips whitespace and `//` comments.
  void SkipSpace();
  // True when only whitespace and comments are left.
  bool AtEnd();
  // The next character after whitespace, '\0' at the end.
  char Peek();
  // The character `ahead` characters after the next one (no skipping), '\0' past the end.
  char PeekAt(size_t ahead);
  // Consumes `token` when the text continues with it (after whitespace).
  bool TryConsume(std::string_view token);
  // Consumes the identifier `word` when it follows and is not the start of a longer identifier.
  bool TryConsumeKeyword(std::string_view word);
  // Consumes `token`, or fails with "expected <what>".
  Status Expect(std::string_view token, std::string_view what);

  // A bare identifier: [A-Za-z_][A-Za-z0-9_$.]*.
  StatusOr<std::string_view> BareIdentifier(std::string_view what);
  // The name after a sigil ('%', '^', '#', '!', '@' already consumed): [A-Za-z0-9_$.-]+.
  StatusOr<std::string_view> SuffixIdentifier(std::string_view what);
  // A string literal "..." with MLIR's escapes (\\, \", \n, \t, \XX hex) decoded.
  StatusOr<std::string> StringLiteral(std::string_view what);
  // A number token as written: [-+]?digits[.digits][e[+-]digits], or [-]0x hex digits.
  StatusOr<std::string_view> NumberToken(std::string_view what);
  // Decimal digits as an int64 (no sign).
  StatusOr<int64_t> DecimalInteger(std::string_view what);
  // After an opening bracket `open` ('<', '(', '[' or '{') has been consumed: the text up to the
  // matching closing bracket (which is consumed), with (), [], {}, <> nesting, string literals
  // and "->" arrows honoured.
  StatusOr<std::string_view> BalancedBody(char open, std::string_view what);

  // An INVALID_ARGUMENT error at the cursor: "<line>:<column>: expected <what>, found '<text>'".
  Status Error(std::string_view what);
  // The same at `offset`, with `message` as written (no "expected").
  Status ErrorAt(size_t offset, std::string_view message) const;

  // Offset of the next unread character (whitespace not skipped).
  size_t offset() const { return pos_; }
  // Moves to `offset` (an offset returned by offset()).
  void set_offset(size_t offset) { pos_ = offset < text_.size() ? offset : text_.size(); }
  // The whole text.
  std::string_view text() const { return text_; }
  // text()[begin, end).
  std::string_view Slice(size_t begin, size_t end) const;

 private:
  std::string_view text_;  // What is read.
  size_t pos_ = 0;         // Offset of the next unread character.
};

// True for characters that may continue a bare identifier.
bool IsIdentifierChar(char c);

}  // namespace stablehlo
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_STABLEHLO_TEXT_CURSOR_H_
