// HloIdCheck on hand-encoded HloModuleProtos: dense ids pass, one sparse id is refused with the
// computation and the limit named, the limit's edges, the high 32 bits ignored, the
// HloModuleProtoWithConfig wrapper, and bytes that are not a module left to the inner plugin.
#include "xla_plugin/plugin_wrapper/hlo_id_check.h"

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

// An HloInstructionProto with a name (1), an opcode (2) and an id (35).
std::string Instruction(uint64_t id) {
  return BytesField(1, "i" + std::to_string(id)) + BytesField(2, "parameter") +
         VarintField(35, id);
}

// An HloComputationProto (name 1, instructions 2, root_id 6).
std::string Computation(const std::string& name, const std::vector<uint64_t>& ids) {
  std::string out = BytesField(1, name);
  for (uint64_t id : ids) out += BytesField(2, Instruction(id));
  if (!ids.empty()) out += VarintField(6, ids.back());
  return out;
}

// An HloModuleProto (name 1, entry name 2, computations 3).
std::string Module(const std::vector<std::string>& computations) {
  std::string out = BytesField(1, "m") + BytesField(2, "main");
  for (const std::string& c : computations) out += BytesField(3, c);
  return out;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t count) {
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < count; ++i) ids.push_back(first + i);
  return ids;
}

TEST(HloIdCheckTest, DenseIdsPass) {
  const std::string module = Module({Computation("region_0.1", {1, 2, 3}),
                                     Computation("main.2", Range(4, 40))});
  EXPECT_TRUE(HloIdCheck::Check(Program{"hlo", module}, "Compile").ok());
}

TEST(HloIdCheckTest, RefusesASparseIdNamingItsComputation) {
  // The fuzzer's find: one instruction of main.2 numbered 0x2'20000001 (low bits 536870913).
  const std::string module = Module({Computation("region_0.1", {0x100000001, 0x100000002}),
                                     Computation("main.2", {0x200000002, 0x220000001})});
  Status status = HloIdCheck::Check(Program{"hlo", module}, "Compile");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "Compile: program: the HLO module's instruction ids are too sparse for XLA, which "
            "allocates one table entry per id (low 32 bits) up to each computation's largest: "
            "536870917 entries (4096 MiB) for 4 instructions in 2 computations; computation "
            "'main.2' alone reaches id 536870913 (the low 32 bits of 9126805505). Accepted: at "
            "most max(67108864, instructions x max(1024, computations)) entries; number the "
            "instructions densely");
}

TEST(HloIdCheckTest, IgnoresTheHigh32Bits) {
  // XLA keeps a computation's number in the high bits; only the low 32 size its table.
  const std::string module = Module({Computation("main.2", {0x700000001, 0x7fffffff00000002})});
  EXPECT_TRUE(HloIdCheck::Check(Program{"hlo", module}, "Compile").ok());
}

TEST(HloIdCheckTest, TheFloorEdge) {
  const uint64_t floor = HloIdCheck::kMinAllowedEntries;
  EXPECT_TRUE(HloIdCheck::Check(Program{"hlo", Module({Computation("c", {floor - 1})})}, "C").ok());
  EXPECT_FALSE(HloIdCheck::Check(Program{"hlo", Module({Computation("c", {floor})})}, "C").ok());
}

TEST(HloIdCheckTest, LargeModulesGetEntriesPerInstruction) {
  // 70001 + 1 instructions allow 1024 x 70002 = 71682048 entries: the dense computation takes
  // 70001 (ids 0..70000), so the other one may reach id 71682048 - 70001 - 1.
  const uint64_t n = 70001;
  const uint64_t allowed = HloIdCheck::kEntriesPerInstruction * (n + 1);
  ASSERT_GT(allowed, HloIdCheck::kMinAllowedEntries);
  const std::string dense = Computation("dense", Range(0, n));
  const uint64_t last_ok = allowed - n - 1;
  EXPECT_TRUE(HloIdCheck::Check(
      Program{"hlo", Module({dense, Computation("late", {last_ok})})}, "C").ok());
  EXPECT_FALSE(HloIdCheck::Check(
      Program{"hlo", Module({dense, Computation("late", {last_ok + 1})})}, "C").ok());
}

