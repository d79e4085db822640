#include "xla_plugin/c_api/event.h"

// C++ standard library.
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/entry_point.h"
#include "xla_plugin/c_api/handles.h"

namespace pjrtkit {
namespace capi {

PJRT_Event* WrapEvent(std::shared_ptr<Event> event) {
  if (event == nullptr) event = Event::CreateReady();
  return new PJRT_Event{std::move(event)};
}

PJRT_Error* EventDestroy(PJRT_Event_Destroy_Args* args) {
  return Guard("PJRT_Event_Destroy", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Event_Destroy_Args, event)));
    delete args->event;
    return OkStatus();
  });
}

PJRT_Error* EventIsReady(PJRT_Event_IsReady_Args* args) {
  return Guard("PJRT_Event_IsReady", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Event_IsReady_Args, is_ready)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "event", args->event));
    args->is_ready = args->event->event->IsReady();
    return OkStatus();
  });
}

PJRT_Error* EventError(PJRT_Event_Error_Args* args) {
  return Guard("PJRT_Event_Error", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Event_Error_Args, event)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "event", args->event));
    return args->event->event->Await();
  });
}

PJRT_Error* EventAwait(PJRT_Event_Await_Args* args) {
  return Guard("PJRT_Event_Await", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Event_Await_Args, event)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "event", args->event));
    return args->event->event->Await();
  });
}

PJRT_Error* EventOnReady(PJRT_Event_OnReady_Args* args) {
  return Guard("PJRT_Event_OnReady", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Event_OnReady_Args, user_arg)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "event", args->event));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "callback", reinterpret_cast<void*>(args->callback)));
    if (args->event->event->IsReady()) {
      // Ready already (the common case on CPU): call back now, without building a closure.
      PJRT_Error* error = nullptr;
      try {
        error = ToPjrtError(args->event->event->status());
      } catch (...) {
        error = EmergencyError();
      }
      args->callback(error, args->user_arg);  // The callback owns `error`.
      return OkStatus();
    }
    // The framework may destroy its handle right after this call returns: the producer holds
    // the Event until it sets it, and an Event dropped unset runs this with CANCELLED (~Event),
    // so the callback always runs exactly once and nothing keeps the Event alive in a cycle.
    PJRT_Event_OnReadyCallback callback = args->callback;
    void* user_arg = args->user_arg;
    args->event->event->OnReady([callback, user_arg](Status status) {
      PJRT_Error* error = nullptr;
      try {
        error = ToPjrtError(std::move(status));
      } catch (...) {
        error = EmergencyError();
      }
      callback(error, user_arg);  // The callback owns `error`.
    });
    return OkStatus();
  });
}

PJRT_Error* EventCreate(PJRT_Event_Create_Args* args) {
  return Guard("PJRT_Event_Create", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Event_Create_Args, event)));
    auto event = std::make_unique<PJRT_Event>();
    event->event = Event::Create();
    event->set_by_framework = true;
    args->event = event.release();
    return OkStatus();
  });
}

PJRT_Error* EventSet(PJRT_Event_Set_Args* args) {
  return Guard("PJRT_Event_Set", [&](const char* fn) -> Status {
    PJRTKIT_RETURN_IF_ERROR(
        CheckArgs(fn, args, PJRTKIT_ARGS_SIZE(PJRT_Event_Set_Args, error_message_size)));
    PJRTKIT_RETURN_IF_ERROR(CheckHandle(fn, "event", args->event));
    if (!args->event->set_by_framework) {
      return InvalidArgument(std::string(fn) + ": the event was not made by PJRT_Event_Create; "
                                               "only those can be set");
    }
    const int code = RawEnumValue(args->error_code);  // Any int: not loaded as the enum.
    if (code < 0 || code > static_cast<int>(StatusCode::kUnauthenticated)) {
      return InvalidArgument(std::string(fn) + ": error_code " + std::to_string(code) +
                             " is not a PJRT_Error_Code (0..16)");
    }
    Status status;
    if (code != PJRT_Error_Code_OK) {
      if (args->error_message == nullptr && args->error_message_size > 0) {
        return NullHandleError(fn, "error_message");
      }
      status = Status(static_cast<StatusCode>(code),
                      args->error_message == nullptr
                          ? std::string()
                          : std::string(args->error_message, args->error_message_size));
    }
    if (!args->event->event->Set(std::move(status))) {
      return FailedPrecondition(std::string(fn) + ": the event was set already");
    }
    return OkStatus();
  });
}

}  // namespace capi
}  // namespace pjrtkit
