#include "xla_plugin/c_api/trace/call_details.h"

// C++ standard library.
#include <string>

// pjrtkit.
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {
namespace trace {
namespace {

// " format=\"...\" code_size=N" of `program` (null: " program=null").
template <typename Args>
void Program(ArgsPrinter<Args>& printer, const PJRT_Program* program) {
  if (program == nullptr) {
    printer.Named("program") += "null";
    return;
  }
  if (program->format == nullptr) {
    printer.Named("format") += "null";
  } else {
    AppendQuoted(printer.Named("format"), program->format, program->format_size);
  }
  printer.Named("code_size") += std::to_string(program->code_size);
}

}  // namespace

void Details(ArgsPrinter<PJRT_LoadedExecutable_Execute_Args>& printer) {
  const PJRT_LoadedExecutable_Execute_Args* args = printer.args();
  if (!printer.Present(&PJRT_LoadedExecutable_Execute_Args::num_args)) return;
  if (printer.inputs()) {
    std::string& out = printer.Named("args");
    if (args->argument_lists == nullptr) {
      out += "null";
      return;
    }
    out += "[";
    for (size_t d = 0; d < args->num_devices; ++d) {
      if (d > 0) out += ",";
      out += "[";
      for (size_t a = 0; a < args->num_args; ++a) {
        if (a > 0) out += ",";
        out += args->argument_lists[d] ? printer.HandleName(args->argument_lists[d][a]) : "null";
      }
      out += "]";
    }
    out += "]";
    return;
  }
  if (args->output_lists != nullptr && args->executable != nullptr) {
    std::string& out = printer.Named("outputs");
    out += "[";
    for (size_t d = 0; d < args->num_devices; ++d) {
      if (d > 0) out += ",";
      out += "[";
      for (size_t o = 0; o < args->executable->num_outputs; ++o) {
        if (o > 0) out += ",";
        out += args->output_lists[d] ? printer.HandleName(args->output_lists[d][o]) : "null";
      }
      out += "]";
    }
    out += "]";
  }
  if (printer.Present(&PJRT_LoadedExecutable_Execute_Args::device_complete_events) &&
      args->device_complete_events != nullptr) {
    std::string& out = printer.Named("device_complete_events");
    out += "[";
    for (size_t d = 0; d < args->num_devices; ++d) {
      if (d > 0) out += ",";
      out += printer.HandleName(args->device_complete_events[d]);
    }
    out += "]";
  }
}

void Details(ArgsPrinter<PJRT_Client_Compile_Args>& printer) {
  if (printer.inputs() && printer.Present(&PJRT_Client_Compile_Args::program)) {
    Program(printer, printer.args()->program);
  }
}

void Details(ArgsPrinter<PJRT_Compile_Args>& printer) {
  if (printer.inputs() && printer.Present(&PJRT_Compile_Args::program)) {
    Program(printer, printer.args()->program);
  }
}

HandleList InvalidatedBefore(const PJRT_Client_Destroy_Args* args) {
  HandleList handles;
  if (args->struct_size < PJRT_Client_Destroy_Args_STRUCT_SIZE || args->client == nullptr) {
    return handles;
  }
  for (PJRT_Device* device : args->client->devices) {
    handles.emplace_back(HandleKind::kDevice, device);
    handles.emplace_back(HandleKind::kDeviceDescription, &device->description);
  }
  for (const auto& memory : args->client->owned_memories) {
    handles.emplace_back(HandleKind::kMemory, static_cast<const PJRT_Memory*>(memory.get()));
  }
  return handles;
}

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit
