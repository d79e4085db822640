// PJRT C API 0.82-0.117 slots of executables against the fake device: compiled memory
// statistics, compile options, parameter memory kinds, logical device ids, and parameter layouts
// (the Layouts extension at version 4). Older callers' shorter structs are accepted and nothing
// past their end is read or written.

// C++ standard library.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// gtest.
#include "gtest/gtest.h"

// pjrtkit.
#include "xla_plugin/c_api/new_slots_client_fixture.h"

namespace pjrtkit {
namespace capi {
namespace test {
namespace {

// ---- Executables: compiled memory statistics, compile options, parameters, logical ids ---------

TEST_F(NewClientSlotsTest, CompiledMemoryStatsOfANewAndOfAnOlderCaller) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2] s8[3]");  // 11 bytes of arguments.
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  EXPECT_EQ(sizeof(PJRT_Executable_GetCompiledMemoryStats_Args), 144u);
  auto args = Sentinel<PJRT_Executable_GetCompiledMemoryStats_Args>(
      sizeof(PJRT_Executable_GetCompiledMemoryStats_Args));
  args.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompiledMemoryStats(&args));
  EXPECT_EQ(args.generated_code_size_in_bytes, 12);  // The program text "f32[2] s8[3]".
  EXPECT_EQ(args.argument_size_in_bytes, 11);
  EXPECT_EQ(args.output_size_in_bytes, 11);
  EXPECT_EQ(args.alias_size_in_bytes, 0);
  EXPECT_EQ(args.temp_size_in_bytes, 7);
  EXPECT_EQ(args.host_temp_size_in_bytes, 11);
  EXPECT_EQ(args.peak_memory_in_bytes, 29);
  EXPECT_EQ(args.total_size_in_bytes, 12 + 22 + 7);
  EXPECT_EQ(args.total_allocation_bytes, 22);
  EXPECT_EQ(args.indefinite_allocations, 3);
  EXPECT_EQ(args.peak_unpadded_heap_bytes, 5);
  // PJRT C API 0.81's struct ends at peak_memory_in_bytes.
  const size_t v081 = offsetof(PJRT_Executable_GetCompiledMemoryStats_Args, total_size_in_bytes);
  EXPECT_EQ(v081, 112u);
  args = Sentinel<PJRT_Executable_GetCompiledMemoryStats_Args>(v081);
  args.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompiledMemoryStats(&args));
  EXPECT_EQ(args.peak_memory_in_bytes, 29);
  EXPECT_TRUE(UntouchedFrom(args, v081));
  // A struct that ends in the middle of the new fields gets nothing past its end.
  const size_t middle =
      offsetof(PJRT_Executable_GetCompiledMemoryStats_Args, indefinite_allocations);
  args = Sentinel<PJRT_Executable_GetCompiledMemoryStats_Args>(middle);
  args.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompiledMemoryStats(&args));
  EXPECT_TRUE(UntouchedFrom(args, middle));
  args = Sentinel<PJRT_Executable_GetCompiledMemoryStats_Args>(v081 - 8);
  args.executable = executable;
  EXPECT_EQ(Consume(api_->PJRT_Executable_GetCompiledMemoryStats(&args)).message,
            ShortStruct("PJRT_Executable_GetCompiledMemoryStats", 104, 112));
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, CompileOptionsAreThoseCompiledWith) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2]", "name=opts;replicas=2");
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  EXPECT_EQ(CompileOptions(executable), "name=opts;replicas=2");
  // Each call hands out its own copy.
  auto first = MakeArgs<PJRT_Executable_GetCompileOptions_Args>();
  first.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompileOptions(&first));
  auto second = first;
  ASSERT_PJRT_OK(api_->PJRT_Executable_GetCompileOptions(&second));
  EXPECT_NE(first.serialized_compile_options, second.serialized_compile_options);
  first.serialized_compile_options_deleter(first.serialized_compile_options);
  EXPECT_EQ(Str(second.serialized_bytes, second.serialized_bytes_size), "name=opts;replicas=2");
  second.serialized_compile_options_deleter(second.serialized_compile_options);
  // Empty options are empty bytes, not an error.
  PJRT_LoadedExecutable* plain = Compile(client_, "f32[2]");
  PJRT_Executable* plain_executable = GetExecutable(plain);
  EXPECT_EQ(CompileOptions(plain_executable), "");
  // The checks.
  const std::string fn = "PJRT_Executable_GetCompileOptions";
  EXPECT_EQ(Consume(api_->PJRT_Executable_GetCompileOptions(nullptr)).message,
            fn + ": args is null");
  auto args = MakeArgs<PJRT_Executable_GetCompileOptions_Args>();
  EXPECT_EQ(sizeof(args), 56u);
  args.struct_size = 48;
  args.executable = executable;
  EXPECT_EQ(Consume(api_->PJRT_Executable_GetCompileOptions(&args)).message,
            ShortStruct(fn, 48, 56));
  args.struct_size = sizeof(args);
  args.executable = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Executable_GetCompileOptions(&args)).message,
            fn + ": args->executable is null");
  DestroyExecutable(plain_executable);
  DestroyLoaded(plain);
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, ParameterMemoryKindsHaveOneEntryPerParameter) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2] s32[] pred[3]");
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  auto args = MakeArgs<PJRT_Executable_ParameterMemoryKinds_Args>();
  args.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_ParameterMemoryKinds(&args));
  ASSERT_EQ(args.num_parameters, 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(Str(args.memory_kinds[i], args.memory_kind_sizes[i]), "device");
  }
  // The arrays live with the executable: a second call returns the same ones.
  auto again = MakeArgs<PJRT_Executable_ParameterMemoryKinds_Args>();
  again.executable = executable;
  ASSERT_PJRT_OK(api_->PJRT_Executable_ParameterMemoryKinds(&again));
  EXPECT_EQ(again.memory_kinds, args.memory_kinds);
  EXPECT_EQ(again.memory_kind_sizes, args.memory_kind_sizes);
  const std::string fn = "PJRT_Executable_ParameterMemoryKinds";
  EXPECT_EQ(sizeof(args), 48u);
  args.struct_size = 40;
  EXPECT_EQ(Consume(api_->PJRT_Executable_ParameterMemoryKinds(&args)).message,
            ShortStruct(fn, 40, 48));
  args.struct_size = sizeof(args);
  args.executable = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_Executable_ParameterMemoryKinds(&args)).message,
            fn + ": args->executable is null");
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, LogicalIdsNameEachAddressableDevicesReplica) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2]", "replicas=2");
  ASSERT_NE(loaded, nullptr);
  auto args = MakeArgs<PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args>();
  args.executable = loaded;
  ASSERT_PJRT_OK(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&args));
  ASSERT_EQ(args.num_addressable_device_logical_ids, 2u);
  EXPECT_EQ(args.addressable_device_logical_ids[0].replica, 0);
  EXPECT_EQ(args.addressable_device_logical_ids[0].partition, 0);
  EXPECT_EQ(args.addressable_device_logical_ids[1].replica, 1);
  EXPECT_EQ(args.addressable_device_logical_ids[1].partition, 0);
  auto again = MakeArgs<PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args>();
  again.executable = loaded;
  ASSERT_PJRT_OK(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&again));
  EXPECT_EQ(again.addressable_device_logical_ids, args.addressable_device_logical_ids);
  const std::string fn = "PJRT_LoadedExecutable_AddressableDeviceLogicalIds";
  EXPECT_EQ(sizeof(args), 40u);
  args.struct_size = 32;
  EXPECT_EQ(Consume(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&args)).message,
            ShortStruct(fn, 32, 40));
  args.struct_size = sizeof(args);
  args.executable = nullptr;
  EXPECT_EQ(Consume(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&args)).message,
            fn + ": args->executable is null");
  DestroyLoaded(loaded);
}

