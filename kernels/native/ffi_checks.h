// Argument checks the native kernels' XLA FFI handlers share.
#ifndef PJRTKIT_KERNELS_NATIVE_FFI_CHECKS_H_
#define PJRTKIT_KERNELS_NATIVE_FFI_CHECKS_H_

#include <string_view>

#include "kernels/native/bfloat16.h"
#include "xla/ffi/api/ffi.h"

namespace pjrtkit_kernels {

// InvalidArgument with the message "pjrtkit native <op>: <what>".
::xla::ffi::Error InvalidArgument(std::string_view op, std::string_view what);

// The kernels' element type of `buffer` (float32 or bfloat16), else InvalidArgument saying that
// `what` must be one of them.
::xla::ffi::ErrorOr<ElementType> FloatTypeOf(const ::xla::ffi::AnyBuffer& buffer,
                                             std::string_view op, std::string_view what);

}  // namespace pjrtkit_kernels

#endif  // PJRTKIT_KERNELS_NATIVE_FFI_CHECKS_H_
