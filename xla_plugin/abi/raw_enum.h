// The int in a C enum field another party filled in (a framework's arguments, an inner plugin's
// results). Read as bytes: loading a value outside the enumeration's range as the enum is
// undefined behaviour (UBSan flagged PJRT_Buffer_Type 9999, PJRT_NamedValue_Type 255,
// PJRT_HostBufferSemantics 42, PJRT_Buffer_MemoryLayout_Type 7).
#ifndef PJRTKIT_XLA_PLUGIN_ABI_RAW_ENUM_H_
#define PJRTKIT_XLA_PLUGIN_ABI_RAW_ENUM_H_

#include <cstring>

namespace pjrtkit {

template <typename Enum>
inline int RawEnumValue(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int), "a C enum the size of an int");
  int value = 0;
  std::memcpy(&value, &field, sizeof(value));
  return value;
}

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_ABI_RAW_ENUM_H_
