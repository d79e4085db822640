#include "xla_plugin/client/call_checks.h"

#include <vector>

namespace pjrtkit {

Status CheckExecutableNotDeleted(const char* fn, const char* what,
                                 const LoadedExecutable& executable) {
  if (!executable.IsDeleted()) return OkStatus();
  return FailedPrecondition(std::string(fn) + ": " + what +
                            " has been deleted; only an executable that was not deleted is "
                            "accepted");
}

Status CheckBufferNotDeleted(const char* fn, const std::string& what, const Buffer& buffer) {
  return buffer.IsDeleted() ? DeletedBufferError(fn, what) : OkStatus();
}

Status DeletedBufferError(const char* fn, const std::string& what) {
  return FailedPrecondition(std::string(fn) + ": " + what +
                            " has been deleted or donated; only a live buffer is accepted");
}

Status CheckSameClient(const char* fn, const std::string& what, const Client* expected,
                       const Client* actual) {
  if (expected == actual) return OkStatus();
  return InvalidArgument(std::string(fn) + ": " + what +
                         " belongs to another client; only objects of the client of the call "
                         "are accepted");
}

Status CheckAddressable(const char* fn, const char* what, const Device& device) {
  if (device.IsAddressable()) return OkStatus();
  return InvalidArgument(std::string(fn) + ": " + what + " (device " +
                         std::to_string(device.description().id()) + " of process " +
                         std::to_string(device.description().process_index()) +
                         ") is not addressable by this process; only addressable devices are "
                         "accepted");
}

Status CheckExecuteDevices(const char* fn, const LoadedExecutable& executable,
                           size_t num_devices, const Device* execute_device) {
  size_t expected = executable.addressable_devices().size();
  if (execute_device != nullptr) {
    PJRTKIT_RETURN_IF_ERROR(CheckAddressable(fn, "execute_device", *execute_device));
    expected = 1;
  } else if (expected == 0) {
    return InvalidArgument(std::string(fn) +
                           ": the executable is portable (compiled for no device); only a call "
                           "with execute_device set is accepted");
  }
  if (num_devices == expected) return OkStatus();
  return InvalidArgument(std::string(fn) + ": num_devices is " + std::to_string(num_devices) +
                         ", but the executable runs on " + std::to_string(expected) +
                         " device(s); only " + std::to_string(expected) + " is accepted");
}

StatusOr<Device*> ResolveDestinationDevice(const char* fn, Device* device, const Memory* memory) {
  if (memory != nullptr) {
    const std::vector<Device*>& by = memory->addressable_by_devices();
    if (device == nullptr) {
      if (by.empty()) {
        return InvalidArgument(std::string(fn) + ": memory " + memory->debug_string() +
                               " is addressable by no device; only memories of a device are "
                               "accepted");
      }
      device = by.front();
    } else {
      bool addressable = false;
      for (const Device* d : by) addressable = addressable || d == device;
      if (!addressable) {
        return InvalidArgument(std::string(fn) + ": memory " + memory->debug_string() +
                               " is not addressable by device " +
                               device->description().debug_string() +
                               "; only memories of that device are accepted");
      }
    }
  }
  if (device == nullptr) {
    return InvalidArgument(std::string(fn) + ": neither a device nor a memory was given");
  }
  PJRTKIT_RETURN_IF_ERROR(CheckAddressable(fn, "the destination device", *device));
  return device;
}

}  // namespace pjrtkit
