// Host <-> device transfers: every JAX element type, special shapes, strides, host-buffer
// semantics, and the PJRT_Buffer_ToHostBuffer size protocol.
#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

// Deterministic, valid bytes for `count` elements of `type` (finite floats, 0/1 preds,
// integers reaching the top bits).
std::vector<char> Pattern(PJRT_Buffer_Type type, int64_t count) {
  const size_t size = ElementSize(type);
  std::vector<char> bytes(count * size);
  for (int64_t i = 0; i < count; ++i) {
    char* out = bytes.data() + i * size;
    const uint64_t mixed = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
    switch (type) {
      case PJRT_Buffer_Type_PRED: *out = static_cast<char>(i % 3 == 0); break;
      case PJRT_Buffer_Type_F16: {
        const uint16_t bits = static_cast<uint16_t>(0x3C00 + (i % 1000) * 3);  // ~1.0..
        std::memcpy(out, &bits, 2);
        break;
      }
      case PJRT_Buffer_Type_BF16: {
        const uint16_t bits = static_cast<uint16_t>(0xBF80 + (i % 100) * 5);  // ~-1.0..
        std::memcpy(out, &bits, 2);
        break;
      }
      case PJRT_Buffer_Type_F32: {
        const float value = static_cast<float>(i) * 0.25f - 3.5f;
        std::memcpy(out, &value, 4);
        break;
      }
      case PJRT_Buffer_Type_F64: {
        const double value = static_cast<double>(i) * -1.125 + 1e10;
        std::memcpy(out, &value, 8);
        break;
      }
      case PJRT_Buffer_Type_C64: {
        const float parts[2] = {static_cast<float>(i) + 0.5f, -static_cast<float>(i)};
        std::memcpy(out, parts, 8);
        break;
      }
      case PJRT_Buffer_Type_C128: {
        const double parts[2] = {static_cast<double>(i) / 3, static_cast<double>(-i) * 7};
        std::memcpy(out, parts, 16);
        break;
      }
      default:  // Integers: all bytes vary, including the sign bit.
        std::memcpy(out, &mixed, size);
        break;
    }
  }
  return bytes;
}

// One element type of the round-trip matrix.
struct TypeCase {
  const char* name;
  PJRT_Buffer_Type type;
};

class TransferTypeTest : public ClientTestBase,
                         public ::testing::WithParamInterface<TypeCase> {};

TEST_P(TransferTypeTest, RoundTripIsExact) {
  const PJRT_Buffer_Type type = GetParam().type;
  const std::vector<int64_t> dims = {2, 3, 5};
  const std::vector<char> host = Pattern(type, ElementCount(dims));
  BufferPtr buffer;
  PJRT_ASSERT_OK(FromHost(host.data(), type, dims, FirstDevice(), &buffer));

  PJRT_ARGS(PJRT_Buffer_ElementType_Args, type_args);
  type_args.buffer = buffer.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_ElementType(&type_args)));
  EXPECT_EQ(type_args.type, type);
  PJRT_ARGS(PJRT_Buffer_Dimensions_Args, dim_args);
  dim_args.buffer = buffer.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_Dimensions(&dim_args)));
  EXPECT_EQ(std::vector<int64_t>(dim_args.dims, dim_args.dims + dim_args.num_dims), dims);

  std::vector<char> back;
  PJRT_ASSERT_OK(ToHost(buffer.get(), &back));
  ASSERT_EQ(back.size(), host.size());
  EXPECT_EQ(back, host) << GetParam().name << " bytes differ after the round trip";
}

