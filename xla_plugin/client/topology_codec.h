// The byte format of Topology::Serialize / Topology::Deserialize: line-oriented text in which
// every string is length-prefixed ("<bytes>:<text>"), so names with spaces or newlines survive.
//
//   pjrtkit-topology 2
//   platform 7:pjrtkit
//   version 5:1.0.0
//   attributes 1
//   attr 12:device_count i 4
//   devices 1
//   device 0 0 11:pjrtkit_cpu 9:PJRTKIT_0 16:PjrtkitDevice(0) 1
//   attr 7:backend s 7:xla_cpu
//
// Attribute values: "i <int64>", "s <string>", "b 0|1", "f <IEEE-754 bits, 8 hex digits>",
// "l <count> <int64>...". A device line ends with its attribute count; its "attr" lines follow.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_TOPOLOGY_CODEC_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_TOPOLOGY_CODEC_H_

#include <memory>
#include <string>

#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/topology.h"

namespace pjrtkit {

// `topology` in the format above: platform name and version, attributes, and every device
// description (id, process index, kind, debug string, to-string, attributes).
std::string EncodeTopology(const Topology& topology);

// The topology EncodeTopology wrote; INVALID_ARGUMENT naming the byte offset and what was
// expected when `bytes` are not in that format.
StatusOr<std::unique_ptr<Topology>> DecodeTopology(const std::string& bytes);

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_TOPOLOGY_CODEC_H_
