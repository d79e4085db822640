#include "xla_plugin/plugin_wrapper/wrapped_transfer_manager.h"

#include <string>
#include <utility>
#include <variant>

#include "xla_plugin/plugin_wrapper/inner_layout.h"
#include "xla_plugin/plugin_wrapper/wrapped_buffer.h"
#include "xla_plugin/plugin_wrapper/wrapped_client.h"

namespace pjrtkit {
namespace plugin_wrapper {

StatusOr<std::unique_ptr<WrappedTransferManager>> WrappedTransferManager::Create(
    WrappedClient* client, const std::vector<BufferShape>& shapes,
    const std::vector<std::optional<MemoryLayout>>& layouts, WrappedMemory* memory) {
  if (!layouts.empty() && layouts.size() != shapes.size()) {
    return InvalidArgument("CreateBuffersForAsyncHostToDevice: " +
                           std::to_string(layouts.size()) + " layouts for " +
                           std::to_string(shapes.size()) + " shapes");
  }
  std::vector<PJRT_ShapeSpec> specs(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    specs[i].struct_size = PJRT_ShapeSpec_STRUCT_SIZE;
    specs[i].dims = shapes[i].dims.data();
    specs[i].num_dims = shapes[i].dims.size();
    PJRTKIT_ASSIGN_OR_RETURN(specs[i].element_type, client->inner().ToInnerType(shapes[i].type));
  }
  // Inner layouts must stay put while the call reads them: one heap object each.
  std::vector<std::unique_ptr<InnerLayout>> inner_layouts;
  std::vector<PJRT_Buffer_MemoryLayout*> layout_ptrs;
  for (const std::optional<MemoryLayout>& layout : layouts) {
    if (layout.has_value()) {
      inner_layouts.push_back(std::make_unique<InnerLayout>(*layout));
      layout_ptrs.push_back(inner_layouts.back()->get());
    } else {
      layout_ptrs.push_back(nullptr);
    }
  }
  PJRTKIT_INNER_ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice, args);
  args.client = client->inner_client();
  args.shape_specs = specs.data();
  args.num_shape_specs = specs.size();
  args.device_layouts = layout_ptrs.empty() ? nullptr : layout_ptrs.data();
  args.num_device_layouts = layout_ptrs.size();
  args.memory = memory->inner();
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(client->inner(), PJRT_Client_CreateBuffersForAsyncHostToDevice, &args));
  if (args.transfer_manager == nullptr) {
    return Internal(client->inner().name() + " returned a null transfer manager");
  }
  std::unique_ptr<WrappedTransferManager> manager(
      new WrappedTransferManager(client, args.transfer_manager));
  PJRTKIT_RETURN_IF_ERROR(manager->Init());  // On error the destructor destroys the inner one.
  return manager;
}

WrappedTransferManager::~WrappedTransferManager() {
  PJRTKIT_INNER_ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy, args);
  args.transfer_manager = inner_;
  PJRTKIT_INNER_CALL(client_->inner(), PJRT_AsyncHostToDeviceTransferManager_Destroy, &args);
}

Status WrappedTransferManager::Init() {
  const InnerApi& api = client_->inner();
  PJRTKIT_INNER_ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferCount, count_args);
  count_args.transfer_manager = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(api, PJRT_AsyncHostToDeviceTransferManager_BufferCount, &count_args));
  buffer_count_ = count_args.buffer_count;
  PJRTKIT_INNER_ARGS(PJRT_AsyncHostToDeviceTransferManager_Device, device_args);
  device_args.transfer_manager = inner_;
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(api, PJRT_AsyncHostToDeviceTransferManager_Device, &device_args));
  device_ = client_->FromInner(device_args.device_out);
  if (device_ == nullptr) {
    return Internal(api.name() + " transfer manager is on an unknown device");
  }
  return OkStatus();
}

Status WrappedTransferManager::CheckIndex(int index) const {
  if (index >= 0 && static_cast<size_t>(index) < buffer_count_) return OkStatus();
  return InvalidArgument("asynchronous transfer: buffer index " + std::to_string(index) +
                         " is out of range; the transfer has " + std::to_string(buffer_count_) +
                         " buffer(s)");
}

