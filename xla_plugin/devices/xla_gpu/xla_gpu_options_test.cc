// XlaGpuOptions and XlaGpuPolicy: what the xla_gpu device accepts, passes to XLA:GPU and makes of
// XLA:GPU's device descriptions (no plugin needed).
#include "xla_plugin/devices/xla_gpu/xla_gpu_options.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/xla_gpu/xla_gpu_policy.h"
#include "xla_plugin/plugin_wrapper/inner_ffi.h"

namespace pjrtkit {
namespace xla_gpu {
namespace {

// The message of Parse(options)'s error; empty when it succeeded.
std::string ParseError(const AttributeMap& options) {
  StatusOr<XlaGpuOptions> parsed = XlaGpuOptions::Parse(options);
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.status().message();
}

TEST(XlaGpuOptionsTest, NoOptionsPassOnlyThePlatform) {
  StatusOr<XlaGpuOptions> parsed = XlaGpuOptions::Parse({});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->plugin_path(), "");
  ASSERT_EQ(parsed->inner_options().size(), 1u);
  EXPECT_EQ(std::get<std::string>(parsed->inner_options().at("platform_name")), "cuda");
}

TEST(XlaGpuOptionsTest, GivenOptionsPassThroughWithXlaGpusTypes) {
  AttributeMap options;
  options["xla_gpu_plugin_path"] = std::string("/x/xla_cuda_plugin.so");
  options["allocator"] = std::string("bfc");
  options["memory_fraction"] = std::string("0.5");  // JAX's "key:value" form.
  options["preallocate"] = false;
  options["visible_devices"] = std::vector<int64_t>{1, 0};
  options["collective_memory_size"] = int64_t{1} << 20;
  options["max_inflight_computations"] = std::string("8");
  StatusOr<XlaGpuOptions> parsed = XlaGpuOptions::Parse(options);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->plugin_path(), "/x/xla_cuda_plugin.so");
  const AttributeMap& inner = parsed->inner_options();
  EXPECT_EQ(inner.size(), 7u);  // Everything but the path, plus platform_name.
  EXPECT_EQ(std::get<std::string>(inner.at("allocator")), "bfc");
  EXPECT_EQ(std::get<float>(inner.at("memory_fraction")), 0.5f);
  EXPECT_EQ(std::get<bool>(inner.at("preallocate")), false);
  EXPECT_EQ(std::get<std::vector<int64_t>>(inner.at("visible_devices")),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(std::get<int64_t>(inner.at("collective_memory_size")), int64_t{1} << 20);
  EXPECT_EQ(std::get<int64_t>(inner.at("max_inflight_computations")), 8);
  EXPECT_EQ(inner.count("xla_gpu_plugin_path"), 0u);
}

TEST(XlaGpuOptionsTest, BadValuesNameTheOptionAndWhatXlaGpuAccepts) {
  EXPECT_EQ(ParseError({{"allocator", std::string("arena")}}),
            "create option 'allocator' (passed to XLA:GPU) must be one of 'default', "
            "'platform', 'bfc', 'cuda_async', 'vmm', 'address', got 'arena'");
  EXPECT_EQ(ParseError({{"memory_fraction", 0.0f}}),
            "create option 'memory_fraction' (passed to XLA:GPU) must be in (0, 1], got "
            "0.000000");
  EXPECT_EQ(ParseError({{"memory_fraction", 1.5f}}),
            "create option 'memory_fraction' (passed to XLA:GPU) must be in (0, 1], got "
            "1.500000");
  EXPECT_EQ(ParseError({{"collective_memory_size", int64_t{-1}}}),
            "create option 'collective_memory_size' (passed to XLA:GPU) must be >= 0 (bytes), "
            "got -1");
  EXPECT_EQ(ParseError({{"visible_devices", std::vector<int64_t>{0, 0}}}),
            "create option 'visible_devices' (passed to XLA:GPU) must be distinct GPU ids, got "
            "0 twice");
  EXPECT_EQ(ParseError({{"visible_devices", std::vector<int64_t>{-2}}}),
            "create option 'visible_devices' (passed to XLA:GPU) must be GPU ids >= 0, got -2");
  EXPECT_EQ(ParseError({{"max_inflight_computations", int64_t{0}}}),
            "create option 'max_inflight_computations' (passed to XLA:GPU) must be in [1, "
            "2147483647], got 0");
}

TEST(XlaGpuOptionsTest, UnknownAndMistypedOptionsListTheAcceptedOnes) {
  const std::string unknown = ParseError({{"device_count", int64_t{2}}});
  EXPECT_EQ(unknown.find("unknown create option 'device_count'; accepted options: "
                         "xla_gpu_plugin_path (string), allocator (string), memory_fraction "
                         "(float), preallocate (bool), collective_memory_size (int64), "
                         "visible_devices (int64 list), should_stage_host_to_device_transfers "
                         "(bool), abort_collectives_on_failure (bool), max_inflight_computations "
                         "(int64), use_tfrt_gpu_client (bool)"),
            0u)
      << unknown;
  EXPECT_EQ(ParseError({{"node_id", int64_t{0}}}).find("unknown create option 'node_id'"), 0u);
  EXPECT_EQ(ParseError({{"preallocate", std::string("maybe")}})
                .find("create option 'preallocate' must be bool, got string"),
            0u);
}

TEST(XlaGpuPolicyTest, DescriptionsKeepTheGpusKindAndAttributes) {
  const XlaGpuPolicy policy({});
  plugin_wrapper::InnerDeviceInfo info;
  info.id = 1;
  info.kind = "NVIDIA H200";
  info.debug_string = "cuda:1";
  info.attributes["compute_capability"] = std::string("9.0");
  info.attributes["core_count"] = int64_t{132};
  const DeviceDescription d = policy.Describe(1, info);
  EXPECT_EQ(d.id(), 1);
  EXPECT_EQ(d.process_index(), 0);
  EXPECT_EQ(d.kind(), "NVIDIA H200");
  EXPECT_EQ(d.debug_string(), "PJRTKIT_1");
  EXPECT_EQ(d.to_string(), "PjrtkitDevice(id=1, process_index=0, kind=NVIDIA H200)");
  ASSERT_EQ(d.attributes().size(), 3u);
  EXPECT_EQ(std::get<std::string>(d.attributes().at("backend")), "xla_gpu");
  EXPECT_EQ(std::get<std::string>(d.attributes().at("compute_capability")), "9.0");
  EXPECT_EQ(std::get<int64_t>(d.attributes().at("core_count")), 132);
  EXPECT_EQ(policy.backend(), "xla_gpu");
  EXPECT_EQ(policy.inner_plugin().display, "XLA:GPU");
  EXPECT_EQ(policy.memory_stats_source(), plugin_wrapper::MemoryStatsSource::kInner);
  EXPECT_FALSE(policy.moves_bytes_ignoring_layouts());  // XLA:GPU lays data out itself.
  EXPECT_FALSE(policy.ffi_programs_need_a_context());
}

TEST(XlaGpuPolicyTest, FfiRegistrationsGoToCuda) {
  const XlaGpuPolicy policy({});
  for (const char* name : {"pjrtkit", "CUDA", "cuda", "gpu"}) {
    StatusOr<std::string> inner =
        plugin_wrapper::InnerFfi::InnerPlatformName(name, policy.ffi_platform());
    ASSERT_TRUE(inner.ok()) << name;
    EXPECT_EQ(*inner, "CUDA");
  }
  EXPECT_FALSE(policy.ffi_platform().version_shims);  // XLA:GPU gets jaxlib's handlers as they are.
  StatusOr<std::string> cpu =
      plugin_wrapper::InnerFfi::InnerPlatformName("cpu", policy.ffi_platform());
  EXPECT_EQ(cpu.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cpu.status().message(),
            "FFI registrations for platform 'cpu' cannot run on pjrtkit's xla_gpu device; use "
            "'pjrtkit' (or 'cuda' / 'gpu')");
}

}  // namespace
}  // namespace xla_gpu
}  // namespace pjrtkit