TEST_F(NewClientSlotsTest, LogicalIdsThatDoNotMatchTheDevicesAreAnInternalError) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2]", "replicas=2;logical_ids=short");
  ASSERT_NE(loaded, nullptr);
  auto args = MakeArgs<PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args>();
  args.executable = loaded;
  ErrorInfo info = Consume(api_->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&args));
  EXPECT_EQ(info.code, PJRT_Error_Code_INTERNAL);
  EXPECT_EQ(info.message,
            "PJRT_LoadedExecutable_AddressableDeviceLogicalIds: the device gave 1 logical ids for "
            "2 addressable devices");
  EXPECT_EQ(args.addressable_device_logical_ids, nullptr);
  DestroyLoaded(loaded);
}

// ---- The Layouts extension at version 4: parameter layouts ------------------------------------

class ParameterLayoutsTest : public NewClientSlotsTest {
 protected:
  void SetUp() override {
    NewClientSlotsTest::SetUp();
    // Read as an int: pjrtkit's own extension type is outside the enum (UBSan).
    for (const PJRT_Extension_Base* e = api_->extension_start; e != nullptr; e = e->next) {
      if (RawEnumValue(e->type) == PJRT_Extension_Type_Layouts) {
        ext_ = reinterpret_cast<const abi::LayoutsExtension*>(e);
      }
    }
    ASSERT_NE(ext_, nullptr);
  }
  // The serialized text of `layout` (which stays the executable's).
  std::string Text(PJRT_Layouts_MemoryLayout* layout) {
    abi::LayoutsMemoryLayoutSerializeArgs args{};
    args.struct_size = abi::kLayoutsMemoryLayoutSerializeArgsSize;
    args.layout = layout;
    EXPECT_PJRT_OK(ext_->memory_layout_serialize(&args));
    std::string text = Str(args.serialized_bytes, args.serialized_bytes_size);
    args.serialized_layout_deleter(args.serialized_layout);
    return text;
  }
  // The parameter layouts of the executable compiled from `code` with `options`, as text (or
  // "error: <message>").
  std::vector<std::string> ParameterLayouts(const std::string& code, const std::string& options) {
    PJRT_LoadedExecutable* loaded = Compile(client_, code, options);
    if (loaded == nullptr) return {"<no executable>"};
    PJRT_Executable* executable = GetExecutable(loaded);
    abi::LayoutsExecutableGetParameterLayoutsArgs args{};
    args.struct_size = abi::kLayoutsExecutableGetParameterLayoutsArgsSize;
    args.executable = executable;
    ErrorInfo info = Consume(ext_->executable_get_parameter_layouts(&args));
    std::vector<std::string> out;
    if (!info.ok) {
      out.push_back("error: " + info.message);
    } else {
      for (size_t i = 0; i < args.num_parameters; ++i) out.push_back(Text(args.layouts[i]));
    }
    DestroyExecutable(executable);
    DestroyLoaded(loaded);
    return out;
  }

