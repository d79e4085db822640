// PJRT_Client_Compile and PJRT_Compile: program formats, options, and bad input.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

class CompileTest : public ClientTestBase {
 protected:
  // Runs an f32[4] -> f32[4] "x + 1" executable and checks the result.
  void ExpectAddsOne(PJRT_LoadedExecutable* executable) {
    const std::vector<float> input = {1.0f, -2.5f, 100.0f, 0.0f};
    BufferPtr arg;
    PJRT_ASSERT_OK(FromVector(input, PJRT_Buffer_Type_F32, {4}, FirstDevice(), &arg));
    std::vector<std::vector<BufferPtr>> outputs;
    PJRT_ASSERT_OK(Execute(executable, {{arg.get()}}, &outputs));
    ASSERT_EQ(outputs.size(), 1u);
    ASSERT_EQ(outputs[0].size(), 1u);
    std::vector<float> result;
    PJRT_ASSERT_OK(ReadVector(outputs[0][0].get(), &result));
    EXPECT_EQ(result, (std::vector<float>{2.0f, -1.5f, 101.0f, 1.0f}));
  }

  static std::string Bytes(const unsigned char* data, size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
  }
};

TEST_F(CompileTest, MlirTextCompilesAndRuns) {
  PJRT_REQUIRE_COMPILER();
  LoadedExecutablePtr executable;
  PJRT_ASSERT_OK(CompileMlir(kAddOneF32, &executable));
  ExpectAddsOne(executable.get());
}

TEST_F(CompileTest, StablehloPortableArtifactCompilesAndRuns) {
  PJRT_REQUIRE_COMPILER();
  LoadedExecutablePtr executable;
  PJRT_ASSERT_OK(CompileMlir(Bytes(kAddOnePortableArtifact, kAddOnePortableArtifactSize),
                             &executable));
  ExpectAddsOne(executable.get());
}

TEST_F(CompileTest, PlainMlirBytecodeCompilesAndRuns) {
  PJRT_REQUIRE_COMPILER();
  LoadedExecutablePtr executable;
  PJRT_ASSERT_OK(
      CompileMlir(Bytes(kAddOnePlainBytecode, kAddOnePlainBytecodeSize), &executable));
  ExpectAddsOne(executable.get());
}

TEST_F(CompileTest, BytecodeSourceTextCompilesAndRuns) {
  PJRT_REQUIRE_COMPILER();
  LoadedExecutablePtr executable;
  PJRT_ASSERT_OK(CompileMlir(kAddOneBytecodeSourceText, &executable));
  ExpectAddsOne(executable.get());
}

// Raw wait status of the death-test child below (set by the predicate, in the parent).
int empty_options_child_status = -1;

TEST_F(CompileTest, EmptyCompileOptionsCompileOrFailWithoutCrashing) {
  // An empty string is a valid (all-default) CompileOptionsProto, yet a plugin may abort on
  // it; try it in a child process so that an abort cannot take the suite down.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        LoadedExecutablePtr executable;
        const Status status = CompileMlir(kAddOneF32, &executable, "");
        std::fprintf(stderr, "empty compile options: %s\n",
                     status.ok() ? "OK" : status.message.c_str());
        std::_Exit(status.ok() ? 0 : (status.message.empty() ? 3 : 2));
      },
      [](int wait_status) {
        empty_options_child_status = wait_status;
        return true;
      },
      "");
  const int wait_status = empty_options_child_status;
  if (WIFSIGNALED(wait_status)) {
    GTEST_SKIP() << "the plugin aborts (signal " << WTERMSIG(wait_status)
                 << ") when compiling with empty compile options; callers must pass a "
                    "CompileOptionsProto with executable_build_options.num_replicas >= 1";
  }
  ASSERT_TRUE(WIFEXITED(wait_status));
  const int code = WEXITSTATUS(wait_status);
  EXPECT_NE(code, 3) << "empty compile options rejected with no message";
  Report("empty_compile_options", code == 0 ? "accepted" : "rejected with a message");
}

TEST_F(CompileTest, UnknownFormatIsAnError) {
  LoadedExecutablePtr executable;
  PJRT_ASSERT_ERROR(Compile(kAddOneF32, "pjrt_conformance_no_such_format",
                            CompileOptions1x1(), &executable));
}

TEST_F(CompileTest, MalformedCompileOptionsAreAnError) {
  LoadedExecutablePtr executable;
  // A length-delimited field claiming 127 bytes with 3 present: not a parseable proto.
  const std::string garbage = "\x1a\x7f\x01\x02\x03";
  PJRT_ASSERT_ERROR(CompileMlir(kAddOneF32, &executable, garbage));
}

