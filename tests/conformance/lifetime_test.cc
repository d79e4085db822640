// Objects the framework destroys after their client: Python bindings and garbage collectors free
// in any order, at interpreter exit too. Buffers, events, executables and topologies destroyed
// after PJRT_Client_Destroy must not crash, in every order.
#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/test_base.h"

namespace pjrt_conformance {
namespace {

// What one case makes on its own client, in the groups the cases destroy one at a time.
struct ClientObjects {
  BufferPtr input;               // From host (zero copy: the runtime may alias the host data).
  BufferPtr output;              // Of an execution.
  EventPtr upload_done;          // done_with_host_buffer of `input` (may be empty).
  EventPtr execute_done;         // The execution's completion event.
  EventPtr output_ready;         // PJRT_Buffer_ReadyEvent of `output`.
  LoadedExecutablePtr loaded;    // x + 1.
  ExecutablePtr executable;      // PJRT_LoadedExecutable_GetExecutable of `loaded`.
};

// The groups destroyed in some order; kClient is PJRT_Client_Destroy.
enum Group { kBuffers, kEvents, kLoaded, kExecutable, kClient, kGroupCount };

const char* GroupName(int group) {
  static const char* const kNames[] = {"buffers", "events", "loaded_executable", "executable",
                                       "client"};
  return kNames[group];
}

class LifetimeTest : public ClientTestBase {
 protected:
  void TearDown() override { UseClient(nullptr); }

  // Makes a client and every object of ClientObjects on it; ASSERTs on failure.
  void Make(ClientPtr* client, ClientObjects* objects) {
    PJRT_ASSERT_OK(CreateClient(options(), client));
    UseClient(client->get());
    PJRT_Device* device = FirstDevice();
    ASSERT_NE(device, nullptr);
    input_data_ = {1.0f, 2.0f, 3.0f, 4.0f};
    PJRT_ASSERT_OK(FromHost(input_data_.data(), PJRT_Buffer_Type_F32, {4}, device,
                            &objects->input, PJRT_HostBufferSemantics_kImmutableZeroCopy,
                            &objects->upload_done));
    PJRT_ASSERT_OK(CompileMlir(kAddOneF32, &objects->loaded));
    PJRT_ASSERT_OK(GetExecutable(objects->loaded.get(), &objects->executable));
    std::vector<std::vector<BufferPtr>> outputs;
    std::vector<EventPtr> events;
    PJRT_ASSERT_OK(Execute(objects->loaded.get(), {{objects->input.get()}}, &outputs, &events));
    ASSERT_EQ(outputs.size(), 1u);
    ASSERT_EQ(outputs[0].size(), 1u);
    objects->output = std::move(outputs[0][0]);
    objects->execute_done = std::move(events[0]);
    PJRT_ARGS(PJRT_Buffer_ReadyEvent_Args, ready);
    ready.buffer = objects->output.get();
    PJRT_ASSERT_OK(PJRT_CALL(api()->PJRT_Buffer_ReadyEvent(&ready)));
    objects->output_ready = EventPtr(api(), ready.event);
  }

  // Destroys `group` of `objects` (or the client), checking what can still be checked.
  void Destroy(int group, ClientPtr* client, ClientObjects* objects) {
    switch (group) {
      case kBuffers:
        objects->output.reset();
        objects->input.reset();
        break;
      case kEvents:
        // Awaiting is what a framework does with them last; they completed with the execution.
        if (objects->execute_done) PJRT_EXPECT_OK(Await(objects->execute_done.get()));
        if (objects->output_ready) PJRT_EXPECT_OK(Await(objects->output_ready.get()));
        objects->upload_done.reset();
        objects->execute_done.reset();
        objects->output_ready.reset();
        break;
      case kLoaded:
        objects->loaded.reset();
        break;
      case kExecutable:
        objects->executable.reset();
        break;
      case kClient:
        client->reset();
        break;
    }
  }