INSTANTIATE_TEST_SUITE_P(
    AllJaxTypes, TransferTypeTest,
    ::testing::Values(TypeCase{"pred", PJRT_Buffer_Type_PRED}, TypeCase{"s8", PJRT_Buffer_Type_S8},
                      TypeCase{"s16", PJRT_Buffer_Type_S16}, TypeCase{"s32", PJRT_Buffer_Type_S32},
                      TypeCase{"s64", PJRT_Buffer_Type_S64}, TypeCase{"u8", PJRT_Buffer_Type_U8},
                      TypeCase{"u16", PJRT_Buffer_Type_U16}, TypeCase{"u32", PJRT_Buffer_Type_U32},
                      TypeCase{"u64", PJRT_Buffer_Type_U64}, TypeCase{"f16", PJRT_Buffer_Type_F16},
                      TypeCase{"bf16", PJRT_Buffer_Type_BF16},
                      TypeCase{"f32", PJRT_Buffer_Type_F32}, TypeCase{"f64", PJRT_Buffer_Type_F64},
                      TypeCase{"c64", PJRT_Buffer_Type_C64},
                      TypeCase{"c128", PJRT_Buffer_Type_C128}),
    [](const ::testing::TestParamInfo<TypeCase>& info) { return std::string(info.param.name); });

class TransferTest : public ClientTestBase {
 protected:
  // Uploads `host` as f32[dims] with `semantics`, checking the data survives the host copy
  // being overwritten when the semantics allow it.
  void RoundTripF32(const std::vector<int64_t>& dims) {
    const std::vector<char> host = Pattern(PJRT_Buffer_Type_F32, ElementCount(dims));
    BufferPtr buffer;
    PJRT_ASSERT_OK(FromHost(host.data(), PJRT_Buffer_Type_F32, dims, FirstDevice(), &buffer));
    std::vector<char> back;
    PJRT_ASSERT_OK(ToHost(buffer.get(), &back));
    ASSERT_EQ(back.size(), host.size());
    EXPECT_TRUE(back == host) << "bytes differ";
  }
};

TEST_F(TransferTest, ScalarRoundTrip) { RoundTripF32({}); }

TEST_F(TransferTest, ZeroSizeRoundTrip) { RoundTripF32({0, 3}); }

// 64 MiB (16M f32 elements), or a quarter of the declared device memory (BufferBytes) in rows
// of 4096 elements.
TEST_F(TransferTest, LargeRoundTrip) {
  const int64_t rows = BufferBytes(int64_t{64} << 20) / (4096 * 4);
  Report("large_round_trip_bytes", std::to_string(rows * 4096 * 4));
  RoundTripF32({rows, 4096});
}

TEST_F(TransferTest, ByteStridesTransposeOnUpload) {
  // 2x3 f32 given in column-major order; the device buffer is logically row-major.
  const std::vector<float> column_major = {1, 4, 2, 5, 3, 6};  // (r, c) = 1 + r*3 + c.
  PJRT_ARGS(PJRT_Client_BufferFromHostBuffer_Args, args);
  const std::vector<int64_t> dims = {2, 3};
  const std::vector<int64_t> strides = {4, 8};
  args.client = client();
  args.data = column_major.data();
  args.type = PJRT_Buffer_Type_F32;
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.byte_strides = strides.data();
  args.num_byte_strides = strides.size();
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  args.device = FirstDevice();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Client_BufferFromHostBuffer(&args)));
  BufferPtr buffer(api(), args.buffer);
  EventPtr done(api(), args.done_with_host_buffer);
  if (done) PJRT_ASSERT_OK(Await(done.get()));
  std::vector<float> back;
  PJRT_ASSERT_OK(ReadVector(buffer.get(), &back));
  EXPECT_EQ(back, (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST_F(TransferTest, ToHostSizeQueryReportsTheDenseSize) {
  const std::vector<float> host(6, 1.5f);
  BufferPtr buffer;
  PJRT_ASSERT_OK(FromVector(host, PJRT_Buffer_Type_F32, {2, 3}, FirstDevice(), &buffer));
  PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args, args);
  args.src = buffer.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_ToHostBuffer(&args)));
  EventPtr event(api(), args.event);  // Expected NULL: nothing was transferred.
  EXPECT_EQ(args.dst_size, 6 * sizeof(float));
}

