// libFuzzer target: the sim device's serialized executable format
// (xla_plugin/devices/sim/program/serialization.h) through DeserializeProgram. No plugin, no
// XLA:CPU: only the format's library.
//
// Input: a mode byte, then bytes.
//   - even mode: the bytes are a payload; the target puts a valid header in front (magic, format
//     version, payload length, checksum) so that mutations reach the payload decoder instead of
//     stopping at the checksum;
//   - odd mode: the bytes go to DeserializeProgram as they are (the header's checks).
// Oracle: a refusal is INVALID_ARGUMENT with a message that starts with "serialized sim
// executable: " or "not a serialized sim executable"; an accepted input serializes back to exactly
// the same bytes (the encoding is canonical). A crash, a sanitizer report, a leak or an
// allocation over libFuzzer's -malloc_limit_mb fails the run.
//
// With PJRTKIT_FUZZ_WRITE_SEEDS=DIR set, it instead writes the seeds tests/fuzz/corpus holds (the
// sample programs of xla_plugin/devices/sim/program/sample_programs.h) into DIR and exits. Run it
// again after a format version bump: older seeds are only refused.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "xla_plugin/devices/sim/program/sample_programs.h"
#include "xla_plugin/devices/sim/program/serialization.h"

namespace {

using pjrtkit::sim::kProgramHeaderBytes;

// Fails the run with `what` (libFuzzer saves the input).
void Require(bool condition, const std::string& what) {
  if (condition) return;
  std::fprintf(stderr, "serialization_fuzzer oracle failed: %s\n", what.c_str());
  std::abort();
}

// FNV-1a 64, the header's checksum.
uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

void AppendLittleEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// `payload` behind a valid header of the current format version.
std::string WithHeader(std::string_view payload) {
  std::string bytes(pjrtkit::sim::kProgramMagic);
  AppendLittleEndian(pjrtkit::sim::kProgramFormatVersion, 4, &bytes);
  AppendLittleEndian(payload.size(), 8, &bytes);
  AppendLittleEndian(Fnv1a64(payload), 8, &bytes);
  bytes.append(payload);
  return bytes;
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  Require(out != nullptr, "cannot write " + path);
  std::fwrite(bytes.data(), 1, bytes.size(), out);
  std::fclose(out);
  std::fprintf(stderr, "wrote %zu bytes to %s\n", bytes.size(), path.c_str());
}

// Writes the three seeds into `dir`: two payloads (even mode) and one whole executable (odd mode).
void WriteSeeds(const std::string& dir) {
  const std::string add_one = pjrtkit::sim::SerializeProgram(pjrtkit::sim::AddOneProgram());
  const std::string every = pjrtkit::sim::SerializeProgram(pjrtkit::sim::EveryParamsProgram());
  const std::string loop = pjrtkit::sim::SerializeProgram(pjrtkit::sim::WhileLoopProgram());
  WriteFile(dir + "/add_one_payload", std::string(1, '\0') + add_one.substr(kProgramHeaderBytes));
  WriteFile(dir + "/every_params_payload",
            std::string(1, '\0') + every.substr(kProgramHeaderBytes));
  WriteFile(dir + "/while_loop_executable", std::string(1, '\1') + loop);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  const char* seeds = std::getenv("PJRTKIT_FUZZ_WRITE_SEEDS");
  if (seeds == nullptr) return 0;
  WriteSeeds(seeds);
  std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool whole = (data[0] & 1) != 0;
  const std::string bytes = whole ? std::string(rest) : WithHeader(rest);
  pjrtkit::StatusOr<pjrtkit::sim::DeviceProgram> program =
      pjrtkit::sim::DeserializeProgram(bytes);
  if (!program.ok()) {
    const pjrtkit::Status& status = program.status();
    Require(status.code() == pjrtkit::StatusCode::kInvalidArgument,
            "refused with " + status.ToString());
    const std::string& message = status.message();
    Require(message.rfind("serialized sim executable: ", 0) == 0 ||
                message.rfind("not a serialized sim executable", 0) == 0,
            "unexpected message: " + message);
    return 0;
  }
  Require(pjrtkit::sim::SerializeProgram(*program) == bytes,
          "an accepted input does not serialize back to the same bytes");
  return 0;
}
