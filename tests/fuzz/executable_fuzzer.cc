// libFuzzer target: arbitrary bytes as a serialized executable to
// PJRT_Executable_DeserializeAndLoad on the shared client (no overriding compile options).
//
// Scope: what pjrtkit checks before XLA:CPU sees the bytes (its header: magic, format version,
// device count, checksum of the rest). Two kinds of input are skipped (returned -1, so libFuzzer
// does not keep them), because they go to XLA:CPU's deserializer unchecked and XLA:CPU aborts on
// some corrupted executables (an LLVM CHECK while it links the object code, which this target
// found), which pjrtkit cannot prevent:
//   - bytes that do not start with a zero byte: XLA:CPU's own format, which pjrtkit still loads
//     as it is (what an earlier pjrtkit wrote; see serialized_executable.h);
//   - bytes whose checksum matches: only a crafted input gets there (libFuzzer can learn the
//     checksum from the comparison), and serialized executables are code, trusted like XLA's.
// The path past the checks runs once at start-up instead: the x + 1 program compiled, serialized,
// loaded back, serialized again and destroyed.
//
// With PJRTKIT_FUZZ_WRITE_SEED=PATH set, it instead writes the seed tests/fuzz/corpus holds (the
// f32[4] x + 1 program compiled and serialized by pjrtkit) to PATH and exits.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_support.h"

namespace {

// The xla_cpu header (xla_plugin/plugin_wrapper/serialized_executable.h, format version 2).
constexpr char kMagic[] = "\0pjrtkit-xla-cpu-executable";  // + the final '\0' = 28 bytes.
constexpr size_t kMagicSize = 28;
constexpr size_t kHeaderSize = kMagicSize + 1 + 4 + 8;

// FNV-1a 64, as the header's checksum.
uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// True when pjrtkit would hand `bytes` to XLA:CPU's deserializer (see the file comment).
bool ReachesXlaCpu(std::string_view bytes) {
  if (bytes.empty() || bytes[0] != '\0') return true;  // XLA:CPU's own format.
  if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0 ||
      bytes[kMagicSize] != 2) {
    return false;
  }
  uint64_t stored = 0;
  for (int i = 0; i < 8; ++i) {
    stored |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[kMagicSize + 5 + i]))
              << (8 * i);
  }
  return stored == Fnv1a64(bytes.substr(kHeaderSize));
}

// Deserializes `bytes` on the shared client; what loads is serialized again and destroyed.
// Returns true when it loaded.
bool LoadAndDestroy(pjrtkit_fuzz::FuzzSupport& support, std::string_view bytes) {
  PJRT_Executable_DeserializeAndLoad_Args args{};
  args.struct_size = PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE;
  args.client = support.Client();
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  if (support.Consume(support.api()->PJRT_Executable_DeserializeAndLoad(&args),
                      "PJRT_Executable_DeserializeAndLoad")) {
    return false;
  }
  pjrtkit_fuzz::FuzzSupport::Require(args.loaded_executable != nullptr,
                                     "DeserializeAndLoad succeeded without an executable");
  (void)support.Serialize(args.loaded_executable);
  support.DestroyLoaded(args.loaded_executable);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  pjrtkit_fuzz::FuzzSupport& support = pjrtkit_fuzz::FuzzSupport::Get();
  const std::string bytes = support.CompileAndSerialize(pjrtkit_fuzz::AddOneMlir(), "mlir",
                                                        pjrtkit_fuzz::CompileOptions1x1());
  pjrtkit_fuzz::FuzzSupport::Require(!bytes.empty(), "the seed program did not compile");
  pjrtkit_fuzz::FuzzSupport::Require(ReachesXlaCpu(bytes) && LoadAndDestroy(support, bytes),
                                     "pjrtkit's own serialized executable did not load back");
  const char* seed_path = std::getenv("PJRTKIT_FUZZ_WRITE_SEED");
  if (seed_path == nullptr) return 0;
  std::FILE* out = std::fopen(seed_path, "wb");
  pjrtkit_fuzz::FuzzSupport::Require(out != nullptr, std::string("cannot write ") + seed_path);
  std::fwrite(bytes.data(), 1, bytes.size(), out);
  std::fclose(out);
  std::fprintf(stderr, "wrote %zu bytes to %s\n", bytes.size(), seed_path);
  std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (ReachesXlaCpu(bytes)) return -1;  // Out of scope: see the file comment.
  pjrtkit_fuzz::FuzzSupport& support = pjrtkit_fuzz::FuzzSupport::Get();
  pjrtkit_fuzz::FuzzSupport::Require(!LoadAndDestroy(support, bytes),
                                     "bytes pjrtkit should have refused loaded");
  return 0;
}
