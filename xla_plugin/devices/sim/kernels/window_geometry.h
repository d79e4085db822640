// Window geometry of reduce_window and select_and_scatter: the checked parameters of each
// dimension, the number of windows, and for one window offset the outputs whose window element
// at that offset is an input element (not padding, not a base-dilation hole), as an arithmetic
// progression per dimension.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_WINDOW_GEOMETRY_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_WINDOW_GEOMETRY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/client/status.h"

namespace pjrtkit {
namespace sim {

// One dimension of a windowed op.
struct WindowDim {
  int64_t input = 0;            // Input size.
  int64_t size = 1;             // Window size.
  int64_t stride = 1;           // Window stride.
  int64_t base_dilation = 1;    // Input dilation.
  int64_t window_dilation = 1;  // Window dilation.
  int64_t pad_low = 0;          // Padding before (may be negative).
  int64_t pad_high = 0;         // Padding after (may be negative).
  int64_t output = 0;           // Number of windows (StableHLO's num_windows).
};

// The windowed op's attributes as given (empty optional vectors mean their defaults).
struct WindowAttributes {
  const std::vector<int64_t>* window_dimensions = nullptr;
  const std::vector<int64_t>* window_strides = nullptr;
  const std::vector<int64_t>* base_dilations = nullptr;    // nullptr: not an attribute of the op.
  const std::vector<int64_t>* window_dilations = nullptr;  // nullptr: not an attribute of the op.
  const std::vector<std::pair<int64_t, int64_t>>* padding = nullptr;
};

// Builds and checks the dimensions of a window over `input_dims`: window_dimensions has one entry
// per dimension, every other vector one per dimension or none (defaults: strides and dilations 1,
// padding 0); sizes, strides and dilations in [1, 2^40], padding in [-2^40, 2^40]; the dilated
// input fits in 2^61. Messages start with `op`.
Status MakeWindowDims(const char* op, const WindowAttributes& attributes,
                      const std::vector<int64_t>& input_dims, std::vector<WindowDim>* dims);

// The window outputs' dimensions.
std::vector<int64_t> WindowOutputDims(const std::vector<WindowDim>& dims);

// Outputs o = first + t * step (t < count) whose window element at offset k reads input
// in_first + t * in_step.
struct Progression {
  int64_t count = 0;
  int64_t first = 0;
  int64_t step = 1;
  int64_t in_first = 0;
  int64_t in_step = 1;
};

// The progression of dimension `dim` for window offset `k` (0 <= k < dim.size).
Progression ValidPositions(const WindowDim& dim, int64_t k);

// The window offsets k of `dim` that can reach an input element: [*first, *last] (empty when
// *first > *last), a superset of those whose ValidPositions are not empty.
void ReachingOffsets(const WindowDim& dim, int64_t* first, int64_t* last);

// The number of window offsets (all dimensions) that can reach an input element, saturated at
// 2^62.
int64_t CountReachingOffsets(const std::vector<WindowDim>& dims);

// Iterates the window offsets that can reach an input element, row-major.
class OffsetIterator {
 public:
  explicit OffsetIterator(const std::vector<WindowDim>& dims);
  // Whether there is a current offset.
  bool valid() const { return valid_; }
  // The current offset (one entry per dimension).
  const std::vector<int64_t>& offset() const { return offset_; }
  // Moves to the next offset.
  void Advance();

 private:
  std::vector<int64_t> first_, last_;  // Reaching range per dimension.
  std::vector<int64_t> offset_;        // Current offset.
  bool valid_ = true;                  // Whether offset_ is one.
};

// Iterates the (output offset, input offset) pairs of a box: the product of one progression per
// dimension, row-major, offsets in elements of row-major arrays.
class PairBox {
 public:
  // `progressions`, `out_strides` and `in_strides` have one entry per dimension.
  PairBox(const std::vector<Progression>& progressions, const std::vector<int64_t>& out_strides,
          const std::vector<int64_t>& in_strides);

  // Number of pairs in the box.
  int64_t size() const { return size_; }
  // Writes up to `max` next pairs; returns how many (0 when done).
  int64_t Next(int64_t max, int64_t* out_offsets, int64_t* in_offsets);

 private:
  std::vector<int64_t> count_;     // Progression length per dimension.
  std::vector<int64_t> out_step_;  // Output offset step per dimension.
  std::vector<int64_t> in_step_;   // Input offset step per dimension.
  std::vector<int64_t> index_;     // Current position (t per dimension).
  int64_t out_ = 0;                // Output offset of the current position.
  int64_t in_ = 0;                 // Input offset of the current position.
  int64_t size_ = 0;               // Pairs in the box.
  int64_t done_ = 0;               // Pairs produced.
};

}  // namespace sim
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_SIM_KERNELS_WINDOW_GEOMETRY_H_
