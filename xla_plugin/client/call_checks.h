// The checks of meaning that hold for every device: a deleted executable, a deleted or donated
// argument, objects of another client, the number of argument lists, addressability, and which
// device a memory puts a new buffer on. The C layer (c_api/) calls them before it calls the
// device, so a device (the shared wrapper in plugin_wrapper/, or a team's own Client) gets them
// without repeating them; a C++ caller that drives a device directly calls them the same way.
// Who checks what: c_api/README.md, "Which layer checks what".
//
// Every error starts with `fn` (the entry point, "PJRT_LoadedExecutable_Execute"), names the
// parameter (`what`, "argument_lists[0][1]") and says what is accepted.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_CALL_CHECKS_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_CALL_CHECKS_H_

#include <cstddef>
#include <string>

#include "xla_plugin/client/buffer.h"
#include "xla_plugin/client/client.h"
#include "xla_plugin/client/device.h"
#include "xla_plugin/client/loaded_executable.h"
#include "xla_plugin/client/memory.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"

namespace pjrtkit {

// FAILED_PRECONDITION "<fn>: <what> has been deleted; only an executable that was not deleted
// is accepted" after LoadedExecutable::Delete().
Status CheckExecutableNotDeleted(const char* fn, const char* what,
                                 const LoadedExecutable& executable);

// FAILED_PRECONDITION "<fn>: <what> has been deleted or donated; only a live buffer is
// accepted" once Buffer::IsDeleted().
Status CheckBufferNotDeleted(const char* fn, const std::string& what, const Buffer& buffer);
// That error, for a caller that knows more of deletion than the Buffer (the C layer's
// PJRT_Buffer_Delete may wait for external references before it calls Buffer::Delete()).
Status DeletedBufferError(const char* fn, const std::string& what);

// INVALID_ARGUMENT "<fn>: <what> belongs to another client; only objects of the client of the
// call are accepted" when `actual` is not `expected`.
Status CheckSameClient(const char* fn, const std::string& what, const Client* expected,
                       const Client* actual);

// INVALID_ARGUMENT "<fn>: <what> (device <id> of process <process>) is not addressable by this
// process; only addressable devices are accepted".
Status CheckAddressable(const char* fn, const char* what, const Device& device);

// The number of argument lists an execution of `executable` takes: 1 with an `execute_device`
// (which must be addressable), else one per addressable device. INVALID_ARGUMENT
// "<fn>: num_devices is <n>, but the executable runs on <m> device(s); only <m> is accepted",
// and for a portable executable (compiled for no device) without execute_device.
Status CheckExecuteDevices(const char* fn, const LoadedExecutable& executable,
                           size_t num_devices, const Device* execute_device);

// The device a new buffer goes on, given a `device` and/or a `memory` of one client (at least
// one non-null): `device` when given, which `memory` (when given) must be addressable by; else
// the first device `memory` is addressable by. The device must be addressable (CheckAddressable).
// INVALID_ARGUMENT "<fn>: memory <m> is not addressable by device <d>; only memories of that
// device are accepted" and "<fn>: memory <m> is addressable by no device; only memories of a
// device are accepted".
StatusOr<Device*> ResolveDestinationDevice(const char* fn, Device* device, const Memory* memory);

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_CALL_CHECKS_H_
