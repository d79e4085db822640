// XLA FFI handlers of the native layer norm: PjrtkitKernelsLayerNormFwd / ...Bwd.
//
// x is [rows, channels] float32 or bfloat16 (the Python side moves the normalised axis last and
// passes scale/offset as float32, ones/zeros when absent). The backward takes no mean/rstd: it
// recomputes them from x, so the forward's call is dead code when only the gradient is used.
// Only buffers and attributes are decoded: nothing newer than XLA FFI 0.2, which pjrtkit's
// reference device declares.
#include <cstdint>
#include <string>

#include "kernels/layer_norm/native/layer_norm_kernel.h"
#include "kernels/native/cpu_features.h"
#include "kernels/native/ffi_checks.h"
#include "xla/ffi/api/ffi.h"

namespace pjrtkit_kernels {
namespace {

namespace ffi = ::xla::ffi;

constexpr char kOp[] = "layer_norm";

// Checks x is 2-D and the per-channel / per-row buffers fit it (rows_buf < 0: no per-row buffer).
ffi::Error CheckShapes(const ffi::AnyBuffer& x, int64_t channels_buf, int64_t rows_buf) {
  auto dims = x.dimensions();
  if (dims.size() != 2) {
    return InvalidArgument(kOp, "x must be [rows, channels]");
  }
  if (channels_buf != dims[1] || (rows_buf >= 0 && rows_buf != dims[0])) {
    return InvalidArgument(kOp, "scale/offset must be [channels] and mean/rstd [rows]");
  }
  return ffi::Error::Success();
}

ffi::Error LayerNormFwd(ffi::AnyBuffer x, ffi::Buffer<ffi::F32> scale,
                        ffi::Buffer<ffi::F32> offset, ffi::Result<ffi::AnyBuffer> y,
                        ffi::Result<ffi::Buffer<ffi::F32>> mean,
                        ffi::Result<ffi::Buffer<ffi::F32>> rstd, float epsilon,
                        int64_t subtract_mean) {
  auto type = FloatTypeOf(x, kOp, "x");
  if (type.has_error()) return type.error();
  if (ffi::Error e = CheckShapes(x, scale.element_count(), mean->element_count()); e.failure()) {
    return e;
  }
  if (offset.element_count() != scale.element_count() ||
      rstd->element_count() != mean->element_count() || y->element_type() != x.element_type()) {
    return InvalidArgument(kOp, "mismatched buffers");
  }
  LayerNormArgs a;
  a.rows = x.dimensions()[0];
  a.channels = x.dimensions()[1];
  a.epsilon = epsilon;
  a.subtract_mean = subtract_mean != 0;
  a.type = type.value();
  a.x = x.untyped_data();
  a.scale = scale.typed_data();
  a.offset = offset.typed_data();
  a.y = y->untyped_data();
  a.mean = mean->typed_data();
  a.rstd = rstd->typed_data();
  CpuFeatures::Pick(avx512::LayerNormForward, avx2::LayerNormForward,
                    generic::LayerNormForward)(a);
  return ffi::Error::Success();
}

ffi::Error LayerNormBwd(ffi::AnyBuffer x, ffi::Buffer<ffi::F32> scale, ffi::AnyBuffer dy,
                        ffi::Result<ffi::AnyBuffer> dx, ffi::Result<ffi::Buffer<ffi::F32>> dscale,
                        ffi::Result<ffi::Buffer<ffi::F32>> doffset, float epsilon,
                        int64_t subtract_mean, int64_t param_grads) {
  auto type = FloatTypeOf(x, kOp, "x");
  if (type.has_error()) return type.error();
  if (ffi::Error e = CheckShapes(x, scale.element_count(), -1); e.failure()) {
    return e;
  }
  if (dy.element_type() != x.element_type() || dx->element_type() != x.element_type() ||
      dy.element_count() != x.element_count() ||
      dscale->element_count() != scale.element_count() ||
      doffset->element_count() != scale.element_count()) {
    return InvalidArgument(kOp, "mismatched buffers");
  }
  LayerNormArgs a;
  a.rows = x.dimensions()[0];
  a.channels = x.dimensions()[1];
  a.epsilon = epsilon;
  a.subtract_mean = subtract_mean != 0;
  a.param_grads = param_grads != 0;
  a.type = type.value();
  a.x = x.untyped_data();
  a.scale = scale.typed_data();
  a.dy = dy.untyped_data();
  a.dx = dx->untyped_data();
  a.dscale = dscale->typed_data();
  a.doffset = doffset->typed_data();
  CpuFeatures::Pick(avx512::LayerNormBackward, avx2::LayerNormBackward,
                    generic::LayerNormBackward)(a);
  return ffi::Error::Success();
}

}  // namespace
}  // namespace pjrtkit_kernels

// The exported handler symbols (the library's only exports; the handler objects inside are
// function-local statics, immutable after first use, as XLA_FFI_DEFINE_HANDLER makes them).
#pragma GCC visibility push(default)
XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsLayerNormFwd, pjrtkit_kernels::LayerNormFwd,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Attr<float>("epsilon")
                                  .Attr<int64_t>("subtract_mean"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsLayerNormBwd, pjrtkit_kernels::LayerNormBwd,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Ret<xla::ffi::Buffer<xla::ffi::F32>>()
                                  .Attr<float>("epsilon")
                                  .Attr<int64_t>("subtract_mean")
                                  .Attr<int64_t>("param_grads"));
#pragma GCC visibility pop
