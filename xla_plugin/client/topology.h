// Topology: the devices a platform would have, known without creating a client.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_TOPOLOGY_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_TOPOLOGY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xla_plugin/client/device_description.h"
#include "xla_plugin/client/executable.h"
#include "xla_plugin/client/native_handle.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

class Client;

// A platform's device set: platform name and version, device descriptions and attributes.
class Topology {
 public:
  // A topology of `devices` on platform `platform_name` at `platform_version`.
  Topology(std::string platform_name, std::string platform_version,
           std::vector<DeviceDescription> devices, AttributeMap attributes);
  virtual ~Topology() = default;

  // The other PJRT plugin's topology behind this one (native_handle.h); default: none.
  virtual NativeHandle native_handle() const { return {}; }
  // Platform name ("pjrtkit").
  const std::string& platform_name() const { return platform_name_; }
  // Platform version string.
  const std::string& platform_version() const { return platform_version_; }
  // The devices, by id order.
  const std::vector<DeviceDescription>& devices() const { return devices_; }
  // Platform attributes.
  const AttributeMap& attributes() const { return attributes_; }
  // A byte string describing the whole topology (the format of topology_codec.h), which
  // Deserialize turns back into an equal Topology.
  virtual StatusOr<std::string> Serialize() const;
  // The topology `bytes` (made by Topology::Serialize) describe; INVALID_ARGUMENT naming the
  // byte offset when they are not in that format.
  static StatusOr<std::unique_ptr<Topology>> Deserialize(const std::string& bytes);
  // The layout an array of `type` and `dims` gets by default on this topology's devices
  // (PJRT_Layouts_PJRT_Topology_GetDefaultLayout; ahead-of-time compilation asks). The C-API
  // layer answers for tokens itself and rejects negative dimensions. Default: dense row-major.
  virtual StatusOr<MemoryLayout> DefaultLayout(ElementType type,
                                               const std::vector<int64_t>& dims) const;
  // A 64-bit fingerprint, equal for topologies that describe the same devices
  // (PJRT_TopologyDescription_Fingerprint). Default: FNV-1a of Serialize().
  virtual StatusOr<uint64_t> Fingerprint() const;
  // The kind ids of the memory spaces of this topology's devices
  // (PJRT_TopologyDescription_GetMemorySpaceKindIds); UNIMPLEMENTED unless the device knows them.
  virtual StatusOr<std::vector<int>> MemorySpaceKindIds() const;
  // The serialized xla.ShapeProto an array of `type` and `dims` (laid out as `layout`, when set)
  // has in memory spaces of `kind_id` (PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace);
  // UNIMPLEMENTED unless the device knows it.
  virtual StatusOr<std::string> CanonicalShapeForMemorySpace(
      int kind_id, ElementType type, const std::vector<int64_t>& dims,
      const std::optional<MemoryLayout>& layout) const;
  // `compile_options` (a serialized xla.CompileOptionsProto) as this topology's device accepts them
  // from a framework that hands them to it directly (the forwarded PhaseCompile extension):
  // defaults filled in, options the device would abort on refused. Default: unchanged.
  virtual StatusOr<std::string> PrepareCompileOptions(const std::string& compile_options) const {
    return compile_options;
  }
  // Compiles `program` with `compile_options` (a serialized xla.CompileOptionsProto) for the
  // devices of this topology, ahead of time (PJRT_Compile): the result is not loaded, answers
  // every Executable query, and its Serialize() bytes load with Client::DeserializeAndLoad on a
  // client of this topology (a client of another topology must refuse them). `client`, when not
  // null, is a live client of this platform the caller offers (PJRT_Compile's optional client,
  // or the client that owns this topology); a device may compile through it when it fits, but
  // the result must not depend on it. The executable may outlive this topology and `client`.
  // Default: UNIMPLEMENTED (a device without an ahead-of-time compiler).
  virtual StatusOr<std::shared_ptr<Executable>> Compile(const Program& program,
                                                        const std::string& compile_options,
                                                        Client* client) const;

 private:
  std::string platform_name_;               // Platform name.
  std::string platform_version_;            // Platform version.
  std::vector<DeviceDescription> devices_;  // Device descriptions.
  AttributeMap attributes_;                 // Platform attributes.
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_TOPOLOGY_H_
