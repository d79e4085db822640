// A PJRT plugin of the C-API tests' fake device, for api_coverage_test: the real pjrtkit table.
#include "xla/pjrt/c/pjrt_c_api.h"
#include "xla_plugin/c_api/api.h"
#include "xla_plugin/c_api/testing/fake_client.h"

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  return pjrtkit::CreatePjrtApi<pjrtkit::testing::FakeFactory>();
}