TEST_F(CompileTest, MalformedProgramIsAnError) {
  LoadedExecutablePtr executable;
  PJRT_ASSERT_ERROR(CompileMlir("this is not an MLIR module {", &executable));
}

TEST_F(CompileTest, IllTypedProgramIsAnError) {
  LoadedExecutablePtr executable;
  PJRT_ASSERT_ERROR(CompileMlir(kIllTyped, &executable));
}

TEST_F(CompileTest, EmptyProgramIsAnError) {
  LoadedExecutablePtr executable;
  PJRT_ASSERT_ERROR(CompileMlir("", &executable));
}

TEST_F(CompileTest, GarbageHloProtoIsAnError) {
  LoadedExecutablePtr executable;
  PJRT_ASSERT_ERROR(Compile("\xff\xff\xff\xff not a proto", "hlo", CompileOptions1x1(),
                            &executable));
}

TEST_F(CompileTest, TruncatedBytecodeIsAnError) {
  LoadedExecutablePtr executable;
  const std::string truncated =
      Bytes(kAddOnePortableArtifact, kAddOnePortableArtifactSize / 2);
  PJRT_ASSERT_ERROR(CompileMlir(truncated, &executable));
}

TEST_F(CompileTest, SameProgramCompilesTwiceIndependently) {
  PJRT_REQUIRE_COMPILER();
  LoadedExecutablePtr first;
  LoadedExecutablePtr second;
  PJRT_ASSERT_OK(CompileMlir(kAddOneF32, &first));
  PJRT_ASSERT_OK(CompileMlir(kAddOneF32, &second));
  EXPECT_NE(first.get(), second.get());
  first.reset();
  ExpectAddsOne(second.get());
}

TEST_F(CompileTest, TopologyCompileOrReported) {
  PJRT_REQUIRE_SLOT(PJRT_Compile);
  PJRT_ARGS(PJRT_Client_TopologyDescription_Args, topology);
  topology.client = client();
  PJRT_SKIP_IF_UNIMPLEMENTED(PJRT_CALL(api()->PJRT_Client_TopologyDescription(&topology)),
                             "PJRT_Client_TopologyDescription");
  std::string code = kAddOneF32;
  const std::string format = "mlir";
  const std::string options = CompileOptions1x1();
  PJRT_ARGS(PJRT_Program, program);
  program.code = &code[0];
  program.code_size = code.size();
  program.format = format.data();
  program.format_size = format.size();
  PJRT_ARGS(PJRT_Compile_Args, args);
  args.topology = topology.topology;
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  args.client = client();
  const Status status = PJRT_CALL(api()->PJRT_Compile(&args));
  ExecutablePtr executable(api(), args.executable);
  if (status.code == PJRT_Error_Code_NOT_FOUND) {
    // Ahead-of-time compilation goes through a compiler registered for the platform.
    GTEST_SKIP() << "PJRT_Compile: no ahead-of-time compiler: " << status;
  }
  PJRT_SKIP_IF_UNIMPLEMENTED(status, "PJRT_Compile");
  ASSERT_TRUE(executable);
  PJRT_ARGS(PJRT_Executable_NumOutputs_Args, outputs);
  outputs.executable = executable.get();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_NumOutputs(&outputs)));
  EXPECT_EQ(outputs.num_outputs, 1u);

  // Compiled for the client's own topology, its serialized form loads on the client and runs.
  PJRT_ARGS(PJRT_Executable_Serialize_Args, serialize);
  serialize.executable = executable.get();
  const Status serialized = PJRT_CALL(api()->PJRT_Executable_Serialize(&serialize));
  if (serialized.code == PJRT_Error_Code_UNIMPLEMENTED) {
    Report("topology_compile", "compiles; PJRT_Executable_Serialize is UNIMPLEMENTED");
    return;
  }
  PJRT_ASSERT_OK(serialized);
  const std::string bytes = Str(serialize.serialized_bytes, serialize.serialized_bytes_size);
  ASSERT_NE(serialize.serialized_executable_deleter, nullptr);
  serialize.serialized_executable_deleter(serialize.serialized_executable);
  ASSERT_FALSE(bytes.empty());
  PJRT_ARGS(PJRT_Executable_DeserializeAndLoad_Args, load);
  load.client = client();
  load.serialized_executable = bytes.data();
  load.serialized_executable_size = bytes.size();
  PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Executable_DeserializeAndLoad(&load)));
  LoadedExecutablePtr loaded(api(), load.loaded_executable);
  ASSERT_TRUE(loaded);
  ExpectAddsOne(loaded.get());
  Report("topology_compile", "compiles, serializes, loads and runs");
}

}  // namespace
}  // namespace pjrt_conformance
