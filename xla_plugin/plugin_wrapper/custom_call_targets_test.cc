// CustomCallTargets on hand-built HloModuleProto bytes (the real-plugin path is covered by
// inner_ffi_test: a program with a typed FFI custom call reports calls_ffi_handlers()).
#include "xla_plugin/plugin_wrapper/custom_call_targets.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/plugin_wrapper/proto_writer.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

using proto_writer::BytesField;
using proto_writer::VarintField;

// An HloInstructionProto.
std::string Instruction(const std::string& opcode, const std::string& target = "",
                        uint64_t api_version = 0) {
  std::string out = BytesField(1, "name") + BytesField(2, opcode);
  if (!target.empty()) out += BytesField(28, target);
  if (api_version != 0) out += VarintField(77, api_version);
  return out;
}

TEST(CustomCallTargetsTest, SplitsTypedFfiFromOtherCustomCalls) {
  const std::string callback = Instruction("custom-call", "xla_ffi_python_cpu_callback", 4);
  const std::string entry = BytesField(1, "main") + BytesField(2, Instruction("parameter")) +
                            BytesField(2, callback) + BytesField(2, Instruction("add")) +
                            BytesField(2, Instruction("custom-call", "legacy_target", 2));
  const std::string body = BytesField(1, "body") +
                           BytesField(2, Instruction("custom-call", "lapack_sgetrf_ffi", 4)) +
                           BytesField(2, callback);
  const std::string module =
      BytesField(1, "jit_f") + BytesField(3, entry) + BytesField(3, body) + VarintField(6, 1);
  StatusOr<CustomCallTargets> targets =
      CustomCallTargets::FromOptimizedProgram(Program{"hlo_with_config", BytesField(1, module)});
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  EXPECT_EQ(targets->typed_ffi(),
            (std::vector<std::string>{"lapack_sgetrf_ffi", "xla_ffi_python_cpu_callback"}));
  EXPECT_EQ(targets->other(), std::vector<std::string>{"legacy_target"});
  StatusOr<CustomCallTargets> plain = CustomCallTargets::FromOptimizedProgram(
      Program{"hlo", BytesField(3, BytesField(2, Instruction("multiply")))});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->typed_ffi().empty());
  EXPECT_TRUE(plain->other().empty());
}

TEST(CustomCallTargetsTest, RejectsWhatItCannotRead) {
  EXPECT_EQ(CustomCallTargets::FromOptimizedProgram(Program{"mlir", "module {}"}).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(CustomCallTargets::FromOptimizedProgram(Program{"hlo_with_config", VarintField(2, 1)})
                .status()
                .message(),
            "custom-call targets: the HloModuleProtoWithConfig has no hlo_module");
  EXPECT_EQ(CustomCallTargets::FromOptimizedProgram(Program{"hlo", std::string("\x1a\x05", 2)})
                .status()
                .code(),
            StatusCode::kInvalidArgument);  // A truncated computation.
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
