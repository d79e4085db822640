// What several probes start from: the f32[4] x + 1 program with its 1x1 compile options, and an
// f32[4] buffer made from host data.
#ifndef PJRTKIT_TOOLS_API_COVERAGE_PROBE_FIXTURES_H_
#define PJRTKIT_TOOLS_API_COVERAGE_PROBE_FIXTURES_H_

// C++ standard library.
#include <string>

// The PJRT C API and the recorder.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "tools/api_coverage/probe_recorder.h"

namespace api_coverage {

// The conformance suite's x + 1 program as a PJRT_Program (MLIR text) and its compile options;
// `program` points into this object, so keep it alive (and unmoved) while the program is used.
class AddOneProgram {
 public:
  AddOneProgram();
  AddOneProgram(const AddOneProgram&) = delete;
  AddOneProgram& operator=(const AddOneProgram&) = delete;

  PJRT_Program* program() { return &program_; }
  const std::string& compile_options() const { return compile_options_; }

 private:
  std::string code_;
  std::string format_;
  std::string compile_options_;
  PJRT_Program program_;
};

// Calls PJRT_Client_BufferFromHostBuffer for f32[4] {1, 2, 3, 4} on `device` through `probe`
// (recorded under the slot's name); the call's arguments on success, with `buffer` and
// `done_with_host_buffer` filled in, else nullptr-buffer arguments.
PJRT_Client_BufferFromHostBuffer_Args ProbeF32Buffer(ProbeRecorder* probe, PJRT_Client* client,
                                                     PJRT_Device* device);

}  // namespace api_coverage

#endif  // PJRTKIT_TOOLS_API_COVERAGE_PROBE_FIXTURES_H_
