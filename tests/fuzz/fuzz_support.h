// FuzzSupport: what every libFuzzer target of tests/fuzz shares: pjrtkit's PJRT_Api (GetPjrtApi
// of the plugin sources linked into the fuzzer), one client on the reference device (XLA:CPU,
// found through $PJRTKIT_XLA_CPU_PLUGIN), and the oracle every call goes through.
//
// The oracle: a C-API call may fail, but only by returning a PJRT_Error with a code other than OK
// and a non-empty message; anything else (a crash, an abort, a sanitizer report, an error without
// text) ends the fuzzer, which saves the input.
#ifndef PJRTKIT_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define PJRTKIT_TESTS_FUZZ_FUZZ_SUPPORT_H_

// C and C++ standard library.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit_fuzz {

// Shared state of one fuzzer process. libFuzzer calls LLVMFuzzerTestOneInput with nothing but
// bytes, so the targets reach it through Get(), a function-local static built on first use.
class FuzzSupport {
 public:
  // The process's instance (the PJRT_Api, initialized; the client is made on first Client()).
  static FuzzSupport& Get();

  // pjrtkit's PJRT_Api.
  const PJRT_Api* api() const { return api_; }
  // The shared client: 2 devices on XLA:CPU, the host buffer pool off (cheap to keep).
  PJRT_Client* Client();

  // Checks `error` against the oracle and destroys it. Returns true when there was an error.
  bool Consume(PJRT_Error* error, const char* call) const;
  // Destroys `loaded` (and its PJRT_Executable view) through the C API.
  void DestroyLoaded(PJRT_LoadedExecutable* loaded) const;
  // Compiles `code` in `format` with `compile_options` on Client(); on success serializes the
  // executable (the bytes are dropped) and destroys it. Returns true when it compiled.
  bool CompileAndDestroy(std::string_view code, const char* format,
                         std::string_view compile_options);
  // Like CompileAndDestroy, returning the serialized bytes ("" when it did not compile).
  std::string CompileAndSerialize(std::string_view code, const char* format,
                                  std::string_view compile_options);
  // Serialized bytes of the loaded executable `loaded` ("" when serializing fails).
  std::string Serialize(PJRT_LoadedExecutable* loaded) const;

  // Aborts with `what` when `condition` is false (an oracle failure, kept by libFuzzer).
  static void Require(bool condition, const std::string& what);

 private:
  FuzzSupport();
  // Compiles, sets `*compiled`, serializes and destroys; returns the serialized bytes.
  std::string Compile(std::string_view code, const char* format, std::string_view compile_options,
                      bool* compiled);

  const PJRT_Api* api_ = nullptr;  // GetPjrtApi().
  PJRT_Client* client_ = nullptr;  // Made by Client(); never destroyed (the process ends).
};

// Serialized xla.CompileOptionsProto for 1 replica x 1 partition (the conformance suite's).
std::string_view CompileOptions1x1();
// An MLIR text program, f32[4] -> f32[4]: x + 1.
std::string_view AddOneMlir();

}  // namespace pjrtkit_fuzz

#endif  // PJRTKIT_TESTS_FUZZ_FUZZ_SUPPORT_H_
