#include "xla_plugin/plugin_wrapper/inner_device_info.h"

#include "xla_plugin/plugin_wrapper/inner_api.h"

namespace pjrtkit {
namespace plugin_wrapper {

StatusOr<InnerDeviceInfo> ReadInnerDescription(const InnerApi& api,
                                               PJRT_DeviceDescription* description) {
  InnerDeviceInfo info;
  PJRTKIT_INNER_ARGS(PJRT_DeviceDescription_Id, id_args);
  id_args.device_description = description;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_DeviceDescription_Id, &id_args));
  info.id = id_args.id;
  PJRTKIT_INNER_ARGS(PJRT_DeviceDescription_Kind, kind_args);
  kind_args.device_description = description;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_DeviceDescription_Kind, &kind_args));
  info.kind.assign(kind_args.device_kind, kind_args.device_kind_size);
  PJRTKIT_INNER_ARGS(PJRT_DeviceDescription_DebugString, debug_args);
  debug_args.device_description = description;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(api, PJRT_DeviceDescription_DebugString, &debug_args));
  info.debug_string.assign(debug_args.debug_string, debug_args.debug_string_size);
  PJRTKIT_INNER_ARGS(PJRT_DeviceDescription_ToString, to_string_args);
  to_string_args.device_description = description;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(api, PJRT_DeviceDescription_ToString, &to_string_args));
  info.to_string.assign(to_string_args.to_string, to_string_args.to_string_size);
  PJRTKIT_INNER_ARGS(PJRT_DeviceDescription_Attributes, attributes_args);
  attributes_args.device_description = description;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(api, PJRT_DeviceDescription_Attributes, &attributes_args));
  PJRTKIT_ASSIGN_OR_RETURN(info.attributes, InnerApi::ToAttributeMap(
                                                attributes_args.attributes,
                                                attributes_args.num_attributes));
  // Optional: a plugin without it keeps process 0 (one-process clients).
  PJRTKIT_INNER_ARGS(PJRT_DeviceDescription_ProcessIndex, process_args);
  process_args.device_description = description;
  if (PJRTKIT_INNER_CALL(api, PJRT_DeviceDescription_ProcessIndex, &process_args).ok()) {
    info.process_index = process_args.process_index;
  }
  return info;
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