StatusOr<size_t> WrappedTransferManager::buffer_size(int index) const {
  PJRTKIT_RETURN_IF_ERROR(CheckIndex(index));
  PJRTKIT_INNER_ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferSize, args);
  args.transfer_manager = inner_;
  args.buffer_index = index;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(
      client_->inner(), PJRT_AsyncHostToDeviceTransferManager_BufferSize, &args));
  return args.buffer_size;
}

StatusOr<std::shared_ptr<Event>> WrappedTransferManager::TransferData(int index, const void* data,
                                                                     int64_t offset,
                                                                     int64_t size, bool is_last) {
  PJRTKIT_RETURN_IF_ERROR(CheckIndex(index));
  PJRTKIT_INNER_ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferData, args);
  args.transfer_manager = inner_;
  args.buffer_index = index;
  args.data = data;
  args.offset = offset;
  args.transfer_size = size;
  args.is_last_transfer = is_last;
  const InnerApi& api = client_->inner();
  PJRTKIT_RETURN_IF_ERROR(
      PJRTKIT_INNER_CALL(api, PJRT_AsyncHostToDeviceTransferManager_TransferData, &args));
  return api.WrapEvent(args.done_with_h2d_transfer,
                       "PJRT_AsyncHostToDeviceTransferManager_TransferData");
}

StatusOr<std::unique_ptr<Buffer>> WrappedTransferManager::RetrieveBuffer(int index) {
  PJRTKIT_RETURN_IF_ERROR(CheckIndex(index));
  PJRTKIT_INNER_ARGS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer, args);
  args.transfer_manager = inner_;
  args.buffer_index = index;
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(
      client_->inner(), PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer, &args));
  PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<WrappedBuffer> buffer,
                           WrappedBuffer::Wrap(client_, args.buffer_out));
  return std::unique_ptr<Buffer>(std::move(buffer));
}

Status WrappedTransferManager::SetBufferError(int index, const Status& error) {
  PJRTKIT_RETURN_IF_ERROR(CheckIndex(index));
  if (error.ok()) return InvalidArgument("SetBufferError: the error is OK");
  PJRTKIT_INNER_ARGS(PJRT_AsyncHostToDeviceTransferManager_SetBufferError, args);
  args.transfer_manager = inner_;
  args.buffer_index = index;
  args.error_code = static_cast<PJRT_Error_Code>(error.code());
  args.error_message = error.message().data();
  args.error_message_size = error.message().size();
  return PJRTKIT_INNER_CALL(client_->inner(), PJRT_AsyncHostToDeviceTransferManager_SetBufferError,
                            &args);
}

Status WrappedTransferManager::AddMetadata(const AttributeMap& metadata) {
  std::vector<PJRT_NamedValue> values;
  for (const auto& entry : metadata) {
    PJRT_NamedValue value{};
    value.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    value.name = entry.first.data();
    value.name_size = entry.first.size();
    value.value_size = 1;
    const AttributeValue& v = entry.second;
    if (const auto* i = std::get_if<int64_t>(&v)) {
      value.type = PJRT_NamedValue_kInt64;
      value.int64_value = *i;
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      value.type = PJRT_NamedValue_kString;
      value.string_value = s->data();
      value.value_size = s->size();
    } else if (const auto* b = std::get_if<bool>(&v)) {
      value.type = PJRT_NamedValue_kBool;
      value.bool_value = *b;
    } else if (const auto* f = std::get_if<float>(&v)) {
      value.type = PJRT_NamedValue_kFloat;
      value.float_value = *f;
    } else {
      const auto& list = std::get<std::vector<int64_t>>(v);
      value.type = PJRT_NamedValue_kInt64List;
      value.int64_array_value = list.data();
      value.value_size = list.size();
    }
    values.push_back(value);
  }
  PJRTKIT_INNER_ARGS(PJRT_AsyncHostToDeviceTransferManager_AddMetadata, args);
  args.transfer_manager = inner_;
  args.transfer_metadata = values.data();
  args.num_metadata = values.size();
  return PJRTKIT_INNER_CALL(client_->inner(), PJRT_AsyncHostToDeviceTransferManager_AddMetadata,
                            &args);
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
