#include "xla_plugin/client/topology_codec.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace pjrtkit {
namespace {

// First line of the format.
constexpr char kMagic[] = "pjrtkit-topology";
constexpr int64_t kVersion = 2;

// "<size>:<text>".
std::string Quoted(const std::string& text) { return std::to_string(text.size()) + ":" + text; }

// One attribute value as "<tag> <value>".
std::string EncodeValue(const AttributeValue& value) {
  switch (value.index()) {
    case 0:
      return "i " + std::to_string(std::get<int64_t>(value));
    case 1:
      return "s " + Quoted(std::get<std::string>(value));
    case 2:
      return std::string("b ") + (std::get<bool>(value) ? "1" : "0");
    case 3: {
      const float f = std::get<float>(value);
      uint32_t bits = 0;
      std::memcpy(&bits, &f, sizeof(bits));
      char hex[9];
      std::snprintf(hex, sizeof(hex), "%08x", bits);
      return std::string("f ") + hex;
    }
    default: {
      const std::vector<int64_t>& list = std::get<std::vector<int64_t>>(value);
      std::string out = "l " + std::to_string(list.size());
      for (int64_t v : list) out += " " + std::to_string(v);
      return out;
    }
  }
}

// "attr <name> <value>" lines of `attributes`.
std::string EncodeAttributes(const AttributeMap& attributes) {
  std::string out;
  for (const auto& entry : attributes) {
    out += "attr " + Quoted(entry.first) + " " + EncodeValue(entry.second) + "\n";
  }
  return out;
}

// Reads the tokens of the format; every error names the byte offset.
class TopologyTextReader {
 public:
  explicit TopologyTextReader(const std::string& bytes) : bytes_(bytes) {}

  // The next space/newline-separated word.
  StatusOr<std::string> Word() {
    SkipSpace();
    const size_t start = pos_;
    while (pos_ < bytes_.size() && bytes_[pos_] != ' ' && bytes_[pos_] != '\n') ++pos_;
    if (pos_ == start) return Error("a word");
    return bytes_.substr(start, pos_ - start);
  }
  // OK when the next word is `word`.
  Status Expect(const std::string& word) {
    const size_t at = pos_;
    StatusOr<std::string> got = Word();
    if (!got.ok() || *got != word) {
      pos_ = at;
      return Error(("'" + word + "'").c_str());
    }
    return OkStatus();
  }
  // A decimal int64.
  StatusOr<int64_t> Int() {
    const size_t at = pos_;
    PJRTKIT_ASSIGN_OR_RETURN(std::string word, Word());
    errno = 0;
    char* end = nullptr;
    const long long value = std::strtoll(word.c_str(), &end, 10);
    if (errno != 0 || end != word.c_str() + word.size()) {
      pos_ = at;
      return Error("an integer");
    }
    return static_cast<int64_t>(value);
  }
  // A count that cannot exceed the bytes left (each entry takes at least one).
  StatusOr<size_t> Count() {
    PJRTKIT_ASSIGN_OR_RETURN(int64_t value, Int());
    if (value < 0 || static_cast<size_t>(value) > bytes_.size() - pos_) return Error("a count");
    return static_cast<size_t>(value);
  }
  // A length-prefixed string.
  StatusOr<std::string> String() {
    SkipSpace();
    const size_t colon = bytes_.find(':', pos_);
    if (colon == std::string::npos) return Error("a <size>:<text> string");
    const std::string digits = bytes_.substr(pos_, colon - pos_);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
        digits.size() > 18) {
      return Error("a <size>:<text> string");
    }
    const size_t size = static_cast<size_t>(std::stoll(digits));
    if (size > bytes_.size() - colon - 1) return Error("a string within the bytes");
    pos_ = colon + 1 + size;
    return bytes_.substr(colon + 1, size);
  }
  // One tagged attribute value.
  StatusOr<AttributeValue> Value() {
    PJRTKIT_ASSIGN_OR_RETURN(std::string tag, Word());
    if (tag == "i") {
      PJRTKIT_ASSIGN_OR_RETURN(int64_t v, Int());
      return AttributeValue(v);
    }
    if (tag == "s") {
      PJRTKIT_ASSIGN_OR_RETURN(std::string v, String());
      return AttributeValue(std::move(v));
    }
    if (tag == "b") {
      PJRTKIT_ASSIGN_OR_RETURN(int64_t v, Int());
      if (v != 0 && v != 1) return Error("0 or 1");
      return AttributeValue(v == 1);
    }
    if (tag == "f") {
      PJRTKIT_ASSIGN_OR_RETURN(std::string hex, Word());
      char* end = nullptr;
      const unsigned long bits = std::strtoul(hex.c_str(), &end, 16);
      if (hex.size() != 8 || end != hex.c_str() + hex.size()) return Error("8 hex digits");
      const uint32_t bits32 = static_cast<uint32_t>(bits);
      float f = 0;
      std::memcpy(&f, &bits32, sizeof(f));
      return AttributeValue(f);
    }
    if (tag == "l") {
      PJRTKIT_ASSIGN_OR_RETURN(size_t count, Count());
      std::vector<int64_t> list;
      for (size_t i = 0; i < count; ++i) {
        PJRTKIT_ASSIGN_OR_RETURN(int64_t v, Int());
        list.push_back(v);
      }
      return AttributeValue(std::move(list));
    }
    return Error("an attribute type (i, s, b, f or l)");
  }
  // `count` "attr" lines.
  StatusOr<AttributeMap> Attributes(size_t count) {
    AttributeMap attributes;
    for (size_t i = 0; i < count; ++i) {
      PJRTKIT_RETURN_IF_ERROR(Expect("attr"));
      PJRTKIT_ASSIGN_OR_RETURN(std::string name, String());
      PJRTKIT_ASSIGN_OR_RETURN(AttributeValue value, Value());
      attributes[name] = std::move(value);
    }
    return attributes;
  }
  // True when only whitespace is left.
  bool AtEnd() {
    SkipSpace();
    return pos_ == bytes_.size();
  }
  // INVALID_ARGUMENT "Topology::Deserialize: expected <what> at byte <pos>".
  Status Error(const char* what) const {
    return InvalidArgument("Topology::Deserialize: expected " + std::string(what) + " at byte " +
                           std::to_string(pos_) + " of " + std::to_string(bytes_.size()) +
                           " (bytes made by Topology::Serialize, format " + kMagic + " " +
                           std::to_string(kVersion) + ")");
  }

