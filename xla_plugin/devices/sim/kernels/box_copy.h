// BoxCopy: copies an N-dimensional box of elements between two strided layouts; the engine of the
// data movement and gather kernels (internal to them).
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_BOX_COPY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_BOX_COPY_H_

#include <cstdint>
#include <vector>

namespace pjrtkit {
namespace sim {

// A copy planned once and run many times (gather runs one per index): for every index i of the
// box `dims`, dst[sum(i[k] * dst_strides[k])] = src[sum(i[k] * src_strides[k])], strides in
// elements (source strides may be negative or 0), pointers at the box's first element. Elements
// are copied as bytes, so only the element size matters.
//
// The plan drops unit dimensions and merges dimensions that are contiguous in both layouts, then
// picks the cheapest loop: one memcpy, rows of memcpy, an element loop, or, when the source is
// contiguous along another dimension than the destination (a transpose), 2-D tiles of both.
class BoxCopy {
 public:
  // Plans the copy. element_bytes is 1, 2, 4, 8 or 16 (any other size copies with memcpy per
  // element); the three vectors have the same length.
  BoxCopy(int64_t element_bytes, const std::vector<int64_t>& dims,
          const std::vector<int64_t>& src_strides, const std::vector<int64_t>& dst_strides);

  // Copies the box from `src` to `dst` (each the address of the box's first element).
  void Run(const char* src, char* dst) const;

  // Elements in the box.
  int64_t num_elements() const { return num_elements_; }

 private:
  // How Run loops.
  enum class Mode { kEmpty, kContiguous, kRows, kElements, kTiles };
  // Copies `n` elements from src (byte stride ss) to dst (byte stride ds).
  using RowFn = void (*)(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n);

  // Runs the kTiles loop for one position of the outer dimensions.
  void RunTiles(const char* src, char* dst) const;

  int64_t element_bytes_;     // Bytes of one element.
  int64_t num_elements_ = 0;  // Elements in the box.
  Mode mode_ = Mode::kEmpty;  // The loop Run uses.
  RowFn row_fn_ = nullptr;    // The typed element loop.
  // The merged box, outermost first, strides in bytes. For kRows, kElements and kTiles the last
  // dimension is the inner loop; for kTiles `tile_dim_` (< last) is the source-contiguous one and
  // the outer loop skips it.
  std::vector<int64_t> dims_, src_strides_, dst_strides_;
  int tile_dim_ = -1;
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_BOX_COPY_H_