  std::vector<float> input_data_;  // Aliased by `input`: outlives every case's objects.
};

// Every one of the 120 orders of destroying the client and the four groups (a fresh client each;
// a crash fails the whole run).
TEST_F(LifetimeTest, ObjectsDestroyedAfterTheClientInEveryOrder) {
  PJRT_REQUIRE_COMPILER();
  std::array<int, kGroupCount> order = {kBuffers, kEvents, kLoaded, kExecutable, kClient};
  int cases = 0;
  do {
    std::string name;
    for (int group : order) name += std::string(name.empty() ? "" : ",") + GroupName(group);
    SCOPED_TRACE("destroy order: " + name);
    ClientPtr client;
    ClientObjects objects;
    Make(&client, &objects);
    if (HasFatalFailure()) return;
    for (int group : order) Destroy(group, &client, &objects);
    UseClient(nullptr);
    ++cases;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(cases, 120);
}

// A buffer read after its client was destroyed still holds its values (the framework may still
// convert an array it holds while tearing down).
TEST_F(LifetimeTest, BufferReadableAfterTheClientIsDestroyed) {
  PJRT_SKIP_IF_KNOWN_DEVIATION("buffer_read_after_client_destroy_crashes", true,
                               "reading a buffer after PJRT_Client_Destroy crashes (SIGSEGV)");
  PJRT_REQUIRE_COMPILER();
  ClientPtr client;
  ClientObjects objects;
  Make(&client, &objects);
  if (HasFatalFailure()) return;
  client.reset();
  std::vector<float> values;
  PJRT_ASSERT_OK(ReadVector(objects.output.get(), &values));
  EXPECT_EQ(values, (std::vector<float>{2.0f, 3.0f, 4.0f, 5.0f}));
}

// An executable compiled ahead of time for a topology the plugin made (PJRT_Compile with a
// client), destroyed with the topology after the client, in both orders.
TEST_F(LifetimeTest, TopologyAndItsExecutableDestroyedAfterTheClient) {
  PJRT_REQUIRE_SLOT(PJRT_TopologyDescription_Create);
  PJRT_REQUIRE_SLOT(PJRT_Compile);
  for (bool topology_first : {true, false}) {
    SCOPED_TRACE(topology_first ? "topology first" : "executable first");
    ClientPtr client;
    PJRT_ASSERT_OK(CreateClient(options(), &client));
    std::vector<PJRT_NamedValue> values = ToNamedValues(options());
    PJRT_ARGS(PJRT_TopologyDescription_Create_Args, create);
    create.create_options = values.data();
    create.num_options = values.size();
    const Status created = PJRT_CALL(api()->PJRT_TopologyDescription_Create(&create));
    PJRT_SKIP_IF_UNIMPLEMENTED(created, "PJRT_TopologyDescription_Create");
    PJRT_ASSERT_OK(created);
    TopologyPtr topology(api(), create.topology);
    std::string code = kAddOneF32;
    const std::string format = "mlir";
    const std::string compile_options = CompileOptions1x1();
    PJRT_ARGS(PJRT_Program, program);
    program.code = &code[0];
    program.code_size = code.size();
    program.format = format.data();
    program.format_size = format.size();
    PJRT_ARGS(PJRT_Compile_Args, compile);
    compile.topology = topology.get();
    compile.program = &program;
    compile.compile_options = compile_options.data();
    compile.compile_options_size = compile_options.size();
    compile.client = client.get();
    const Status compiled = PJRT_CALL(api()->PJRT_Compile(&compile));
    ExecutablePtr executable(api(), compile.executable);
    if (compiled.code == PJRT_Error_Code_NOT_FOUND) {
      GTEST_SKIP() << "PJRT_Compile: no ahead-of-time compiler: " << compiled;
    }
    PJRT_SKIP_IF_UNIMPLEMENTED(compiled, "PJRT_Compile");
    PJRT_ASSERT_OK(compiled);
    client.reset();
    if (topology_first) topology.reset();
    PJRT_ARGS(PJRT_Executable_NumOutputs_Args, outputs);
    outputs.executable = executable.get();
    PJRT_EXPECT_OK(PJRT_CALL(api()->PJRT_Executable_NumOutputs(&outputs)));
    EXPECT_EQ(outputs.num_outputs, 1u);
    executable.reset();
    topology.reset();
  }
}

}  // namespace
}  // namespace pjrt_conformance
