#include "tests/conformance/test_base.h"

#include <iostream>
#include <set>
#include <utility>

namespace pjrt_conformance {

size_t ElementSize(PJRT_Buffer_Type type) {
  switch (type) {
    case PJRT_Buffer_Type_PRED:
    case PJRT_Buffer_Type_S8:
    case PJRT_Buffer_Type_U8:
      return 1;
    case PJRT_Buffer_Type_S16:
    case PJRT_Buffer_Type_U16:
    case PJRT_Buffer_Type_F16:
    case PJRT_Buffer_Type_BF16:
      return 2;
    case PJRT_Buffer_Type_S32:
    case PJRT_Buffer_Type_U32:
    case PJRT_Buffer_Type_F32:
      return 4;
    case PJRT_Buffer_Type_S64:
    case PJRT_Buffer_Type_U64:
    case PJRT_Buffer_Type_F64:
    case PJRT_Buffer_Type_C64:
      return 8;
    case PJRT_Buffer_Type_C128:
      return 16;
    default:
      return 0;
  }
}

int64_t ElementCount(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t dim : dims) count *= dim;
  return count;
}

std::string Str(const char* data, size_t size) {
  return data == nullptr ? std::string() : std::string(data, size);
}

void ExpectWellFormedNamedValues(const PJRT_NamedValue* values, size_t count,
                                 const std::string& what) {
  if (count > 0) {
    ASSERT_NE(values, nullptr) << what << ": " << count << " entries, NULL array";
  }
  std::set<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& value = values[i];
    const std::string name = Str(value.name, value.name_size);
    EXPECT_GE(value.struct_size, PJRT_NamedValue_STRUCT_SIZE) << what << "[" << i << "]";
    EXPECT_FALSE(name.empty()) << what << "[" << i << "] has no name";
    EXPECT_TRUE(names.insert(name).second) << what << ": duplicate name '" << name << "'";
    switch (value.type) {
      case PJRT_NamedValue_kString:
        if (value.value_size > 0) {
          EXPECT_NE(value.string_value, nullptr) << what << ": " << name;
        }
        break;
      case PJRT_NamedValue_kInt64List:
        if (value.value_size > 0) {
          EXPECT_NE(value.int64_array_value, nullptr) << what << ": " << name;
        }
        break;
      case PJRT_NamedValue_kInt64:
      case PJRT_NamedValue_kFloat:
      case PJRT_NamedValue_kBool:
        EXPECT_EQ(value.value_size, 1u) << what << ": scalar '" << name << "' value_size";
        break;
      default:
        ADD_FAILURE() << what << ": '" << name << "' has unknown type " << value.type;
    }
  }
}

const PJRT_NamedValue* FindNamedValue(const PJRT_NamedValue* values, size_t count,
                                      const std::string& name) {
  for (size_t i = 0; values != nullptr && i < count; ++i) {
    if (Str(values[i].name, values[i].name_size) == name) return &values[i];
  }
  return nullptr;
}

void Report(const std::string& key, const std::string& value) {
  ::testing::Test::RecordProperty(key, value);
  std::cout << "[ REPORT   ] " << key << ": " << value << std::endl;
}

void ApiTestBase::SetUp() {
  plugin_ = RegisteredPlugin();
  ASSERT_NE(plugin_, nullptr) << "no plugin registered: call pjrt_conformance::RegisterPlugin "
                                 "before RUN_ALL_TESTS, or use //tests/conformance:runner";
  const Status status = EnsureInitialized();
  ASSERT_TRUE(status.ok()) << "PJRT_Plugin_Initialize failed: " << status;
}

void ClientTestBase::SetUp() {
  ApiTestBase::SetUp();
  if (HasFatalFailure()) return;
  const Status status = SharedClient(&client_);
  ASSERT_TRUE(status.ok()) << "PJRT_Client_Create failed: " << status;
}

void ClientTestBase::UseClient(PJRT_Client* client) {
  if (client != nullptr) {
    client_ = client;
    return;
  }
  const Status status = SharedClient(&client_);
  EXPECT_TRUE(status.ok()) << "PJRT_Client_Create failed: " << status;
}

