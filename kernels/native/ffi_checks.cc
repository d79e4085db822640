#include "kernels/native/ffi_checks.h"

#include <string>

namespace pjrtkit_kernels {

namespace ffi = ::xla::ffi;

ffi::Error InvalidArgument(std::string_view op, std::string_view what) {
  std::string message = "pjrtkit native ";
  message.append(op).append(": ").append(what);
  return ffi::Error::InvalidArgument(message);
}

ffi::ErrorOr<ElementType> FloatTypeOf(const ffi::AnyBuffer& buffer, std::string_view op,
                                      std::string_view what) {
  switch (buffer.element_type()) {
    case ffi::DataType::F32:
      return ElementType::kF32;
    case ffi::DataType::BF16:
      return ElementType::kBF16;
    default:
      return ffi::Unexpected(
          InvalidArgument(op, std::string(what) + " must be float32 or bfloat16"));
  }
}

}  // namespace pjrtkit_kernels
