// Binary inputs made by gen_test_data.py (see generated_test_data.cc) and the MLIR text
// programs the cases compile.
#ifndef PJRTKIT_TESTS_CONFORMANCE_TEST_DATA_H_
#define PJRTKIT_TESTS_CONFORMANCE_TEST_DATA_H_

#include <cstddef>
#include <string>

namespace pjrt_conformance {

// ---- Generated (gen_test_data.py) ----

// f32[4] -> f32[4], x + 1: the text, its StableHLO portable artifact and plain bytecode.
extern const char kAddOneBytecodeSourceText[];
extern const unsigned char kAddOnePortableArtifact[];
extern const size_t kAddOnePortableArtifactSize;
extern const unsigned char kAddOnePlainBytecode[];
extern const size_t kAddOnePlainBytecodeSize;

// Serialized xla.CompileOptionsProto for 1 replica x 1 partition and 2 x 1.
extern const unsigned char kCompileOptions1x1[];
extern const size_t kCompileOptions1x1Size;
extern const unsigned char kCompileOptions2x1[];
extern const size_t kCompileOptions2x1Size;
// 1 x 1 with compile_portable_executable = true (runs on any device via execute_device).
extern const unsigned char kCompileOptionsPortable[];
extern const size_t kCompileOptionsPortableSize;

// The compile options above as strings.
std::string CompileOptions1x1();
std::string CompileOptions2x1();
std::string CompileOptionsPortable();

// ---- MLIR text programs (programs.cc) ----

// f32[4] -> f32[4]: x + 1.
extern const char kAddOneF32[];
// f32[4] -> f32[4]: x * 2 (differs from kAddOneF32 only in the op).
extern const char kTimesTwoF32[];
// (f32[2,3] x, s32[3] n) -> (f32[2,3] x*x, s32[3] n+n, f32[3,2] transpose(x)).
extern const char kThreeOutputs[];
// f32[4] -> f32[4]: x + 1 with the argument donated to the result (tf.aliasing_output).
extern const char kAddOneDonated[];
// 2 replicas; f32[4] -> f32[4]: x + replica_id.
extern const char kAddReplicaId[];
// Parses as MLIR but does not type-check (adds f32[4] and f32[3]).
extern const char kIllTyped[];

}  // namespace pjrt_conformance

#endif  // PJRTKIT_TESTS_CONFORMANCE_TEST_DATA_H_
