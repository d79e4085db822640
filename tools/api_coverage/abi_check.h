// AbiCheck: is a struct size a plugin was built with compatible with pjrtkit's headers? It must
// end right after one of the fields of our (pinned) header's struct, so that the plugin's struct
// is a prefix of ours; and when we hold the header of the plugin's own version, it must equal
// that header's NAME_STRUCT_SIZE exactly.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_ABI_CHECK_H_
#define PJRTKIT_TOOLS_API_COVERAGE_ABI_CHECK_H_

// C++ standard library.
#include <cstddef>
#include <string>

// pjrtkit.
#include "tools/pjrt_headers/header_layout.h"

namespace api_coverage {

// The verdict on one size.
struct SizeCheck {
  // Against the pinned header.
  enum class Prefix {
    kAtField,        // Ends right after `field`: a prefix of our struct.
    kNewer,          // Longer than our struct, from a plugin newer than our header.
    kMismatch,       // No field of our struct ends there.
    kUnknownStruct,  // Our header has no such struct: not checked.
  };
  // Against the header of the plugin's own version.
  enum class Exact {
    kNotChecked,   // We hold no header of the plugin's version.
    kEqual,        // Equals its NAME_STRUCT_SIZE.
    kDiffers,      // Differs from it (`exact_size`).
    kNotInHeader,  // That header defines no NAME_STRUCT_SIZE for the struct.
  };

  std::string struct_name;  // The struct checked.
  std::string named;        // The name in the plugin's answer, when it differs from struct_name.
  bool named_unknown = false;  // `named` is in neither header: checked as the slot's Args.
  Prefix prefix = Prefix::kUnknownStruct;
  std::string field;        // The member the size ends after (kAtField).
  size_t our_size = 0;      // sizeof our struct (not kUnknownStruct).
  Exact exact = Exact::kNotChecked;
  size_t exact_size = 0;    // The other header's NAME_STRUCT_SIZE (kEqual, kDiffers).

  // True when neither comparison found a mismatch.
  bool ok() const { return prefix != Prefix::kMismatch && exact != Exact::kDiffers; }
};

class AbiCheck {
 public:
  // `pinned` is pjrtkit's header; `same_version` the header whose version equals the plugin's
  // (nullptr when we hold none); `plugin_newer` whether the plugin's minor version exceeds ours.
  AbiCheck(const pjrt_headers::HeaderLayout& pinned,
           const pjrt_headers::HeaderLayout* same_version, bool plugin_newer);

  // Checks `size`, which the plugin's answer to `slot` named as the size of `named`. The struct
  // checked is `named` when our header knows it (also ignoring case, or with "_Args" added),
  // else the slot's Args struct.
  SizeCheck CheckSlotArgs(const std::string& slot, const std::string& named, size_t size) const;

  // Checks `size` as the size of struct `name` (PJRT_Api, an extension struct).
  SizeCheck CheckStruct(const std::string& name, size_t size) const;

  // The pinned-header column of a report row ("ends after client", "MISMATCH: ...").
  static std::string PrefixText(const SizeCheck& check, size_t size);

  // The same-version column of a report row ("= 40", "MISMATCH: ...", "-").
  static std::string ExactText(const SizeCheck& check);

 private:
  // The struct of our header that `named` (from the answer to `slot`) means, or "".
  std::string Resolve(const std::string& named) const;

  const pjrt_headers::HeaderLayout& pinned_;        // Our header.
  const pjrt_headers::HeaderLayout* same_version_;  // The plugin's version's header, or nullptr.
  bool plugin_newer_;                               // Its minor version is above ours.
};

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_ABI_CHECK_H_
