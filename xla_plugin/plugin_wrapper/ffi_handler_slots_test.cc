// Running out of FFI handler slots (FfiHandlerShims::kCapacity distinct handlers per process) fails
// the registration with RESOURCE_EXHAUSTED instead of registering the handler unshimmed (where
// XLA:CPU would drop a newer-minor handler without a word). Its own binary: the slots are
// process-wide and this test uses them all up.
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "xla/ffi/api/c_api.h"
#include "xla_plugin/client/client.h"
#include "xla_plugin/plugin_wrapper/ffi_handler_shims.h"
#include "xla_plugin/plugin_wrapper/testing/test_util.h"

namespace pjrtkit {
namespace xla_cpu {
namespace {

using ::pjrtkit::plugin_wrapper::FfiHandlerShims;
using ::pjrtkit::xla_cpu::testing::CreateTestClient;

constexpr size_t kHandlers = FfiHandlerShims::kCapacity + 1;

// Handler I: a distinct function per I that answers XLA's metadata query with XLA's own version
// (never executed).
template <size_t I>
XLA_FFI_Error* DistinctHandler(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr &&
      frame->extension_start->type == XLA_FFI_Extension_Metadata) {
    auto* ext = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
    ext->metadata->api_version = frame->api->api_version;
    ext->metadata->traits = 0;
  }
  return nullptr;
}

template <size_t... I>
constexpr std::array<XLA_FFI_Handler*, sizeof...(I)> MakeHandlers(std::index_sequence<I...>) {
  return {&DistinctHandler<I>...};
}
constexpr std::array<XLA_FFI_Handler*, kHandlers> kDistinctHandlers =
    MakeHandlers(std::make_index_sequence<kHandlers>());

TEST(FfiHandlerSlotsTest, RegistrationFailsWhenTheSlotsRunOut) {
  std::unique_ptr<Client> client = CreateTestClient(1);
  ASSERT_NE(client, nullptr);
  size_t accepted = 0;
  Status refused;
  for (size_t i = 0; i < kHandlers; ++i) {
    FfiHandlerRegistration registration;
    registration.target_name = "pjrtkit_test_slot_" + std::to_string(i);
    registration.platform_name = "pjrtkit";
    registration.handler = reinterpret_cast<void*>(kDistinctHandlers[i]);
    Status status = client->RegisterFfiHandler(registration);
    if (!status.ok()) {
      refused = status;
      break;
    }
    ++accepted;
  }
  // The reference device's built-in handler (builtin_ffi_handlers.h) holds one slot.
  EXPECT_EQ(accepted, FfiHandlerShims::kCapacity - 1);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.message(),
            "cannot register FFI handler 'pjrtkit_test_slot_255': all 256 FFI handler slots of "
            "this process are in use (one per distinct handler function)");
  // A handler that already has a slot can still be registered under another name.
  FfiHandlerRegistration again;
  again.target_name = "pjrtkit_test_slot_again";
  again.platform_name = "pjrtkit";
  again.handler = reinterpret_cast<void*>(kDistinctHandlers[0]);
  Status status = client->RegisterFfiHandler(again);
  EXPECT_TRUE(status.ok()) << status.ToString();
}

}  // namespace
}  // namespace xla_cpu
}  // namespace pjrtkit
