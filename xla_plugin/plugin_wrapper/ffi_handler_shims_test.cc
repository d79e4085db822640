// FfiHandlerShims with synthetic XLA FFI call frames (no XLA:CPU needed): one shim per handler,
// execution forwarded, metadata queries forwarded and same-major newer-minor versions downgraded.
#include "xla_plugin/plugin_wrapper/ffi_handler_shims.h"

#include "gtest/gtest.h"
#include "xla/ffi/api/c_api.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// Executions of VersionedHandler<kMinor>.
template <int kMinor>
int& Executions() {
  static int executions = 0;
  return executions;
}

// A handler that counts executions and answers metadata queries with XLA FFI API 0.kMinor
// (1.0 when kMinor < 0).
template <int kMinor>
XLA_FFI_Error* VersionedHandler(XLA_FFI_CallFrame* frame) {
  if (frame->extension_start != nullptr) {
    auto* ext = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
    ext->metadata->api_version.major_version = kMinor < 0 ? 1 : 0;
    ext->metadata->api_version.minor_version = kMinor < 0 ? 0 : kMinor;
    ext->metadata->traits = 0;
    return nullptr;
  }
  ++Executions<kMinor>();
  return nullptr;
}

// A call frame from a framework of XLA FFI API 0.`framework_minor`; a metadata query when
// `query`.
struct Frame {
  Frame(int framework_minor, bool query) {
    api.struct_size = sizeof(api);
    api.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
    api.api_version.major_version = 0;
    api.api_version.minor_version = framework_minor;
    metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
    extension.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
    extension.extension_base.type = XLA_FFI_Extension_Metadata;
    extension.metadata = &metadata;
    frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    frame.api = &api;
    frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
    frame.extension_start = query ? &extension.extension_base : nullptr;
  }
  XLA_FFI_Api api{};
  XLA_FFI_Metadata metadata{};
  XLA_FFI_Metadata_Extension extension{};
  XLA_FFI_CallFrame frame{};
};

XLA_FFI_Handler* AsHandler(void* shim) { return reinterpret_cast<XLA_FFI_Handler*>(shim); }

TEST(FfiHandlerShimsTest, OneShimPerHandler) {
  void* a = FfiHandlerShims::Wrap(reinterpret_cast<void*>(&VersionedHandler<2>));
  void* b = FfiHandlerShims::Wrap(reinterpret_cast<void*>(&VersionedHandler<5>));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_NE(a, reinterpret_cast<void*>(&VersionedHandler<2>));
  EXPECT_EQ(FfiHandlerShims::Wrap(reinterpret_cast<void*>(&VersionedHandler<2>)), a);
  EXPECT_EQ(FfiHandlerShims::Wrap(nullptr), nullptr);
  EXPECT_FALSE(FfiHandlerShims::LastQuery(nullptr).queried);
}

TEST(FfiHandlerShimsTest, ExecutionIsForwarded) {
  void* shim = FfiHandlerShims::Wrap(reinterpret_cast<void*>(&VersionedHandler<3>));
  Frame call(/*framework_minor=*/2, /*query=*/false);
  const int before = Executions<3>();
  EXPECT_EQ(AsHandler(shim)(&call.frame), nullptr);
  EXPECT_EQ(AsHandler(shim)(&call.frame), nullptr);
  EXPECT_EQ(Executions<3>(), before + 2);
}

TEST(FfiHandlerShimsTest, NewerMinorVersionsAreDeclaredAsTheFrameworks) {
  void* shim = FfiHandlerShims::Wrap(reinterpret_cast<void*>(&VersionedHandler<5>));
  FfiHandlerShims::ResetQuery(shim);
  Frame query(/*framework_minor=*/2, /*query=*/true);
  const int before = Executions<5>();
  EXPECT_EQ(AsHandler(shim)(&query.frame), nullptr);
  EXPECT_EQ(Executions<5>(), before);  // A query is not an execution.
  EXPECT_EQ(query.metadata.api_version.major_version, 0);
  EXPECT_EQ(query.metadata.api_version.minor_version, 2);
  FfiShimQuery seen = FfiHandlerShims::LastQuery(shim);
  EXPECT_TRUE(seen.queried);
  EXPECT_TRUE(seen.downgraded);
  EXPECT_EQ(seen.handler_major, 0);
  EXPECT_EQ(seen.handler_minor, 5);
  EXPECT_EQ(seen.framework_major, 0);
  EXPECT_EQ(seen.framework_minor, 2);
  FfiHandlerShims::ResetQuery(shim);
  EXPECT_FALSE(FfiHandlerShims::LastQuery(shim).queried);
}

TEST(FfiHandlerShimsTest, OlderAndOtherMajorVersionsPassThrough) {
  void* older = FfiHandlerShims::Wrap(reinterpret_cast<void*>(&VersionedHandler<1>));
  Frame query(/*framework_minor=*/2, /*query=*/true);
  EXPECT_EQ(AsHandler(older)(&query.frame), nullptr);
  EXPECT_EQ(query.metadata.api_version.minor_version, 1);
  EXPECT_FALSE(FfiHandlerShims::LastQuery(older).downgraded);

  void* other_major = FfiHandlerShims::Wrap(reinterpret_cast<void*>(&VersionedHandler<-1>));
  Frame query2(/*framework_minor=*/2, /*query=*/true);
  EXPECT_EQ(AsHandler(other_major)(&query2.frame), nullptr);
  EXPECT_EQ(query2.metadata.api_version.major_version, 1);
  EXPECT_EQ(query2.metadata.api_version.minor_version, 0);
  FfiShimQuery seen = FfiHandlerShims::LastQuery(other_major);
  EXPECT_FALSE(seen.downgraded);
  EXPECT_EQ(seen.handler_major, 1);
}

}  // namespace
}  // namespace plugin_wrapper
}  // namespace pjrtkit
