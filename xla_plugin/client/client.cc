#include "xla_plugin/client/client.h"

#include <string>

namespace pjrtkit {
namespace {

// "0..3" style description of the ids in `devices` for error messages.
std::string DescribeIds(const std::vector<Device*>& devices, bool local) {
  std::string out;
  for (const Device* d : devices) {
    if (!out.empty()) out += ", ";
    out += std::to_string(local ? d->local_hardware_id() : d->description().id());
  }
  return "[" + out + "]";
}

}  // namespace

StatusOr<Device*> Client::LookupDevice(int id) const {
  for (Device* d : devices()) {
    if (d->description().id() == id) return d;
  }
  return InvalidArgument("no device with id " + std::to_string(id) + "; valid ids are " +
                         DescribeIds(devices(), /*local=*/false));
}

StatusOr<Device*> Client::LookupAddressableDevice(int local_hardware_id) const {
  for (Device* d : addressable_devices()) {
    if (d->local_hardware_id() == local_hardware_id) return d;
  }
  return InvalidArgument("no addressable device with local_hardware_id " +
                         std::to_string(local_hardware_id) + "; valid ones are " +
                         DescribeIds(addressable_devices(), /*local=*/true));
}

StatusOr<std::vector<int>> Client::DefaultDeviceAssignment(int num_replicas,
                                                           int num_partitions) const {
  if (num_replicas < 1 || num_partitions < 1) {
    return InvalidArgument("num_replicas and num_partitions must be >= 1; got " +
                           std::to_string(num_replicas) + " and " +
                           std::to_string(num_partitions));
  }
  const std::vector<Device*>& devs = addressable_devices();
  const size_t needed = static_cast<size_t>(num_replicas) * static_cast<size_t>(num_partitions);
  if (needed > devs.size()) {
    return InvalidArgument("a device assignment of " + std::to_string(num_replicas) +
                           " replicas x " + std::to_string(num_partitions) + " partitions needs " +
                           std::to_string(needed) + " devices; this client has " +
                           std::to_string(devs.size()));
  }
  std::vector<int> ids;
  ids.reserve(needed);
  for (size_t i = 0; i < needed; ++i) ids.push_back(devs[i]->description().id());
  return ids;
}

StatusOr<std::unique_ptr<LoadedExecutable>> Client::Load(
    const Executable& executable, const std::optional<std::string>& compile_options) {
  StatusOr<std::string> serialized = executable.Serialize();
  if (!serialized.ok()) {
    return Status(serialized.status().code(),
                  "Client::Load: the executable does not serialize: " +
                      serialized.status().message());
  }
  return DeserializeAndLoad(*serialized, compile_options);
}

StatusOr<MemoryLayout> Client::DefaultLayout(ElementType /*type*/,
                                             const std::vector<int64_t>& dims,
                                             const Memory* /*memory*/) const {
  return RowMajorLayout(dims.size());
}

}  // namespace pjrtkit
