// libFuzzer target: arbitrary bytes as a program to PJRT_Client_Compile. The first byte picks the
// format (even: "mlir", text or bytecode; odd: "hlo", a serialized HloModuleProto); the rest is
// the code, compiled with 1 x 1 compile options on the shared client.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* format = (data[0] & 1) == 0 ? "mlir" : "hlo";
  std::string_view code(reinterpret_cast<const char*>(data) + 1, size - 1);
  pjrtkit_fuzz::FuzzSupport& support = pjrtkit_fuzz::FuzzSupport::Get();
  (void)support.CompileAndDestroy(code, format, pjrtkit_fuzz::CompileOptions1x1());
  return 0;
}