std::vector<PJRT_Device*> ClientTestBase::Devices() {
  PJRT_ARGS(PJRT_Client_Devices_Args, args);
  args.client = client_;
  const Status status = PJRT_CALL(api()->PJRT_Client_Devices(&args));
  EXPECT_TRUE(status.ok()) << "PJRT_Client_Devices: " << status;
  if (!status.ok() || args.devices == nullptr) return {};
  return {args.devices, args.devices + args.num_devices};
}

std::vector<PJRT_Device*> ClientTestBase::AddressableDevices() {
  PJRT_ARGS(PJRT_Client_AddressableDevices_Args, args);
  args.client = client_;
  const Status status = PJRT_CALL(api()->PJRT_Client_AddressableDevices(&args));
  EXPECT_TRUE(status.ok()) << "PJRT_Client_AddressableDevices: " << status;
  if (!status.ok() || args.addressable_devices == nullptr) return {};
  return {args.addressable_devices, args.addressable_devices + args.num_addressable_devices};
}

PJRT_Device* ClientTestBase::FirstDevice() {
  const std::vector<PJRT_Device*> devices = AddressableDevices();
  EXPECT_FALSE(devices.empty()) << "the client has no addressable device";
  return devices.empty() ? nullptr : devices.front();
}

PJRT_DeviceDescription* ClientTestBase::Description(PJRT_Device* device) {
  PJRT_ARGS(PJRT_Device_GetDescription_Args, args);
  args.device = device;
  const Status status = PJRT_CALL(api()->PJRT_Device_GetDescription(&args));
  EXPECT_TRUE(status.ok()) << "PJRT_Device_GetDescription: " << status;
  return status.ok() ? args.device_description : nullptr;
}

int ClientTestBase::DeviceId(PJRT_Device* device) {
  PJRT_ARGS(PJRT_DeviceDescription_Id_Args, args);
  args.device_description = Description(device);
  if (args.device_description == nullptr) return -1;
  const Status status = PJRT_CALL(api()->PJRT_DeviceDescription_Id(&args));
  EXPECT_TRUE(status.ok()) << "PJRT_DeviceDescription_Id: " << status;
  return status.ok() ? args.id : -1;
}

PJRT_Memory* ClientTestBase::DefaultMemory(PJRT_Device* device) {
  PJRT_ARGS(PJRT_Device_DefaultMemory_Args, args);
  args.device = device;
  const Status status = PJRT_CALL(api()->PJRT_Device_DefaultMemory(&args));
  EXPECT_TRUE(status.ok()) << "PJRT_Device_DefaultMemory: " << status;
  return status.ok() ? args.memory : nullptr;
}

std::vector<PJRT_Memory*> ClientTestBase::DeviceMemories(PJRT_Device* device) {
  PJRT_ARGS(PJRT_Device_AddressableMemories_Args, args);
  args.device = device;
  const Status status = PJRT_CALL(api()->PJRT_Device_AddressableMemories(&args));
  EXPECT_TRUE(status.ok()) << "PJRT_Device_AddressableMemories: " << status;
  if (!status.ok() || args.memories == nullptr) return {};
  return {args.memories, args.memories + args.num_memories};
}

Status ClientTestBase::Await(PJRT_Event* event) {
  PJRT_ARGS(PJRT_Event_Await_Args, args);
  args.event = event;
  return PJRT_CALL(api()->PJRT_Event_Await(&args));
}

bool ClientTestBase::IsReady(PJRT_Event* event) {
  PJRT_ARGS(PJRT_Event_IsReady_Args, args);
  args.event = event;
  const Status status = PJRT_CALL(api()->PJRT_Event_IsReady(&args));
  EXPECT_TRUE(status.ok()) << "PJRT_Event_IsReady: " << status;
  return status.ok() && args.is_ready;
}

