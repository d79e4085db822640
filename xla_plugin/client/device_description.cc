#include "xla_plugin/client/device_description.h"

#include <utility>

namespace pjrtkit {

DeviceDescription::DeviceDescription(int id, int process_index, std::string kind,
                                     std::string debug_string, std::string to_string,
                                     AttributeMap attributes)
    : id_(id),
      process_index_(process_index),
      kind_(std::move(kind)),
      debug_string_(std::move(debug_string)),
      to_string_(std::move(to_string)),
      attributes_(std::move(attributes)) {}

}  // namespace pjrtkit
