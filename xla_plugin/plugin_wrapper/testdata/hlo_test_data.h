// Real HloModuleProto bytes made by gen_hlo_test_data.py (see hlo_test_data.cc) for the
// ParameterShapes and HloShape tests.
#ifndef PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_TESTDATA_HLO_TEST_DATA_H_
#define PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_TESTDATA_HLO_TEST_DATA_H_

#include <cstddef>

namespace pjrtkit {
namespace plugin_wrapper {
namespace testdata {

// f32[4] -> f32[4].
extern const unsigned char kAddOneModule[];
extern const size_t kAddOneModuleSize;
// f32[4], s32[2,3], pred[], bf16[2], c64[1], u8[0] -> f32[4].
extern const unsigned char kMixedModule[];
extern const size_t kMixedModuleSize;
// Mixed compiled with parameter_is_tupled_arguments: one tuple parameter of those six.
extern const unsigned char kMixedTupledModule[];
extern const size_t kMixedTupledModuleSize;
// f32[<=8] (bounded dynamic) -> f32[<=8].
extern const unsigned char kDynamicModule[];
extern const size_t kDynamicModuleSize;
// token, f64[2] -> (token, f64[2]).
extern const unsigned char kTokenModule[];
extern const size_t kTokenModuleSize;
// kMixedModule wrapped as HloModuleProtoWithConfig { hlo_module = 1 }.
extern const unsigned char kMixedWithConfig[];
extern const size_t kMixedWithConfigSize;
// kMixedModule without host_program_shape (the entry computation's program_shape remains).
extern const unsigned char kMixedNoHostShape[];
extern const size_t kMixedNoHostShapeSize;

}  // namespace testdata
}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_DEVICES_XLA_CPU_TESTDATA_HLO_TEST_DATA_H_
