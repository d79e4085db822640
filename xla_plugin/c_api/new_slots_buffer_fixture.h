// The fixture of the PJRT C API 0.82-0.117 buffer-slot tests (new_slots_error_buffer_test,
// new_slots_transfer_test, new_slots_buffer_test): a fake client with its three memories and the
// Layouts extension, and helpers for error buffers, their payloads, events and executions.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_NEW_SLOTS_BUFFER_FIXTURE_H_
#define PJRTKIT_XLA_PLUGIN_C_API_NEW_SLOTS_BUFFER_FIXTURE_H_

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/abi/layouts_extension.h"
#include "xla_plugin/c_api/convert.h"
#include "xla_plugin/c_api/test_util.h"

namespace pjrtkit {
namespace capi {
namespace test {

// A pointer that must never be read: the tests put it in fields an older caller does not have.
template <typename T>
inline T* Poison() {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(0x10));
}

// A string-valued PJRT_NamedValue pointing at `name` and `value` (which must outlive it).
inline PJRT_NamedValue StringValue(const char* name, const char* value) {
  auto v = MakeArgs<PJRT_NamedValue>(PJRT_NamedValue_STRUCT_SIZE);
  v.name = name;
  v.name_size = std::strlen(name);
  v.type = PJRT_NamedValue_kString;
  v.string_value = value;
  v.value_size = std::strlen(value);
  return v;
}

// A fake client (2 devices; memories FAKE_0:device, FAKE_1:device, FAKE:pinned_host) with the
// Layouts extension at hand.
class NewBufferSlotsTest : public ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    memories_ = AddressableMemories(client_);
    ASSERT_EQ(memories_.size(), 3u);  // FAKE_0:device, FAKE_1:device, FAKE:pinned_host.
    // Read as an int: pjrtkit's own extension type is outside the enum (UBSan).
    for (const PJRT_Extension_Base* e = api_->extension_start; e != nullptr; e = e->next) {
      if (RawEnumValue(e->type) == PJRT_Extension_Type_Layouts) {
        layouts_ = reinterpret_cast<const abi::LayoutsExtension*>(e);
      }
    }
    ASSERT_NE(layouts_, nullptr);
  }

  // CreateErrorBuffer args: f32[2] in device 0's memory, UNAVAILABLE "link down".
  PJRT_Client_CreateErrorBuffer_Args ErrorBufferArgs() {
    auto args = MakeArgs<PJRT_Client_CreateErrorBuffer_Args>();
    args.client = client_;
    args.error_code = PJRT_Error_Code_UNAVAILABLE;
    args.error_message = message_.data();
    args.error_message_size = message_.size();
    args.shape_dims = dims2_.data();
    args.shape_num_dims = dims2_.size();
    args.shape_element_type = PJRT_Buffer_Type_F32;
    args.memory = memories_[0];
    return args;
  }

  // Creates an error buffer from `args`; fails the test on error.
  PJRT_Buffer* CreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args* args) {
    ErrorInfo info = Consume(api_->PJRT_Client_CreateErrorBuffer(args));
    EXPECT_TRUE(info.ok) << info.message;
    EXPECT_NE(args->buffer, nullptr);
    return info.ok ? args->buffer : nullptr;
  }

  // The layout of `buffer` as xla::Layout text, through the Layouts extension.
  std::string LayoutText(PJRT_Buffer* buffer) {
    abi::LayoutsBufferMemoryLayoutArgs get{};
    get.struct_size = abi::kLayoutsBufferMemoryLayoutArgsSize;
    get.buffer = buffer;
    ErrorInfo info = Consume(layouts_->buffer_memory_layout(&get));
    if (!info.ok) return "error: " + info.message;
    abi::LayoutsMemoryLayoutSerializeArgs serialize{};
    serialize.struct_size = abi::kLayoutsMemoryLayoutSerializeArgsSize;
    serialize.layout = get.layout;
    EXPECT_PJRT_OK(layouts_->memory_layout_serialize(&serialize));
    std::string text(serialize.serialized_bytes, serialize.serialized_bytes_size);
    serialize.serialized_layout_deleter(serialize.serialized_layout);
    abi::LayoutsMemoryLayoutDestroyArgs destroy{};
    destroy.struct_size = abi::kLayoutsMemoryLayoutDestroyArgsSize;
    destroy.layout = get.layout;
    EXPECT_PJRT_OK(layouts_->memory_layout_destroy(&destroy));
    return text;
  }

  // The payloads of the error `event` fails with, as "key=value;...", and that error.
  std::string EventPayloads(PJRT_Event* event, ErrorInfo* info) {
    auto await = MakeArgs<PJRT_Event_Await_Args>();
    await.event = event;
    PJRT_Error* error = api_->PJRT_Event_Await(&await);
    std::string payloads;
    if (error != nullptr) error->vtable->for_each_payload(error, &AppendPayload, &payloads);
    *info = Consume(error);
    auto destroy = MakeArgs<PJRT_Event_Destroy_Args>();
    destroy.event = event;
    EXPECT_PJRT_OK(api_->PJRT_Event_Destroy(&destroy));
    return payloads;
  }

  // The ready event of `buffer`.
  PJRT_Event* ReadyEvent(PJRT_Buffer* buffer) {
    auto args = MakeArgs<PJRT_Buffer_ReadyEvent_Args>();
    args.buffer = buffer;
    EXPECT_PJRT_OK(api_->PJRT_Buffer_ReadyEvent(&args));
    return args.event;
  }

  bool IsReady(PJRT_Event* event) {
    auto args = MakeArgs<PJRT_Event_IsReady_Args>();
    args.event = event;
    EXPECT_PJRT_OK(api_->PJRT_Event_IsReady(&args));
    return args.is_ready;
  }

  // Runs `loaded` on device 0 with `arguments`; the outputs are destroyed. Returns the error
  // and, through `payloads`, its payloads.
  ErrorInfo Execute(PJRT_LoadedExecutable* loaded, std::vector<PJRT_Buffer*> arguments,
                    std::string* payloads) {
    PJRT_Buffer* const* lists[] = {arguments.data()};
    std::vector<PJRT_Buffer*> out(arguments.size(), nullptr);
    PJRT_Buffer** outputs[] = {out.data()};
    auto options = MakeArgs<PJRT_ExecuteOptions>();
    auto args = MakeArgs<PJRT_LoadedExecutable_Execute_Args>();
    args.executable = loaded;
    args.options = &options;
    args.argument_lists = lists;
    args.num_devices = 1;
    args.num_args = arguments.size();
    args.output_lists = outputs;
    PJRT_Error* error = api_->PJRT_LoadedExecutable_Execute(&args);
    if (error != nullptr) error->vtable->for_each_payload(error, &AppendPayload, payloads);
    ErrorInfo info = Consume(error);
    for (PJRT_Buffer* buffer : out) {
      if (info.ok) {
        EXPECT_NE(buffer, nullptr);
      } else {
        EXPECT_EQ(buffer, nullptr);  // A failed execution hands out nothing.
      }
      if (buffer != nullptr) DestroyBuffer(buffer);
    }
    return info;
  }

  std::string message_ = "link down";            // The error buffers' message.
  std::vector<int64_t> dims2_ = {2};              // f32[2].
  std::vector<PJRT_Memory*> memories_;            // The client's memories.
  const abi::LayoutsExtension* layouts_ = nullptr;  // For LayoutText.
};

}  // namespace test
}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_NEW_SLOTS_BUFFER_FIXTURE_H_
