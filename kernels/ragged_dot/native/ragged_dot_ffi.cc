// XLA FFI handlers of the native ragged_dot: PjrtkitKernelsRaggedDotRows (the forward, and dlhs
// against rhs transposed) and PjrtkitKernelsRaggedDotGroups (drhs).
//
// Both take the group sizes (int32 [G]) and the group offset (int32 [1]; zero without one): the
// buffers hold the local groups [offset, offset + g) of the G sizes, the offset clamped to
// [0, G - g] as jax.lax.dynamic_slice clamps, negative sizes read as zero, runs clipped to the
// rows. Only buffers and attributes are decoded: nothing newer than XLA FFI 0.2, which
// pjrtkit's reference device declares.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/native/cpu_features.h"
#include "kernels/native/ffi_checks.h"
#include "kernels/ragged_dot/native/ragged_dot_kernel.h"
#include "xla/ffi/api/ffi.h"

namespace pjrtkit_kernels {
namespace {

namespace ffi = ::xla::ffi;

constexpr char kOp[] = "ragged_dot";

ffi::Error Invalid(const std::string& what) { return InvalidArgument(kOp, what); }

ffi::ErrorOr<ElementType> TypeOf(const ffi::AnyBuffer& buffer, const char* what) {
  return FloatTypeOf(buffer, kOp, what);
}

// Each local group's rows [start, end), from the group sizes and the offset (module comment).
struct Bounds {
  std::vector<int64_t> start;  // first row of each local group
  std::vector<int64_t> end;    // one past its last row

