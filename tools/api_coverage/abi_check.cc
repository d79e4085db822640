#include "tools/api_coverage/abi_check.h"

namespace api_coverage {

using pjrt_headers::FieldEnd;
using pjrt_headers::HeaderLayout;
using pjrt_headers::StructLayout;

AbiCheck::AbiCheck(const HeaderLayout& pinned, const HeaderLayout* same_version,
                   bool plugin_newer)
    : pinned_(pinned), same_version_(same_version), plugin_newer_(plugin_newer) {}

std::string AbiCheck::Resolve(const std::string& named) const {
  if (named.empty()) return "";
  if (const StructLayout* s = pinned_.FindStruct(named)) return s->name;
  if (const StructLayout* s = pinned_.FindStructIgnoringCase(named)) return s->name;
  if (const StructLayout* s = pinned_.FindStruct(named + "_Args")) return s->name;
  return "";
}

SizeCheck AbiCheck::CheckSlotArgs(const std::string& slot, const std::string& named,
                                  size_t size) const {
  std::string resolved = Resolve(named);
  const bool unknown = resolved.empty();
  if (unknown) resolved = slot + "_Args";
  SizeCheck check = CheckStruct(resolved, size);
  if (named != check.struct_name) check.named = named;
  check.named_unknown = unknown && !named.empty();
  return check;
}

SizeCheck AbiCheck::CheckStruct(const std::string& name, size_t size) const {
  SizeCheck check;
  check.struct_name = name;
  if (const StructLayout* ours = pinned_.FindStruct(name)) {
    check.our_size = ours->size;
    if (const FieldEnd* field = HeaderLayout::FieldEndingAt(*ours, size)) {
      check.prefix = SizeCheck::Prefix::kAtField;
      check.field = field->name;
    } else if (plugin_newer_ && size > ours->size) {
      check.prefix = SizeCheck::Prefix::kNewer;
    } else {
      check.prefix = SizeCheck::Prefix::kMismatch;
    }
  }
  if (same_version_ != nullptr) {
    const StructLayout* theirs = same_version_->FindStruct(name);
    if (theirs == nullptr || theirs->struct_size == 0) {
      check.exact = SizeCheck::Exact::kNotInHeader;
    } else {
      check.exact_size = theirs->struct_size;
      check.exact =
          theirs->struct_size == size ? SizeCheck::Exact::kEqual : SizeCheck::Exact::kDiffers;
    }
  }
  return check;
}

std::string AbiCheck::PrefixText(const SizeCheck& check, size_t size) {
  switch (check.prefix) {
    case SizeCheck::Prefix::kAtField:
      return "ends after " + check.field;
    case SizeCheck::Prefix::kNewer:
      return "beyond our " + std::to_string(check.our_size) + " bytes (newer plugin)";
    case SizeCheck::Prefix::kMismatch:
      return "MISMATCH: no field ends at " + std::to_string(size) + " (sizeof " +
             std::to_string(check.our_size) + ")";
    case SizeCheck::Prefix::kUnknownStruct:
      return "not in our header";
  }
  return "?";
}

std::string AbiCheck::ExactText(const SizeCheck& check) {
  switch (check.exact) {
    case SizeCheck::Exact::kNotChecked:
      return "-";
    case SizeCheck::Exact::kEqual:
      return "= " + std::to_string(check.exact_size);
    case SizeCheck::Exact::kDiffers:
      return "MISMATCH: _STRUCT_SIZE is " + std::to_string(check.exact_size);
    case SizeCheck::Exact::kNotInHeader:
      return "no _STRUCT_SIZE";
  }
  return "?";
}

}  // namespace api_coverage
