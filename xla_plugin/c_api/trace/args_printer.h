// ArgsPrinter: the visitor TraceFields<Args>::Visit drives to write one phase of a trace line:
// the inputs (members the header does not mark `// out`) or, after a successful call, the
// outputs (`// out` and `// in/out`). Members past the caller's struct_size are not read.
//
// By type: a handle is its id ("buffer#3", or "src=buffer#3" when the member is named otherwise;
// "name=null"); bool, integers and enums (by enumerator name) their value; an array with its
// count member: handles and numbers as [a,b] (at most 16, then "..."), named values as their
// names, chars as a quoted string (its first line, at most 64 bytes; "<N bytes>" when not
// printable), others as
// their count ("dst_size=16"). Anything else (callbacks, user data, option structs) is left out.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TRACE_ARGS_PRINTER_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TRACE_ARGS_PRINTER_H_

// C++ standard library.
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "xla_plugin/c_api/trace/handle_ids.h"
#include "xla_plugin/c_api/trace/trace_fields.h"

namespace pjrtkit {
namespace capi {
namespace trace {

// Appends the first line of `text` quoted: printable ASCII as is (\" and \\ escaped), at most
// `limit` bytes ("..." before the closing quote when cut), or "<N bytes>" when that line holds
// other bytes.
void AppendQuoted(std::string& out, const char* text, size_t size, size_t limit = 64);

template <typename Args>
class ArgsPrinter {
 public:
  // Which members a pass prints.
  enum class Phase { kInputs, kOutputs };

  // Prints members of `args` (non-null) into `out`, naming handles through `ids`. With
  // `collect_handles`, the handles printed are also kept (handles(): a _Destroy slot forgets
  // them).
  ArgsPrinter(const Args* args, Phase phase, HandleIds& ids, std::string& out,
              bool collect_handles = false)
      : args_(args), phase_(phase), ids_(ids), out_(out), collect_(collect_handles) {}

  // One member.
  template <typename T>
  void Field(const char* name, T Args::*member, Direction direction) {
    if (!Wanted(direction) || !Present(member)) return;
    const T& value = args_->*member;
    if constexpr (IsHandlePointer<T>()) {
      Handle(name, value);
    } else if constexpr (std::is_same_v<T, bool>) {
      Named(name) += value ? "true" : "false";
    } else if constexpr (std::is_enum_v<T>) {
      const char* enumerator = TraceEnumName(value);
      Named(name) += enumerator ? enumerator : std::to_string(static_cast<long long>(value));
    } else if constexpr (std::is_integral_v<T>) {
      Named(name) += std::to_string(value);
    }
  }

  // An array `pointer` of `count` elements.
  template <typename P, typename N>
  void Array(const char* name, const char* count_name, P Args::*pointer, N Args::*count,
             Direction direction) {
    if (!Wanted(direction) || !Present(pointer) || !Present(count)) return;
    using E = std::remove_cv_t<std::remove_pointer_t<P>>;
    const auto* data = args_->*pointer;
    const size_t size = static_cast<size_t>(args_->*count);
    if constexpr (std::is_same_v<E, char>) {
      if (data == nullptr) {
        Named(name) += "null";
      } else {
        AppendQuoted(Named(name), data, size);
      }
    } else if constexpr (IsHandlePointer<E>() || std::is_arithmetic_v<E> ||
                         std::is_enum_v<E> || std::is_same_v<E, PJRT_NamedValue>) {
      std::string& out = Named(name);
      if (data == nullptr && size > 0) {
        out += "null";
        return;
      }
      out += "[";
      for (size_t i = 0; i < size && i < kMaxElements; ++i) {
        if (i > 0) out += ",";
        if constexpr (IsHandlePointer<E>()) {
          out += HandleName(data[i]);
        } else if constexpr (std::is_same_v<E, PJRT_NamedValue>) {
          out += data[i].name ? std::string(data[i].name, data[i].name_size) : "null";
        } else if constexpr (std::is_enum_v<E>) {
          const char* enumerator = TraceEnumName(data[i]);
          out += enumerator ? enumerator : std::to_string(static_cast<long long>(data[i]));
        } else if constexpr (std::is_floating_point_v<E>) {
          out += std::to_string(data[i]);
        } else {
          out += std::to_string(data[i]);
        }
      }
      if (size > kMaxElements) out += ",...";
      out += "]";
    } else {
      if (data == nullptr) Named(name) += "null";
      Named(count_name) += std::to_string(size);
    }
  }

  // A word of a slot's own details (see call_details.h): " key=value".
  std::string& Named(const char* name) {
    out_ += " ";
    out_ += name;
    out_ += "=";
    return out_;
  }
  // The id of `handle` ("null" for none).
  template <typename H>
  std::string HandleName(H* handle) {
    if (handle == nullptr) return "null";
    using Kind = HandleKindOf<std::remove_cv_t<H>>;
    if (collect_) handles_.emplace_back(Kind::kind, handle);
    return ids_.Name(Kind::kind, handle);
  }
  // " name=kind#N", or " kind#N" when the member is named after its kind.
  template <typename H>
  void Handle(const char* name, H* handle) {
    using Kind = HandleKindOf<std::remove_cv_t<H>>;
    out_ += " ";
    if (handle == nullptr || std::strcmp(name, HandleKindName(Kind::kind)) != 0) {
      out_ += name;
      out_ += "=";
    }
    out_ += HandleName(handle);
  }
  // Whether `member` lies within the caller's struct_size.
  template <typename T>
  bool Present(T Args::*member) const {
    const size_t offset = reinterpret_cast<const char*>(&(args_->*member)) -
                          reinterpret_cast<const char*>(args_);
    return offset + sizeof(T) <= args_->struct_size;
  }
  bool inputs() const { return phase_ == Phase::kInputs; }
  const Args* args() const { return args_; }
  const std::vector<std::pair<HandleKind, const void*>>& handles() const { return handles_; }

 private:
  static constexpr size_t kMaxElements = 16;

  template <typename T>
  static constexpr bool IsHandlePointer() {
    if constexpr (std::is_pointer_v<T>) {
      return HandleKindOf<std::remove_cv_t<std::remove_pointer_t<T>>>::known;
    } else {
      return false;
    }
  }
  bool Wanted(Direction direction) const {
    return (phase_ == Phase::kInputs) == (direction == Direction::kIn);
  }

  const Args* args_;
  const Phase phase_;
  HandleIds& ids_;
  std::string& out_;
  const bool collect_;
  std::vector<std::pair<HandleKind, const void*>> handles_;
};

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TRACE_ARGS_PRINTER_H_
