// MultiProcess: where a client stands in a multi-process job (PJRT_Client_Create's node options
// and key-value store), handed by the C-API layer to the device's factory.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_MULTI_PROCESS_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_MULTI_PROCESS_H_

#include <memory>
#include <string>

#include "xla_plugin/client/key_value_store.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"

namespace pjrtkit {

// The create options a framework sets for a multi-process client (jaxlib, after
// jax.distributed.initialize(): node_id, num_nodes).
inline constexpr const char* kNodeIdOption = "node_id";
inline constexpr const char* kNumNodesOption = "num_nodes";

// A client's process and the store shared by all processes. The default is one process alone.
class MultiProcess {
 public:
  // One process, no store.
  MultiProcess() = default;

  // Takes node_id / num_nodes out of `options` (the rest is the device's) and pairs them with
  // `store` (null when the framework passed no callbacks). INVALID_ARGUMENT for a value that is
  // not an int64 (or a decimal string, JAX's string form), node_id outside [0, num_nodes),
  // num_nodes < 1, node_id without num_nodes, or num_nodes > 1 without a store.
  static StatusOr<MultiProcess> FromOptions(AttributeMap* options,
                                            std::shared_ptr<KeyValueStore> store);

  // This process's index, 0..num_processes-1.
  int process_index() const { return process_index_; }
  // Number of processes; 1 for a single-process client.
  int num_processes() const { return num_processes_; }
  // True for a client of more than one process.
  bool is_multi_process() const { return num_processes_ > 1; }
  // True when node options were given (even num_nodes = 1), so a device that cannot take part
  // in a multi-process job can say so.
  bool node_options_given() const { return node_options_given_; }
  // The shared store; null when none was given.
  const std::shared_ptr<KeyValueStore>& store() const { return store_; }

 private:
  int process_index_ = 0;                // node_id.
  int num_processes_ = 1;                // num_nodes.
  bool node_options_given_ = false;      // node_id / num_nodes were in the options.
  std::shared_ptr<KeyValueStore> store_;  // The framework's store, or null.
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_MULTI_PROCESS_H_
