// ArgsSizeProbe: calls one PJRT_Api slot of a loaded plugin, in a forked child, with a
// zero-filled Args buffer whose struct_size is 1, so that no field is read; an entry point built
// on OpenXLA's wrapper answers "Unexpected <Name>_Args size: expected N, got 1. ...", naming the
// size of the Args struct the plugin was built with.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_ARGS_SIZE_PROBE_H_
#define PJRTKIT_TOOLS_API_COVERAGE_ARGS_SIZE_PROBE_H_

// C++ standard library.
#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

namespace api_coverage {

// What one slot answered.
struct SlotAnswer {
  enum class Kind {
    kError,    // It returned an error (code and message below).
    kNoError,  // It returned nullptr.
    kCrashed,  // The child died in the call.
  };
  Kind kind = Kind::kCrashed;
  int code = 0;          // The PJRT_Error_Code, for kError.
  std::string message;   // The error's message, for kError ("" without PJRT_Error_Message).
};

// A size named by an answer: "Unexpected NAME size: expected SIZE, got 1".
struct NamedSize {
  std::string name;  // As the plugin wrote it: usually the Args struct, sometimes misspelt.
  size_t size = 0;   // The struct_size the plugin expects at least.
};

class ArgsSizeProbe {
 public:
  // `api` is the plugin's table; its PJRT_Error_* slots read the answers.
  explicit ArgsSizeProbe(const PJRT_Api* api);

  // Calls `fn` in a forked child (stderr silenced) with the struct_size-1 Args buffer.
  template <typename Args, typename Result>
  SlotAnswer Call(Result (*fn)(Args*)) const {
    static_assert(!std::is_void_v<Result>, "slots that return void have no answer to read");
    return RunInChild([fn](void* args) { return fn(static_cast<Args*>(args)); });
  }

  // Reads the size out of OpenXLA's "Unexpected NAME size: expected N, got 1" message; false
  // when `message` is not of that form.
  static bool ParseExpectedSize(const std::string& message, NamedSize* out);

 private:
  // Forks, runs `call` on the Args buffer in the child and sends its answer back through a pipe.
  SlotAnswer RunInChild(const std::function<PJRT_Error*(void*)>& call) const;

  // In the child: the code and message of `error` (then destroyed), as one record.
  std::string DescribeError(PJRT_Error* error) const;

  const PJRT_Api* api_;  // The plugin's table (not owned).
};

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_ARGS_SIZE_PROBE_H_
