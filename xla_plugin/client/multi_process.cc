#include "xla_plugin/client/multi_process.h"

#include <utility>

namespace pjrtkit {
namespace {

// Removes `name` from `options` and reads it as an int64 (a decimal string is accepted: JAX's
// string form of the create options); false when absent.
StatusOr<bool> TakeInt(AttributeMap* options, const char* name, int64_t* out) {
  auto it = options->find(name);
  if (it == options->end()) return false;
  const AttributeValue value = it->second;
  options->erase(it);
  if (const int64_t* number = std::get_if<int64_t>(&value)) {
    *out = *number;
    return true;
  }
  if (const std::string* text = std::get_if<std::string>(&value)) {
    const size_t digits = text->size();
    bool decimal = digits > 0 && digits <= 9;
    for (char c : *text) decimal = decimal && c >= '0' && c <= '9';
    if (decimal) {
      *out = std::stoll(*text);
      return true;
    }
  }
  return InvalidArgument(std::string("create option '") + name +
                         "' must be an int64 (the framework's node option), got " +
                         AttributeTypeName(value));
}

}  // namespace

StatusOr<MultiProcess> MultiProcess::FromOptions(AttributeMap* options,
                                                 std::shared_ptr<KeyValueStore> store) {
  int64_t node_id = 0;
  int64_t num_nodes = 1;
  PJRTKIT_ASSIGN_OR_RETURN(bool has_id, TakeInt(options, kNodeIdOption, &node_id));
  PJRTKIT_ASSIGN_OR_RETURN(bool has_count, TakeInt(options, kNumNodesOption, &num_nodes));
  if (has_id && !has_count) {
    return InvalidArgument("create option 'node_id' needs 'num_nodes' (the number of processes)");
  }
  if (has_count && !has_id && num_nodes > 1) {
    return InvalidArgument("create option 'num_nodes' (" + std::to_string(num_nodes) +
                           ") needs 'node_id' (this process's index in [0, num_nodes))");
  }
  if (num_nodes < 1 || num_nodes > 65536) {
    return InvalidArgument("create option 'num_nodes' must be in [1, 65536], got " +
                           std::to_string(num_nodes));
  }
  if (node_id < 0 || node_id >= num_nodes) {
    return InvalidArgument("create option 'node_id' must be in [0, num_nodes) = [0, " +
                           std::to_string(num_nodes) + "), got " + std::to_string(node_id));
  }
  if (num_nodes > 1 && store == nullptr) {
    return InvalidArgument(
        "a client of " + std::to_string(num_nodes) +
        " processes (create option 'num_nodes') needs the framework's key-value store: "
        "PJRT_Client_Create_Args.kv_get_callback and kv_put_callback were not set");
  }
  MultiProcess out;
  out.process_index_ = static_cast<int>(node_id);
  out.num_processes_ = static_cast<int>(num_nodes);
  out.node_options_given_ = has_id || has_count;
  out.store_ = std::move(store);
  return out;
}

}  // namespace pjrtkit
