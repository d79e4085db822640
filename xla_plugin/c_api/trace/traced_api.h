// The traced PJRT_Api: one wrapper template, Traced<Table, Slot, Member>, instantiated for every
// slot of PJRTKIT_TRACE_SLOTS. It calls the untraced entry point of Table()'s ApiTable, times it
// and writes one line to the table's TraceSink:
//
//   pjrtkit-trace SLOT INPUTS[ -> OUTPUTS] = STATUS MICROSECONDSus
//
// INPUTS and OUTPUTS are ArgsPrinter's words for the Args members (outputs only after a
// successful call) plus the slot's Details (call_details.h), the inputs named before the call
// and the rest after it; STATUS is OK, `void` (the two
// slots that return nothing: PJRT_Error_Destroy, PJRT_Error_Message) or the error's code name,
// its id and the first line of its message (CODE error#N "text"). A _Destroy slot's inputs, and
// what InvalidatedBefore() names, are forgotten by the ids after a successful call. A line is
// written when its call returns, so a call made inside another (a PJRT_Event_OnReady callback
// run at once) is written before it.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_TRACE_TRACED_API_H_
#define PJRTKIT_XLA_PLUGIN_C_API_TRACE_TRACED_API_H_

// C++ standard library.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit.
#include "xla_plugin/c_api/api_table.h"
#include "xla_plugin/c_api/trace/args_printer.h"
#include "xla_plugin/c_api/trace/call_details.h"
#include "xla_plugin/c_api/trace/trace_fields.h"
#include "xla_plugin/c_api/trace/trace_sink.h"

namespace pjrtkit {
namespace capi {
namespace trace {

// Slot indices, in header order.
enum SlotIndex : size_t {
#define PJRTKIT_TRACE_SLOT_INDEX(slot) kSlot_##slot,
  PJRTKIT_TRACE_SLOTS(PJRTKIT_TRACE_SLOT_INDEX)
#undef PJRTKIT_TRACE_SLOT_INDEX
  kSlotCount
};

// The slot names, by index.
std::vector<std::string> SlotNames();

// " = OK", " = void" or " = CODE error#N \"first line\"" of `error` (read through `untraced`).
void AppendStatus(std::string& line, PJRT_Error* error, bool returns_void,
                  const PJRT_Api& untraced, HandleIds& ids);

// A call's line while it runs: the inputs, written before the call (so the ids they name are
// those of the moment of the call), and the handles a successful call invalidates.
struct PendingLine {
  std::string text;
  HandleList forget;
};

// The slot's name and inputs of a call of `slot` about to be made.
template <typename Args>
PendingLine BeginLine(TraceSink& sink, size_t slot, const Args* args) {
  PendingLine line;
  line.text = sink.slot_name(slot);
  if (args == nullptr) {
    line.text += " args=null";
    return line;
  }
  const bool destroys = line.text.size() > 8 &&
                        line.text.compare(line.text.size() - 8, 8, "_Destroy") == 0;
  line.forget = InvalidatedBefore(args);
  auto lock = sink.lock();
  ArgsPrinter<Args> inputs(args, ArgsPrinter<Args>::Phase::kInputs, sink.ids(), line.text,
                           destroys);
  TraceFields<Args>::Visit(inputs);
  Details(inputs);
  line.forget.insert(line.forget.end(), inputs.handles().begin(), inputs.handles().end());
  return line;
}

// Adds the outputs (after success), the status and the time to `line`, writes it and updates
// the ids.
template <typename Args>
void FinishLine(TraceSink& sink, const PJRT_Api& untraced, size_t slot, const Args* args,
                PendingLine& line, PJRT_Error* error, bool returns_void, double micros) {
  auto lock = sink.lock();
  if (args != nullptr && error == nullptr) {
    const size_t arrow = line.text.size();
    line.text += " ->";
    ArgsPrinter<Args> outputs(args, ArgsPrinter<Args>::Phase::kOutputs, sink.ids(), line.text);
    TraceFields<Args>::Visit(outputs);
    Details(outputs);
    if (line.text.size() == arrow + 3) line.text.resize(arrow);  // No outputs.
  }
  AppendStatus(line.text, error, returns_void, untraced, sink.ids());
  char time[32];
  std::snprintf(time, sizeof(time), " %.1fus", micros);
  line.text += time;
  sink.WriteLocked(slot, line.text, error != nullptr, micros);
  if (error == nullptr) {
    for (const auto& handle : line.forget) sink.ids().Forget(handle.first, handle.second);
  }
}

// FinishLine, dropping the line when it cannot be made.
template <typename Args>
void Finish(TraceSink& sink, const PJRT_Api& untraced, size_t slot, const Args* args,
            PendingLine& line, PJRT_Error* error, bool returns_void, double micros) noexcept {
  try {
    FinishLine(sink, untraced, slot, args, line, error, returns_void, micros);
  } catch (...) {
  }
}

// The result and Args types of a slot's function pointer type.
template <typename F>
struct SlotTraits;
template <typename R, typename A>
struct SlotTraits<R (*)(A*)> {
  using Result = R;
  using Args = A;
};

// The traced entry point of slot `Slot` (member `Member` of PJRT_Api) of the table Table().
template <const ApiTable& (*Table)(), size_t Slot, auto Member>
typename SlotTraits<std::remove_reference_t<decltype(std::declval<PJRT_Api&>().*Member)>>::Result
Traced(typename SlotTraits<
       std::remove_reference_t<decltype(std::declval<PJRT_Api&>().*Member)>>::Args* args) {
  using Traits =
      SlotTraits<std::remove_reference_t<decltype(std::declval<PJRT_Api&>().*Member)>>;
  const ApiTable& table = Table();
  const PJRT_Api& untraced = table.untraced();
  TraceSink& sink = *table.sink();
  // Tracing never fails or aborts a call: a line that cannot be made (no memory) is dropped.
  PendingLine line;
  bool traced = true;
  try {
    line = BeginLine(sink, Slot, args);
  } catch (...) {
    traced = false;
  }
  const auto start = std::chrono::steady_clock::now();
  auto micros = [&start] {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
        .count();
  };
  if constexpr (std::is_void_v<typename Traits::Result>) {
    (untraced.*Member)(args);
    const double elapsed = micros();
    if (traced) Finish(sink, untraced, Slot, args, line, nullptr, /*returns_void=*/true, elapsed);
  } else {
    PJRT_Error* error = (untraced.*Member)(args);
    const double elapsed = micros();
    if (traced) Finish(sink, untraced, Slot, args, line, error, /*returns_void=*/false, elapsed);
    return error;
  }
}

// Points every slot of `api` at its traced entry point over Table().
template <const ApiTable& (*Table)()>
void FillTraced(PJRT_Api* api) {
#define PJRTKIT_TRACE_FILL(slot) api->slot = &Traced<Table, kSlot_##slot, &PJRT_Api::slot>;
  PJRTKIT_TRACE_SLOTS(PJRTKIT_TRACE_FILL)
#undef PJRTKIT_TRACE_FILL
}

// Writes the summary of Table()'s sink (registered with std::atexit when tracing is on).
template <const ApiTable& (*Table)()>
void WriteSummaryAtExit() {
  if (TraceSink* sink = Table().sink()) sink->WriteSummary();
}

}  // namespace trace
}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_TRACE_TRACED_API_H_
