// libFuzzer target: arbitrary bytes as the serialized xla.CompileOptionsProto of
// PJRT_Client_Compile, with a valid program (f32[4] x + 1, MLIR text) on the shared client.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view options(reinterpret_cast<const char*>(data), size);
  pjrtkit_fuzz::FuzzSupport& support = pjrtkit_fuzz::FuzzSupport::Get();
  (void)support.CompileAndDestroy(pjrtkit_fuzz::AddOneMlir(), "mlir", options);
  return 0;
}