TEST(HloIdCheckTest, ChecksTheModuleInsideHloWithConfig) {
  const std::string sparse = Module({Computation("main", {1, 0x30000000})});
  const std::string with_config = BytesField(1, sparse) + BytesField(2, "config");
  Status status = HloIdCheck::Check(Program{"hlo_with_config", with_config}, "PJRT_Compile");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("PJRT_Compile: program: ", 0), 0u) << status.message();
  const std::string dense = BytesField(1, Module({Computation("main", {1, 2})}));
  EXPECT_TRUE(HloIdCheck::Check(Program{"hlo_with_config", dense}, "PJRT_Compile").ok());
}

TEST(HloIdCheckTest, ManyComputationsGetAnEntryPerComputationAndInstruction) {
  // 12000 computations of one instruction each, numbered across the module as XlaBuilder does
  // (ids 0..11999): 72006000 entries, past the floor and past 1024 x 12000, within 12000 x 12000.
  std::vector<std::string> computations;
  for (uint64_t c = 0; c < 12000; ++c) {
    computations.push_back(Computation("c" + std::to_string(c), {c}));
  }
  EXPECT_TRUE(HloIdCheck::Check(Program{"hlo", Module(computations)}, "C").ok());
  computations.back() = Computation("late", {144000000});  // 144000000 - 11999 more entries
  EXPECT_FALSE(HloIdCheck::Check(Program{"hlo", Module(computations)}, "C").ok());
}

TEST(HloIdCheckTest, NamesTheIdOfANegativeOne) {
  Status status = HloIdCheck::Check(
      Program{"hlo", Module({Computation("main", {1, static_cast<uint64_t>(int64_t{-1})})})}, "C");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("computation 'main' alone reaches id 4294967295 (the low 32 "
                                  "bits of -1)"),
            std::string::npos)
      << status.message();
}

TEST(HloIdCheckTest, MergesRepeatedHloModuleFieldsOfHloWithConfig) {
  // Each module alone stays under the floor; merged (as protobuf merges a repeated singular
  // field) their tables pass it.
  const uint64_t floor = HloIdCheck::kMinAllowedEntries;
  const std::string half = BytesField(1, Module({Computation("main", {floor / 2 + 1})}));
  EXPECT_TRUE(HloIdCheck::Check(Program{"hlo_with_config", half}, "C").ok());
  EXPECT_FALSE(HloIdCheck::Check(Program{"hlo_with_config", half + half}, "C").ok());
}

TEST(HloIdCheckTest, RefusesBytesItCannotRead) {
  // Truncated, not a message, or a group (wire type 3, which protobuf would skip as unknown)
  // ahead of a sparse module: refused as not a well-formed module, not passed to XLA.
  std::string truncated = Module({Computation("main", {1, 2})});
  truncated.resize(truncated.size() - 3);
  const std::string group = std::string("\xbb\x3e") + "\xbc\x3e";  // field 999 start/end
  for (const std::string& bytes :
       {truncated, std::string("\xff\xff"), group + Module({Computation("m", {0x30000000})})}) {
    Status status = HloIdCheck::Check(Program{"hlo", bytes}, "C");
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message().rfind("C: program: the bytes are not a well-formed HloModuleProto",
                                     0),
              0u)
        << status.message();
  }
  EXPECT_FALSE(HloIdCheck::Check(Program{"hlo_with_config", "\xff"}, "C").ok());
}

TEST(HloIdCheckTest, LeavesOtherFormatsToTheInnerPlugin) {
  EXPECT_TRUE(HloIdCheck::Check(
      Program{"mlir", Module({Computation("main", {0x30000000})})}, "C").ok());
  EXPECT_TRUE(HloIdCheck::Check(Program{"mlir", "\xff\xff"}, "C").ok());
  EXPECT_TRUE(HloIdCheck::Check(Program{"hlo", ""}, "C").ok());  // An empty module.
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
