#include "xla_plugin/client/layout_codec.h"

#include <cctype>
#include <limits>

namespace pjrtkit {
namespace {

// "{a,b,c}" of `values`.
std::string Join(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  return out;
}

// A cursor over layout text; every error names the offset.
class LayoutTextReader {
 public:
  explicit LayoutTextReader(std::string_view text) : text_(text) {}

  // True at the end of the text.
  bool AtEnd() const { return pos_ >= text_.size(); }
  // The next character (0 at the end).
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  // Consumes `c` when it is next.
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  // Consumes `c` or fails naming what was expected.
  Status Expect(char c) {
    if (Consume(c)) return OkStatus();
    return Error(std::string("expected '") + c + "'");
  }
  // A non-negative decimal integer.
  StatusOr<int64_t> Integer() {
    if (!std::isdigit(static_cast<unsigned char>(Peek()))) return Error("expected a number");
    int64_t value = 0;
    while (std::isdigit(static_cast<unsigned char>(Peek()))) {
      const int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        return Error("number out of range");
      }
      value = value * 10 + digit;
    }
    return value;
  }
  // Comma-separated integers; empty when one of `closers` is next.
  StatusOr<std::vector<int64_t>> IntegerList(std::string_view closers) {
    std::vector<int64_t> values;
    if (!AtEnd() && closers.find(Peek()) != std::string_view::npos) return values;
    do {
      PJRTKIT_ASSIGN_OR_RETURN(int64_t value, Integer());
      values.push_back(value);
    } while (Consume(','));
    return values;
  }
  // "(n)".
  StatusOr<int64_t> ParenthesizedInteger() {
    PJRTKIT_RETURN_IF_ERROR(Expect('('));
    PJRTKIT_ASSIGN_OR_RETURN(int64_t value, Integer());
    PJRTKIT_RETURN_IF_ERROR(Expect(')'));
    return value;
  }
  // INVALID_ARGUMENT "xla::Layout text '<text>': <what> at offset <n>".
  Status Error(const std::string& what) const {
    return InvalidArgument("xla::Layout text '" + std::string(text_) + "': " + what +
                           " at offset " + std::to_string(pos_));
  }
  // The text not read yet.
  std::string_view Rest() const { return text_.substr(pos_); }

 private:
  std::string_view text_;  // What is parsed.
  size_t pos_ = 0;         // Offset of the next character.
};

// minor_to_major without the dimensions of size 1.
std::vector<int64_t> WithoutUnitDimensions(const std::vector<int64_t>& minor_to_major,
                                           const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : minor_to_major) {
    if (d >= 0 && static_cast<size_t>(d) < dims.size() && dims[d] == 1) continue;
    out.push_back(d);
  }
  return out;
}

}  // namespace

MemoryLayout RowMajorLayout(size_t rank) {
  MemoryLayout layout;
  layout.minor_to_major.resize(rank);
  for (size_t i = 0; i < rank; ++i) layout.minor_to_major[i] = static_cast<int64_t>(rank - 1 - i);
  return layout;
}

Status CheckMemoryLayout(const MemoryLayout& layout, size_t rank) {
  const std::string m2m = "minor_to_major {" + Join(layout.minor_to_major) + "}";
  bool permutation = layout.minor_to_major.size() == rank;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; permutation && i < rank; ++i) {
    const int64_t d = layout.minor_to_major[i];
    permutation = d >= 0 && static_cast<size_t>(d) < rank && !seen[d];
    if (permutation) seen[d] = true;
  }
  if (!permutation) {
    return InvalidArgument("layout " + m2m + " is not a permutation of " + std::to_string(rank) +
                           " dimensions");
  }
  for (size_t t = 0; t < layout.tiles.size(); ++t) {
    const std::vector<int64_t>& tile = layout.tiles[t];
    bool positive = true;
    for (int64_t d : tile) positive = positive && d > 0;
    if (tile.empty() || tile.size() > rank || !positive) {
      return InvalidArgument("layout tile " + std::to_string(t) + " (" + Join(tile) +
                             ") must have 1.." + std::to_string(rank) +
                             " positive dimensions");
    }
  }
  if (layout.element_size_in_bits < 0 || layout.element_size_in_bits > 64) {
    return InvalidArgument("layout element_size_in_bits is " +
                           std::to_string(layout.element_size_in_bits) + ", accepted: 0..64");
  }
  return OkStatus();
}

std::string EncodeXlaLayout(const MemoryLayout& layout) {
  std::string out = "{" + Join(layout.minor_to_major);
  bool colon = false;
  const auto attribute = [&](const std::string& text) {
    if (!colon) out += ':';
    colon = true;
    out += text;
  };
  if (!layout.tiles.empty()) {
    std::string tiles = "T";
    for (const std::vector<int64_t>& tile : layout.tiles) tiles += "(" + Join(tile) + ")";
    attribute(tiles);
  }
  if (layout.element_size_in_bits != 0) {
    attribute("E(" + std::to_string(layout.element_size_in_bits) + ")");
  }
  return out + "}";
}

StatusOr<MemoryLayout> DecodeXlaLayout(std::string_view text) {
  LayoutTextReader reader(text);
  MemoryLayout layout;
  PJRTKIT_RETURN_IF_ERROR(reader.Expect('{'));
  PJRTKIT_ASSIGN_OR_RETURN(layout.minor_to_major, reader.IntegerList(":}"));
  if (reader.Peek() != '}' && reader.Peek() != ':') return reader.Error("expected ',' ':' or '}'");
  if (reader.Consume(':')) {
    while (reader.Peek() != '}' && !reader.AtEnd()) {
      if (reader.Consume('T')) {
        do {
          PJRTKIT_RETURN_IF_ERROR(reader.Expect('('));
          PJRTKIT_ASSIGN_OR_RETURN(std::vector<int64_t> tile, reader.IntegerList(")"));
          PJRTKIT_RETURN_IF_ERROR(reader.Expect(')'));
          layout.tiles.push_back(std::move(tile));
        } while (reader.Peek() == '(');
      } else if (reader.Consume('E')) {
        PJRTKIT_ASSIGN_OR_RETURN(layout.element_size_in_bits, reader.ParenthesizedInteger());
      } else if (reader.Consume('S')) {
        PJRTKIT_RETURN_IF_ERROR(reader.ParenthesizedInteger().status());  // Memory space: dropped.
      } else {
        return Unimplemented("xla::Layout text '" + std::string(text) + "': the attribute at '" +
                             std::string(reader.Rest()) +
                             "' is not supported by pjrtkit (accepted: T(...) tiles, E(n), S(n))");
      }
    }
  }
  PJRTKIT_RETURN_IF_ERROR(reader.Expect('}'));
  if (!reader.AtEnd()) return reader.Error("unexpected text after '}'");
  return layout;
}

bool SameElementOrder(const MemoryLayout& a, const MemoryLayout& b,
                      const std::vector<int64_t>& dims) {
  if (a.element_size_in_bits != b.element_size_in_bits || a.tiles != b.tiles) return false;
  if (a.minor_to_major == b.minor_to_major) return true;
  if (!a.tiles.empty()) return false;  // Tiles make every dimension count.
  for (int64_t d : dims) {
    if (d == 0) return true;  // No elements: every order is the same.
  }
  return WithoutUnitDimensions(a.minor_to_major, dims) ==
         WithoutUnitDimensions(b.minor_to_major, dims);
}

}  // namespace pjrtkit