Status ClientTestBase::FromHost(const void* data, PJRT_Buffer_Type type,
                                const std::vector<int64_t>& dims, PJRT_Device* device,
                                BufferPtr* out, PJRT_HostBufferSemantics semantics,
                                EventPtr* done, PJRT_Memory* memory) {
  PJRT_ARGS(PJRT_Client_BufferFromHostBuffer_Args, args);
  args.client = client_;
  args.data = data;
  args.type = type;
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.host_buffer_semantics = semantics;
  args.device = device;
  args.memory = memory;
  Status status = PJRT_CALL(api()->PJRT_Client_BufferFromHostBuffer(&args));
  if (!status.ok()) return status;
  *out = BufferPtr(api(), args.buffer);
  EventPtr done_event(api(), args.done_with_host_buffer);
  if (done != nullptr) {
    *done = std::move(done_event);
  } else if (done_event) {
    status = Await(done_event.get());
  }
  if (status.ok() && args.buffer == nullptr) {
    status.code = PJRT_Error_Code_INTERNAL;
    status.message = "PJRT_Client_BufferFromHostBuffer returned OK and a NULL buffer";
  }
  return status;
}

Status ClientTestBase::ToHost(PJRT_Buffer* buffer, std::vector<char>* bytes) {
  PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args, query);
  query.src = buffer;
  Status status = PJRT_CALL(api()->PJRT_Buffer_ToHostBuffer(&query));
  EventPtr query_event(api(), query.event);  // A size query should not make one; own it anyway.
  if (!status.ok()) return status;
  bytes->assign(query.dst_size, 0);
  PJRT_ARGS(PJRT_Buffer_ToHostBuffer_Args, args);
  args.src = buffer;
  args.dst = bytes->empty() ? static_cast<void*>(&args) : bytes->data();
  args.dst_size = bytes->size();
  status = PJRT_CALL(api()->PJRT_Buffer_ToHostBuffer(&args));
  if (!status.ok()) return status;
  EventPtr event(api(), args.event);
  return event ? Await(event.get()) : status;
}

Status ClientTestBase::AwaitReady(PJRT_Buffer* buffer) {
  PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args, args);
  args.buffer = buffer;
  const Status status = PJRT_CALL(api()->PJRT_Buffer_ReadyEvent(&args));
  if (!status.ok()) return status;
  EventPtr event(api(), args.event);
  return Await(event.get());
}

Status ClientTestBase::BufferDevice(PJRT_Buffer* buffer, PJRT_Device** device) {
  PJRT_ARGS(PJRT_Buffer_Device_Args, args);
  args.buffer = buffer;
  const Status status = PJRT_CALL(api()->PJRT_Buffer_Device(&args));
  *device = args.device;
  return status;
}

Status ClientTestBase::BufferMemory(PJRT_Buffer* buffer, PJRT_Memory** memory) {
  PJRT_ARGS(PJRT_Buffer_Memory_Args, args);
  args.buffer = buffer;
  const Status status = PJRT_CALL(api()->PJRT_Buffer_Memory(&args));
  *memory = args.memory;
  return status;
}

Status ClientTestBase::IsDeleted(PJRT_Buffer* buffer, bool* deleted) {
  PJRT_ARGS(PJRT_Buffer_IsDeleted_Args, args);
  args.buffer = buffer;
  const Status status = PJRT_CALL(api()->PJRT_Buffer_IsDeleted(&args));
  *deleted = args.is_deleted;
  return status;
}

Status ClientTestBase::Compile(const std::string& code, const std::string& format,
                               const std::string& compile_options, LoadedExecutablePtr* out) {
  std::string code_copy = code;  // PJRT_Program.code is a non-const char*.
  PJRT_ARGS(PJRT_Program, program);
  program.code = code_copy.data();  // Non-NULL even when empty.
  program.code_size = code_copy.size();
  program.format = format.data();
  program.format_size = format.size();
  PJRT_ARGS(PJRT_Client_Compile_Args, args);
  args.client = client_;
  args.program = &program;
  args.compile_options = compile_options.data();
  args.compile_options_size = compile_options.size();
  Status status = PJRT_CALL(api()->PJRT_Client_Compile(&args));
  if (status.ok()) *out = LoadedExecutablePtr(api(), args.executable);
  if (status.ok() && args.executable == nullptr) {
    status.code = PJRT_Error_Code_INTERNAL;
    status.message = "PJRT_Client_Compile returned OK and a NULL executable";
  }
  return status;
}

