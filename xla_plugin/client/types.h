// Plain value types shared by the client layer: element types, attributes, layouts, statistics.
// Nothing here depends on the PJRT C API; the C-API layer converts (and static_asserts the values).
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_TYPES_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace pjrtkit {

// Element types of buffers. The numeric values equal PJRT_Buffer_Type.
enum class ElementType : int {
  kInvalid = 0,
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kF64 = 12,
  kBF16 = 13,
  kC64 = 14,
  kC128 = 15,
  kF8E5M2 = 16,
  kF8E4M3FN = 17,
  kF8E4M3B11FNUZ = 18,
  kF8E5M2FNUZ = 19,
  kF8E4M3FNUZ = 20,
  kS4 = 21,
  kU4 = 22,
  kToken = 23,
  kS2 = 24,
  kU2 = 25,
  kF8E4M3 = 26,
  kF8E3M4 = 27,
  kF8E8M0FNU = 28,
  kF4E2M1FN = 29,
  kS1 = 30,
  kU1 = 31,
  kF6E2M3FN = 32,
  kF6E3M2FN = 33,
};

// The largest ElementType value pjrtkit knows.
constexpr int kMaxElementType = static_cast<int>(ElementType::kF6E3M2FN);

// Size in bits of one element of `type` (0 for kInvalid and kToken).
int ElementTypeBits(ElementType type);

// Lower-case name of `type` ("f32", "bf16", "pred", ...).
const char* ElementTypeName(ElementType type);

// Dense size in bytes of an array of `type` with `dims` (sub-byte types are packed, rounded up).
size_t DenseByteSize(ElementType type, const std::vector<int64_t>& dims);

// How long the caller of BufferFromHostBuffer keeps the host data valid. Values equal
// PJRT_HostBufferSemantics.
enum class HostBufferSemantics : int {
  kImmutableOnlyDuringCall = 0,
  kImmutableUntilTransferCompletes = 1,
  kImmutableZeroCopy = 2,
  kMutableZeroCopy = 3,
};

// A named attribute or option value: int64, string, bool, float, or a list of int64.
using AttributeValue = std::variant<int64_t, std::string, bool, float, std::vector<int64_t>>;

// Ordered name -> value map (device attributes, plugin attributes, create options).
using AttributeMap = std::map<std::string, AttributeValue>;

// Name of the type held by `value` ("int64", "string", "bool", "float", "int64 list").
const char* AttributeTypeName(const AttributeValue& value);

// Memory statistics of a device (PJRT_Device_MemoryStats); unset optionals are "not reported".
// jaxlib's memory_stats() dict always has num_allocs, peak_bytes_in_use, largest_alloc_size,
// bytes_reserved, peak_bytes_reserved and largest_free_block_bytes (-1 when not reported) and has
// bytes_limit, bytes_reservable_limit, pool_bytes and peak_pool_bytes only when reported.
struct MemoryStats {
  int64_t bytes_in_use = 0;                              // Bytes held by live buffers.
  std::optional<int64_t> peak_bytes_in_use;              // Largest bytes_in_use seen.
  std::optional<int64_t> num_allocs;                     // Allocations ever made.
  std::optional<int64_t> largest_alloc_size;             // Largest single allocation.
  std::optional<int64_t> bytes_limit;                    // Upper limit of allocatable bytes.
  std::optional<int64_t> bytes_reserved;                 // Bytes reserved (not allocatable).
  std::optional<int64_t> peak_bytes_reserved;            // Largest bytes_reserved seen.
  std::optional<int64_t> bytes_reservable_limit;         // Upper limit of reservable bytes.
  std::optional<int64_t> largest_free_block_bytes;       // Largest block free now.
  std::optional<int64_t> pool_bytes;                     // Bytes the allocator holds.
  std::optional<int64_t> peak_pool_bytes;                // Largest pool_bytes seen.
  std::optional<int64_t> peak_allocated_bytes;           // Largest allocated bytes seen.
};

// A dense, tiled memory layout: minor_to_major order plus optional tiles (row-major when empty),
// and the size of one element in memory when the device packs it (xla::Layout's
// element_size_in_bits: e.g. 4 for int4 arrays stored two to a byte; 0 means the element type's
// own size, unpacked). layout_codec.h converts it to and from xla::Layout's text form.
struct MemoryLayout {
  std::vector<int64_t> minor_to_major;      // Dimension numbers, most minor first.
  std::vector<std::vector<int64_t>> tiles;  // Tile shapes, outermost tiling first.
  int64_t element_size_in_bits = 0;         // 0: not packed (the element type's own size).
};

// Compiled-memory statistics of an executable, in bytes.
struct CompiledMemoryStats {
  int64_t generated_code_size_in_bytes = 0;
  int64_t argument_size_in_bytes = 0;
  int64_t output_size_in_bytes = 0;
  int64_t alias_size_in_bytes = 0;
  int64_t temp_size_in_bytes = 0;
  int64_t host_generated_code_size_in_bytes = 0;
  int64_t host_argument_size_in_bytes = 0;
  int64_t host_output_size_in_bytes = 0;
  int64_t host_alias_size_in_bytes = 0;
  int64_t host_temp_size_in_bytes = 0;
  int64_t peak_memory_in_bytes = 0;
  int64_t total_size_in_bytes = 0;
  int64_t total_allocation_bytes = 0;
  int64_t indefinite_allocations = 0;
  int64_t peak_unpadded_heap_bytes = 0;
};

// A program handed to Compile: its format ("mlir" for StableHLO text or bytecode, "hlo" for a
// serialized HloModuleProto) and its bytes.
struct Program {
  std::string format;
  std::string code;
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_TYPES_H_
