#include "tools/api_coverage/probe_fixtures.h"

// C and C++ standard library.
#include <cstdint>
#include <cstring>

// The conformance suite's programs and compile options.
#include "tests/conformance/test_data.h"

namespace api_coverage {

AddOneProgram::AddOneProgram()
    : code_(pjrt_conformance::kAddOneF32),
      format_("mlir"),
      compile_options_(pjrt_conformance::CompileOptions1x1()) {
  std::memset(&program_, 0, sizeof(program_));
  program_.struct_size = PJRT_Program_STRUCT_SIZE;
  program_.code = &code_[0];
  program_.code_size = code_.size();
  program_.format = format_.data();
  program_.format_size = format_.size();
}

PJRT_Client_BufferFromHostBuffer_Args ProbeF32Buffer(ProbeRecorder* probe, PJRT_Client* client,
                                                     PJRT_Device* device) {
  static const float kData[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  static const int64_t kDims[1] = {4};
  PROBE_ARGS(PJRT_Client_BufferFromHostBuffer_Args, from_host);
  from_host.client = client;
  from_host.data = kData;
  from_host.type = PJRT_Buffer_Type_F32;
  from_host.dims = kDims;
  from_host.num_dims = 1;
  from_host.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  from_host.device = device;
  if (!PROBE_CALL(PJRT_Client_BufferFromHostBuffer, from_host)) from_host.buffer = nullptr;
  return from_host;
}

}  // namespace api_coverage