void ClientTestBase::ExpectCompileUnimplemented() {
  LoadedExecutablePtr loaded;
  const Status status = CompileMlir(kAddOneF32, &loaded);
  EXPECT_TRUE(status.unimplemented())
      << "the device declares no compiler (PluginTraits::compiler = false, --no_compiler), so "
         "PJRT_Client_Compile must answer UNIMPLEMENTED; it answered " << status;
}

Status ClientTestBase::CompileMlir(const std::string& text, LoadedExecutablePtr* out,
                                   const std::string& compile_options) {
  return Compile(text, "mlir", compile_options, out);
}

Status ClientTestBase::GetExecutable(PJRT_LoadedExecutable* loaded, ExecutablePtr* out) {
  PJRT_ARGS(PJRT_LoadedExecutable_GetExecutable_Args, args);
  args.loaded_executable = loaded;
  const Status status = PJRT_CALL(api()->PJRT_LoadedExecutable_GetExecutable(&args));
  if (status.ok()) *out = ExecutablePtr(api(), args.executable);
  return status;
}

Status ClientTestBase::NumOutputs(PJRT_LoadedExecutable* loaded, size_t* num_outputs) {
  ExecutablePtr executable;
  Status status = GetExecutable(loaded, &executable);
  if (!status.ok()) return status;
  PJRT_ARGS(PJRT_Executable_NumOutputs_Args, args);
  args.executable = executable.get();
  status = PJRT_CALL(api()->PJRT_Executable_NumOutputs(&args));
  *num_outputs = args.num_outputs;
  return status;
}

Status ClientTestBase::Execute(PJRT_LoadedExecutable* loaded,
                               const std::vector<std::vector<PJRT_Buffer*>>& args,
                               std::vector<std::vector<BufferPtr>>* outputs,
                               std::vector<EventPtr>* events, PJRT_Device* execute_device) {
  size_t num_outputs = 0;
  Status status = NumOutputs(loaded, &num_outputs);
  if (!status.ok()) return status;
  const size_t num_devices = args.size();
  std::vector<PJRT_Buffer* const*> argument_lists;
  for (const auto& list : args) argument_lists.push_back(list.data());
  std::vector<std::vector<PJRT_Buffer*>> raw_outputs(num_devices,
                                                     std::vector<PJRT_Buffer*>(num_outputs));
  std::vector<PJRT_Buffer**> output_lists;
  for (auto& list : raw_outputs) output_lists.push_back(list.data());
  std::vector<PJRT_Event*> raw_events(num_devices, nullptr);

  PJRT_ARGS(PJRT_ExecuteOptions, options);
  PJRT_ARGS(PJRT_LoadedExecutable_Execute_Args, exec);
  exec.executable = loaded;
  exec.options = &options;
  exec.argument_lists = argument_lists.data();
  exec.num_devices = num_devices;
  exec.num_args = args.empty() ? 0 : args.front().size();
  exec.output_lists = output_lists.data();
  exec.device_complete_events = events != nullptr ? raw_events.data() : nullptr;
  exec.execute_device = execute_device;
  status = PJRT_CALL(api()->PJRT_LoadedExecutable_Execute(&exec));
  if (!status.ok()) return status;

  outputs->clear();
  for (auto& list : raw_outputs) {
    outputs->emplace_back();
    for (PJRT_Buffer* buffer : list) outputs->back().emplace_back(api(), buffer);
  }
  if (events != nullptr) {
    events->clear();
    for (PJRT_Event* event : raw_events) events->emplace_back(api(), event);
  }
  return status;
}

}  // namespace pjrt_conformance
