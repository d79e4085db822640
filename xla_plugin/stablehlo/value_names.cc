#include "xla_plugin/stablehlo/value_names.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

// The number in "123" (no leading zeros, at most 9 digits), or -1.
int64_t NameNumber(std::string_view digits) {
  if (digits.empty() || digits.size() > 9 || (digits[0] == '0' && digits.size() > 1)) return -1;
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

ValueNames::Entry* ValueNames::Slot(std::string_view name, bool grow) {
  Numbered* numbered = &numbers_;
  if (name.substr(0, 3) == "arg") {
    numbered = &arguments_;
    name.remove_prefix(3);
  }
  const int64_t number = NameNumber(name);
  if (number < 0) return nullptr;
  if (numbered->base < 0) {
    if (!grow) return nullptr;
    numbered->base = number;
  }
  const int64_t index = number - numbered->base;
  const int64_t size = static_cast<int64_t>(numbered->entries.size());
  if (index < 0 || index >= size + (grow ? kMaxGrowth : 0)) return nullptr;
  if (index >= size) numbered->entries.resize(index + 1);
  return &numbered->entries[index];
}

const ValueNames::Entry* ValueNames::Find(std::string_view name) const {
  const Entry* slot = const_cast<ValueNames*>(this)->Slot(name, /*grow=*/false);
  if (slot != nullptr && slot->count > 0) return slot;
  // A numbered name outside the vectors when it was defined is hashed.
  auto it = others_.find(std::string(name));
  return it == others_.end() ? nullptr : &it->second;
}

bool ValueNames::Insert(std::string_view name, Entry entry) {
  if (Find(name) != nullptr) return false;
  Entry* slot = Slot(name, /*grow=*/true);
  if (slot != nullptr) {
    *slot = entry;
  } else {
    others_.emplace(std::string(name), entry);
  }
  return true;
}

void ValueNames::Erase(std::string_view name) {
  Entry* slot = Slot(name, /*grow=*/false);
  if (slot != nullptr && slot->count > 0) {
    *slot = Entry();
  } else {
    others_.erase(std::string(name));
  }
}

}  // namespace stablehlo
}  // namespace pjrtkit