TEST_F(TransferTest, ToHostIntoTooSmallDestinationIsAnError) {
  const std::vector<float> host(6, 1.5f);
  BufferPtr buffer;
  PJRT_ASSERT_OK(FromVector(host, PJRT_Buffer_Type_F32, {2, 3}, FirstDevice(), &buffer));
  std::vector<float> small(2, 0.0f);
  PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args, args);
  args.src = buffer.get();
  args.dst = small.data();
  args.dst_size = small.size() * sizeof(float);
  const Status status = PJRT_CALL(api()->PJRT_Buffer_ToHostBuffer(&args));
  EventPtr event(api(), args.event);
  PJRT_ASSERT_ERROR(status);
}

TEST_F(TransferTest, UploadToAMemoryInsteadOfADevice) {
  PJRT_Device* device = FirstDevice();
  PJRT_Memory* memory = DefaultMemory(device);
  const std::vector<int32_t> host = {7, -8, 9};
  BufferPtr buffer;
  PJRT_ASSERT_OK(FromHost(host.data(), PJRT_Buffer_Type_S32, {3}, nullptr, &buffer,
                          PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, nullptr, memory));
  PJRT_Memory* placed = nullptr;
  PJRT_ASSERT_OK(BufferMemory(buffer.get(), &placed));
  EXPECT_EQ(placed, memory);
  std::vector<int32_t> back;
  PJRT_ASSERT_OK(ReadVector(buffer.get(), &back));
  EXPECT_EQ(back, host);
}

// ---- Host-buffer semantics ----

// Host memory aligned for zero-copy (64 bytes), freed with std::free.
struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

class SemanticsTest
    : public ClientTestBase,
      public ::testing::WithParamInterface<std::pair<const char*, PJRT_HostBufferSemantics>> {};

TEST_P(SemanticsTest, DataArrivesAndHostMayBeReusedWhenAllowed) {
  const PJRT_HostBufferSemantics semantics = GetParam().second;
  const bool zero_copy = semantics == PJRT_HostBufferSemantics_kImmutableZeroCopy ||
                         semantics == PJRT_HostBufferSemantics_kMutableZeroCopy;
  constexpr int kCount = 1024;
  std::unique_ptr<float, AlignedFree> host(
      static_cast<float*>(std::aligned_alloc(64, kCount * sizeof(float))));
  for (int i = 0; i < kCount; ++i) host.get()[i] = static_cast<float>(i) - 100.0f;
  const std::vector<float> expected(host.get(), host.get() + kCount);

  BufferPtr buffer;
  EventPtr done;
  const Status status = FromHost(host.get(), PJRT_Buffer_Type_F32, {kCount}, FirstDevice(),
                                 &buffer, semantics, &done);
  PJRT_SKIP_IF_UNIMPLEMENTED(status, std::string("host buffer semantics ") + GetParam().first);
  if (semantics == PJRT_HostBufferSemantics_kImmutableOnlyDuringCall) {
    std::fill(host.get(), host.get() + kCount, -1.0f);  // Allowed right after the call.
  } else if (semantics == PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes) {
    if (done) PJRT_ASSERT_OK(Await(done.get()));
    std::fill(host.get(), host.get() + kCount, -1.0f);  // Allowed once done fires.
  }
  std::vector<float> back;
  PJRT_ASSERT_OK(ReadVector(buffer.get(), &back));
  EXPECT_EQ(back, expected);
  if (zero_copy) {
    // Zero-copy: the plugin may hold `host` until the buffer dies; done fires after that.
    buffer.reset();
    if (done) PJRT_ASSERT_OK(Await(done.get()));
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllSemantics, SemanticsTest,
    ::testing::Values(
        std::make_pair("ImmutableOnlyDuringCall",
                       PJRT_HostBufferSemantics_kImmutableOnlyDuringCall),
        std::make_pair("ImmutableUntilTransferCompletes",
                       PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes),
        std::make_pair("ImmutableZeroCopy", PJRT_HostBufferSemantics_kImmutableZeroCopy),
        std::make_pair("MutableZeroCopy", PJRT_HostBufferSemantics_kMutableZeroCopy)),
    [](const auto& info) { return std::string(info.param.first); });

}  // namespace
}  // namespace pjrt_conformance