  const abi::LayoutsExtension* ext_ = nullptr;  // Under test.
};

TEST_F(ParameterLayoutsTest, TheExtensionIsVersion4) {
  EXPECT_EQ(ext_->base.struct_size, 80u);
  EXPECT_EQ(abi::kLayoutsExtensionSize, 80u);
  EXPECT_NE(ext_->executable_get_parameter_layouts, nullptr);
  EXPECT_EQ(abi::kLayoutsExecutableGetParameterLayoutsArgsSize, 40u);
}

TEST_F(ParameterLayoutsTest, ParameterLayoutsAreTheDevicesAsText) {
  EXPECT_EQ(ParameterLayouts("f32[2,3] s32[4] f32[]", ""),
            (std::vector<std::string>{"{1,0}", "{0}", "{}"}));
  EXPECT_EQ(ParameterLayouts("f32[2,3] s32[4]", "output_layout=column"),
            (std::vector<std::string>{"{0,1}", "{0}"}));
}

TEST_F(ParameterLayoutsTest, AnInvalidDeviceLayoutIsAnInternalError) {
  EXPECT_EQ(ParameterLayouts("f32[2,3]", "output_layout=invalid"),
            std::vector<std::string>{
                "error: PJRT_Layouts_PJRT_Executable_GetParameterLayouts: the device returned an "
                "invalid layout for parameter 0: layout minor_to_major {0,0,0} is not a "
                "permutation of 3 dimensions"});
}

TEST_F(ParameterLayoutsTest, TheLayoutsAreTheExecutablesAndCheckedForArguments) {
  PJRT_LoadedExecutable* loaded = Compile(client_, "f32[2,3]");
  ASSERT_NE(loaded, nullptr);
  PJRT_Executable* executable = GetExecutable(loaded);
  abi::LayoutsExecutableGetParameterLayoutsArgs args{};
  args.struct_size = abi::kLayoutsExecutableGetParameterLayoutsArgsSize;
  args.executable = executable;
  ASSERT_PJRT_OK(ext_->executable_get_parameter_layouts(&args));
  ASSERT_EQ(args.num_parameters, 1u);
  PJRT_Layouts_MemoryLayout* layout = args.layouts[0];
  ASSERT_PJRT_OK(ext_->executable_get_parameter_layouts(&args));
  EXPECT_EQ(args.layouts[0], layout);  // Cached with the executable.
  abi::LayoutsMemoryLayoutDestroyArgs destroy{};
  destroy.struct_size = abi::kLayoutsMemoryLayoutDestroyArgsSize;
  destroy.layout = layout;
  ErrorInfo info = Consume(ext_->memory_layout_destroy(&destroy));
  EXPECT_EQ(info.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(info.message,
            "PJRT_Layouts_MemoryLayout_Destroy: args->layout is an output or parameter layout of "
            "an executable, which the PJRT_Executable owns and frees (do not destroy it)");
  EXPECT_EQ(Text(layout), "{1,0}");  // Still there.
  const std::string fn = "PJRT_Layouts_PJRT_Executable_GetParameterLayouts";
  args.struct_size = 32;
  EXPECT_EQ(Consume(ext_->executable_get_parameter_layouts(&args)).message,
            fn + ": " + fn + "_Args struct_size is 32, expected at least 40 (the caller was built "
                 "against an incompatible pjrt_c_api.h)");
  args.struct_size = abi::kLayoutsExecutableGetParameterLayoutsArgsSize;
  args.executable = nullptr;
  EXPECT_EQ(Consume(ext_->executable_get_parameter_layouts(&args)).message,
            fn + ": args->executable is null");
  EXPECT_EQ(Consume(ext_->executable_get_parameter_layouts(nullptr)).message,
            fn + ": args is null");
  DestroyExecutable(executable);
  DestroyLoaded(loaded);
}

}  // namespace
}  // namespace test
}  // namespace capi
}  // namespace pjrtkit