 private:
  void SkipSpace() {
    while (pos_ < bytes_.size() && (bytes_[pos_] == ' ' || bytes_[pos_] == '\n')) ++pos_;
  }

  const std::string& bytes_;  // The serialized topology.
  size_t pos_ = 0;            // Next unread byte.
};

}  // namespace

std::string EncodeTopology(const Topology& topology) {
  std::string out = std::string(kMagic) + " " + std::to_string(kVersion) + "\n";
  out += "platform " + Quoted(topology.platform_name()) + "\n";
  out += "version " + Quoted(topology.platform_version()) + "\n";
  out += "attributes " + std::to_string(topology.attributes().size()) + "\n";
  out += EncodeAttributes(topology.attributes());
  out += "devices " + std::to_string(topology.devices().size()) + "\n";
  for (const DeviceDescription& d : topology.devices()) {
    out += "device " + std::to_string(d.id()) + " " + std::to_string(d.process_index()) + " " +
           Quoted(d.kind()) + " " + Quoted(d.debug_string()) + " " + Quoted(d.to_string()) +
           " " + std::to_string(d.attributes().size()) + "\n";
    out += EncodeAttributes(d.attributes());
  }
  return out;
}

StatusOr<std::unique_ptr<Topology>> DecodeTopology(const std::string& bytes) {
  TopologyTextReader in(bytes);
  PJRTKIT_RETURN_IF_ERROR(in.Expect(kMagic));
  PJRTKIT_RETURN_IF_ERROR(in.Expect(std::to_string(kVersion)));
  PJRTKIT_RETURN_IF_ERROR(in.Expect("platform"));
  PJRTKIT_ASSIGN_OR_RETURN(std::string platform, in.String());
  PJRTKIT_RETURN_IF_ERROR(in.Expect("version"));
  PJRTKIT_ASSIGN_OR_RETURN(std::string version, in.String());
  PJRTKIT_RETURN_IF_ERROR(in.Expect("attributes"));
  PJRTKIT_ASSIGN_OR_RETURN(size_t num_attributes, in.Count());
  PJRTKIT_ASSIGN_OR_RETURN(AttributeMap attributes, in.Attributes(num_attributes));
  PJRTKIT_RETURN_IF_ERROR(in.Expect("devices"));
  PJRTKIT_ASSIGN_OR_RETURN(size_t num_devices, in.Count());
  std::vector<DeviceDescription> devices;
  for (size_t i = 0; i < num_devices; ++i) {
    PJRTKIT_RETURN_IF_ERROR(in.Expect("device"));
    PJRTKIT_ASSIGN_OR_RETURN(int64_t id, in.Int());
    PJRTKIT_ASSIGN_OR_RETURN(int64_t process_index, in.Int());
    if (id < 0 || id > INT32_MAX || process_index < 0 || process_index > INT32_MAX) {
      return in.Error("a device id and process index in [0, 2^31)");
    }
    PJRTKIT_ASSIGN_OR_RETURN(std::string kind, in.String());
    PJRTKIT_ASSIGN_OR_RETURN(std::string debug_string, in.String());
    PJRTKIT_ASSIGN_OR_RETURN(std::string to_string, in.String());
    PJRTKIT_ASSIGN_OR_RETURN(size_t count, in.Count());
    PJRTKIT_ASSIGN_OR_RETURN(AttributeMap device_attributes, in.Attributes(count));
    devices.emplace_back(static_cast<int>(id), static_cast<int>(process_index), std::move(kind),
                         std::move(debug_string), std::move(to_string),
                         std::move(device_attributes));
  }
  if (!in.AtEnd()) return in.Error("the end of the bytes");
  return std::make_unique<Topology>(std::move(platform), std::move(version), std::move(devices),
                                    std::move(attributes));
}

}  // namespace pjrtkit
