// CustomCallTargets on hand-built HloModuleProto bytes (the real-plugin path is covered by
// inner_ffi_test: a program with a typed FFI custom call reports calls_ffi_handlers()).
#include "xla_plugin/devices/inner/custom_call_targets.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace inner {
namespace {

// Protobuf wire format: a varint.
std::string Varint(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (value != 0);
  return out;
}
// A length-delimited field.
std::string Bytes(int field, const std::string& bytes) {
  return Varint(static_cast<uint64_t>(field) << 3 | 2) + Varint(bytes.size()) + bytes;
}
// A varint field.
std::string Int(int field, uint64_t value) {
  return Varint(static_cast<uint64_t>(field) << 3) + Varint(value);
}
// An HloInstructionProto.
std::string Instruction(const std::string& opcode, const std::string& target = "",
                        uint64_t api_version = 0) {
  std::string out = Bytes(1, "name") + Bytes(2, opcode);
  if (!target.empty()) out += Bytes(28, target);
  if (api_version != 0) out += Int(77, api_version);
  return out;
}

TEST(CustomCallTargetsTest, SplitsTypedFfiFromOtherCustomCalls) {
  const std::string entry = Bytes(1, "main") + Bytes(2, Instruction("parameter")) +
                            Bytes(2, Instruction("custom-call", "xla_ffi_python_cpu_callback", 4)) +
                            Bytes(2, Instruction("add")) +
                            Bytes(2, Instruction("custom-call", "legacy_target", 2));
  const std::string body = Bytes(1, "body") +
                           Bytes(2, Instruction("custom-call", "lapack_sgetrf_ffi", 4)) +
                           Bytes(2, Instruction("custom-call", "xla_ffi_python_cpu_callback", 4));
  const std::string module = Bytes(1, "jit_f") + Bytes(3, entry) + Bytes(3, body) + Int(6, 1);
  StatusOr<CustomCallTargets> targets =
      CustomCallTargets::FromOptimizedProgram(Program{"hlo_with_config", Bytes(1, module)});
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  EXPECT_EQ(targets->typed_ffi(),
            (std::vector<std::string>{"lapack_sgetrf_ffi", "xla_ffi_python_cpu_callback"}));
  EXPECT_EQ(targets->other(), std::vector<std::string>{"legacy_target"});
  StatusOr<CustomCallTargets> plain = CustomCallTargets::FromOptimizedProgram(
      Program{"hlo", Bytes(3, Bytes(2, Instruction("multiply")))});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->typed_ffi().empty());
  EXPECT_TRUE(plain->other().empty());
}

TEST(CustomCallTargetsTest, RejectsWhatItCannotRead) {
  EXPECT_EQ(CustomCallTargets::FromOptimizedProgram(Program{"mlir", "module {}"}).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(CustomCallTargets::FromOptimizedProgram(Program{"hlo_with_config", Int(2, 1)})
                .status()
                .message(),
            "custom-call targets: the HloModuleProtoWithConfig has no hlo_module");
  EXPECT_EQ(CustomCallTargets::FromOptimizedProgram(Program{"hlo", std::string("\x1a\x05", 2)})
                .status()
                .code(),
            StatusCode::kInvalidArgument);  // A truncated computation.
}

}  // namespace
}  // namespace inner
}  // namespace pjrtkit