  GroupRows rows() const {
    return GroupRows{static_cast<int64_t>(start.size()), start.data(), end.data()};
  }
};

// Checks the group buffers; fills `b` for `local` groups over `rows` rows.
ffi::Error ReadBounds(const ffi::Buffer<ffi::S32>& sizes, const ffi::Buffer<ffi::S32>& offset,
                      int64_t local, int64_t rows, Bounds* b) {
  if (sizes.dimensions().size() != 1 || offset.element_count() != 1) {
    return Invalid("group_sizes must be [G] and group_offset [1] (int32)");
  }
  const int64_t total = sizes.dimensions()[0];
  if (local > total) {
    return Invalid("rhs holds " + std::to_string(local) + " groups, more than group_sizes' " +
                   std::to_string(total));
  }
  const int64_t first = std::clamp<int64_t>(offset.typed_data()[0], 0, total - local);
  b->start.assign(local, 0);
  b->end.assign(local, 0);
  int64_t cum = 0;
  for (int64_t i = 0; i < first + local; ++i) {
    const int64_t size = std::max<int32_t>(sizes.typed_data()[i], 0);
    if (i >= first) {
      b->start[i - first] = std::min(cum, rows);
      b->end[i - first] = std::min(cum + size, rows);
    }
    cum += size;
  }
  return ffi::Error::Success();
}

ffi::Error RowsProduct(ffi::AnyBuffer x, ffi::AnyBuffer w, ffi::Buffer<ffi::S32> group_sizes,
                       ffi::Buffer<ffi::S32> group_offset, ffi::Result<ffi::AnyBuffer> out,
                       int64_t w_transposed) {
  RaggedRowsArgs a;
  auto x_type = TypeOf(x, "x");
  if (x_type.has_error()) return x_type.error();
  auto w_type = TypeOf(w, "w");
  if (w_type.has_error()) return w_type.error();
  auto out_type = TypeOf(*out, "out");
  if (out_type.has_error()) return out_type.error();
  auto xd = x.dimensions();
  auto wd = w.dimensions();
  auto od = out->dimensions();
  if (xd.size() != 2 || wd.size() != 3 || od.size() != 2) {
    return Invalid("x must be [rows, depth], w [groups, depth, cols] ([groups, cols, depth] "
                   "when transposed) and out [rows, cols]");
  }
  a.rows = xd[0];
  a.depth = xd[1];
  a.cols = od[1];
  const int64_t w_depth = w_transposed ? wd[2] : wd[1];
  const int64_t w_cols = w_transposed ? wd[1] : wd[2];
  if (od[0] != a.rows || w_depth != a.depth || w_cols != a.cols) {
    return Invalid("shapes do not match: x [rows, depth], w's depth and cols, out [rows, cols]");
  }
  Bounds bounds;
  if (ffi::Error e = ReadBounds(group_sizes, group_offset, wd[0], a.rows, &bounds);
      e.failure()) {
    return e;
  }
  a.groups = bounds.rows();
  a.x_type = x_type.value();
  a.w_type = w_type.value();
  a.out_type = out_type.value();
  a.x = x.untyped_data();
  a.w = w.untyped_data();
  a.w_transposed = w_transposed != 0;
  a.out = out->untyped_data();
  // Probed for bfloat16 operands only: granting the tile state is process-wide (it raises the
  // smallest signal stack the process may install).
  a.amx = a.x_type == ElementType::kBF16 && a.w_type == ElementType::kBF16 &&
          CpuFeatures::AmxBf16();
  CpuFeatures::Pick(avx512::RaggedRowsProduct, avx2::RaggedRowsProduct,
                    generic::RaggedRowsProduct)(a);
  return ffi::Error::Success();
}

ffi::Error GroupsProduct(ffi::AnyBuffer x, ffi::AnyBuffer y, ffi::Buffer<ffi::S32> group_sizes,
                         ffi::Buffer<ffi::S32> group_offset, ffi::Result<ffi::AnyBuffer> out) {
  RaggedGroupsArgs a;
  auto x_type = TypeOf(x, "x");
  if (x_type.has_error()) return x_type.error();
  auto y_type = TypeOf(y, "y");
  if (y_type.has_error()) return y_type.error();
  auto out_type = TypeOf(*out, "out");
  if (out_type.has_error()) return out_type.error();
  auto xd = x.dimensions();
  auto yd = y.dimensions();
  auto od = out->dimensions();
  if (xd.size() != 2 || yd.size() != 2 || od.size() != 3 || xd[0] != yd[0] || od[1] != xd[1] ||
      od[2] != yd[1]) {
    return Invalid("x must be [rows, a], y [rows, b] and out [groups, a, b]");
  }
  a.rows = xd[0];
  a.x_cols = xd[1];
  a.y_cols = yd[1];
  Bounds bounds;
  if (ffi::Error e = ReadBounds(group_sizes, group_offset, od[0], a.rows, &bounds);
      e.failure()) {
    return e;
  }
  a.groups = bounds.rows();
  a.x_type = x_type.value();
  a.y_type = y_type.value();
  a.out_type = out_type.value();
  a.x = x.untyped_data();
  a.y = y.untyped_data();
  a.out = out->untyped_data();
  a.amx = a.x_type == ElementType::kBF16 && a.y_type == ElementType::kBF16 &&
          CpuFeatures::AmxBf16();
  CpuFeatures::Pick(avx512::RaggedGroupsProduct, avx2::RaggedGroupsProduct,
                    generic::RaggedGroupsProduct)(a);
  return ffi::Error::Success();
}

}  // namespace
}  // namespace pjrtkit_kernels

// The exported handler symbols (see layer_norm_ffi.cc).
#pragma GCC visibility push(default)
XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsRaggedDotRows, pjrtkit_kernels::RowsProduct,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::S32>>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::S32>>()
                                  .Ret<xla::ffi::AnyBuffer>()
                                  .Attr<int64_t>("w_transposed"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtkitKernelsRaggedDotGroups, pjrtkit_kernels::GroupsProduct,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::AnyBuffer>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::S32>>()
                                  .Arg<xla::ffi::Buffer<xla::ffi::S32>>()
                                  .Ret<xla::ffi::AnyBuffer>());
#pragma GCC visibility pop
