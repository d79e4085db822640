// PJRT_Event_* entry points and the helper that hands a pjrtkit::Event to the framework.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_EVENT_H_
#define PJRTKIT_XLA_PLUGIN_C_API_EVENT_H_

// C++ standard library.
#include <memory>

// PJRT C API.
#include "xla/pjrt/c/pjrt_c_api.h"

// pjrtkit client layer.
#include "xla_plugin/client/event.h"

namespace pjrtkit {
namespace capi {

// A new PJRT_Event sharing `event` (a null `event` becomes an already-ready OK event). The
// framework frees it with PJRT_Event_Destroy.
PJRT_Event* WrapEvent(std::shared_ptr<Event> event);

// PJRT_Event_Destroy: frees `args->event` (nullptr is fine). Pending OnReady callbacks still run.
PJRT_Error* EventDestroy(PJRT_Event_Destroy_Args* args);

// PJRT_Event_IsReady: whether the event has completed (with or without an error).
PJRT_Error* EventIsReady(PJRT_Event_IsReady_Args* args);

// PJRT_Event_Error: the event's error (nullptr when it succeeded). Blocks until the event is
// ready if it is not yet (the C API asks callers to check IsReady first).
PJRT_Error* EventError(PJRT_Event_Error_Args* args);

// PJRT_Event_Await: blocks until the event is ready and returns its error (nullptr if none).
PJRT_Error* EventAwait(PJRT_Event_Await_Args* args);

// PJRT_Event_Create: a new event that the framework makes ready with PJRT_Event_Set (for example
// to order work of its own before a PJRT operation it passes the event to).
PJRT_Error* EventCreate(PJRT_Event_Create_Args* args);

// PJRT_Event_Set: makes an event of PJRT_Event_Create ready with `error_code` (OK, or an error with
// `error_message`); waiting callbacks run on this thread. INVALID_ARGUMENT for an event pjrtkit
// made (only the device completes those), FAILED_PRECONDITION when it was set already.
PJRT_Error* EventSet(PJRT_Event_Set_Args* args);

// PJRT_Event_OnReady: calls `callback(error, user_arg)` once the event is ready (now, if it is).
// The callback holds the pjrtkit::Event, so the framework may destroy the handle right away.
PJRT_Error* EventOnReady(PJRT_Event_OnReady_Args* args);

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_EVENT_H_
