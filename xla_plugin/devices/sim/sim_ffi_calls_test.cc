// Typed XLA FFI custom calls on the sim device: the compiler's lowering, SimFfiHandlers, and
// SimFfiCalls running native handlers (call frame, attributes, user data, errors) through the
// executor, against exact values.
#include "xla_plugin/devices/sim/sim_ffi_calls.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "xla/ffi/api/c_api.h"
#include "xla_plugin/devices/sim/compiler/compiler.h"
#include "xla_plugin/devices/sim/executor/executor.h"
#include "xla_plugin/devices/sim/sim_ffi_handlers.h"
#include "xla_plugin/devices/sim/testing/program_runner.h"

namespace pjrtkit {
namespace sim {
namespace {

using testing::CompileText;

constexpr int64_t kCounterType = 42;  // The user data's FFI type id in these tests.

// The attribute `name` of the frame, or nullptr.
void* Attr(XLA_FFI_CallFrame* frame, const char* name, XLA_FFI_AttrType* type) {
  for (int64_t i = 0; i < frame->attrs.size; ++i) {
    const XLA_FFI_ByteSpan* span = frame->attrs.names[i];
    if (std::string(span->ptr, span->len) == name) {
      *type = frame->attrs.types[i];
      return frame->attrs.attrs[i];
    }
  }
  return nullptr;
}

XLA_FFI_Error* Fail(XLA_FFI_CallFrame* frame, const char* message) {
  XLA_FFI_Error_Create_Args args{sizeof(XLA_FFI_Error_Create_Args), nullptr, message,
                                 XLA_FFI_Error_Code_INVALID_ARGUMENT};
  return frame->api->XLA_FFI_Error_Create(&args);
}

// out = in * scale + offset (f32), checking every part of the frame it relies on; counts its
// calls in the execution's user data (an int) and records the device ordinal there too.
XLA_FFI_Error* ScaleAdd(XLA_FFI_CallFrame* frame) {
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE || frame->args.size != 1 ||
      frame->rets.size != 1 || frame->attrs.size != 3) {
    return Fail(frame, "unexpected frame shape");
  }
  // Attributes arrive sorted by name.
  const XLA_FFI_ByteSpan* first = frame->attrs.names[0];
  if (std::string(first->ptr, first->len) != "offset") return Fail(frame, "attributes unsorted");
  XLA_FFI_AttrType type;
  auto* scale = static_cast<XLA_FFI_Scalar*>(Attr(frame, "scale", &type));
  if (scale == nullptr || type != XLA_FFI_AttrType_SCALAR || scale->dtype != XLA_FFI_DataType_F32)
    return Fail(frame, "bad scale");
  auto* offset = static_cast<XLA_FFI_Scalar*>(Attr(frame, "offset", &type));
  if (offset == nullptr || offset->dtype != XLA_FFI_DataType_S32) return Fail(frame, "bad offset");
  auto* tag = static_cast<XLA_FFI_ByteSpan*>(Attr(frame, "tag", &type));
  if (tag == nullptr || type != XLA_FFI_AttrType_STRING || std::string(tag->ptr, tag->len) != "hi")
    return Fail(frame, "bad tag");
  auto* in = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  if (in->dtype != XLA_FFI_DataType_F32 || in->rank != 1 || in->dims[0] != 4 ||
      out->dtype != XLA_FFI_DataType_F32 || out->rank != 1 || out->dims[0] != 4) {
    return Fail(frame, "bad buffers");
  }
  const float s = *static_cast<float*>(scale->value);
  const int32_t o = *static_cast<int32_t*>(offset->value);
  for (int i = 0; i < 4; ++i) {
    static_cast<float*>(out->data)[i] = static_cast<const float*>(in->data)[i] * s + o;
  }
  XLA_FFI_TypeId id{kCounterType};
  XLA_FFI_InvokeContext_Get_Args get{sizeof(XLA_FFI_InvokeContext_Get_Args), nullptr, frame->ctx,
                                     &id, nullptr};
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_InvokeContext_Get(&get)) return error;
  XLA_FFI_DeviceOrdinal_Get_Args ordinal{sizeof(XLA_FFI_DeviceOrdinal_Get_Args), nullptr,
                                         frame->ctx, -1};
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_DeviceOrdinal_Get(&ordinal)) return error;
  int* counter = static_cast<int*>(get.data);
  counter[0] += 1;
  counter[1] = ordinal.device_ordinal;
  return nullptr;
}

// Fails with the framework's error: INVALID_ARGUMENT "bad input".
XLA_FFI_Error* AlwaysFails(XLA_FFI_CallFrame* frame) { return Fail(frame, "bad input"); }

// Asks for the stream, which the sim does not have, and passes the error on.
XLA_FFI_Error* WantsStream(XLA_FFI_CallFrame* frame) {
  XLA_FFI_Stream_Get_Args args{sizeof(XLA_FFI_Stream_Get_Args), nullptr, frame->ctx, nullptr};
  return frame->api->XLA_FFI_Stream_Get(&args);
}

// Counts calls in the int it is given through user data: [0] the count, then the value of each
// call's `id` attribute (an i32), in call order (up to 16).
XLA_FFI_Error* Count(XLA_FFI_CallFrame* frame) {
  XLA_FFI_TypeId id{kCounterType};
  XLA_FFI_InvokeContext_Get_Args get{sizeof(XLA_FFI_InvokeContext_Get_Args), nullptr, frame->ctx,
                                     &id, nullptr};
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_InvokeContext_Get(&get)) return error;
  int* log = static_cast<int*>(get.data);
  XLA_FFI_AttrType type;
  auto* call_id = static_cast<XLA_FFI_Scalar*>(Attr(frame, "id", &type));
  if (log[0] < 16) log[1 + log[0]] = call_id != nullptr ? *static_cast<int32_t*>(call_id->value) : -1;
  log[0] += 1;
  return nullptr;
}

// Adds 1 to its result in place: reads the result buffer, which aliases the operand.
XLA_FFI_Error* IncrementInPlace(XLA_FFI_CallFrame* frame) {
  auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  for (int i = 0; i < 4; ++i) static_cast<float*>(out->data)[i] += 1;
  return nullptr;
}

FfiHandlerRegistration Handler(const char* target, XLA_FFI_Handler* handler,
                               const char* platform = "pjrtkit") {
  FfiHandlerRegistration r;
  r.target_name = target;
  r.platform_name = platform;
  r.handler = reinterpret_cast<void*>(handler);
  return r;
}

// Runs `program` (one f32[4] parameter and result) on device 2 with `calls`.
Status RunProgram(const DeviceProgram& program, const SimFfiCalls& calls, std::vector<float> input,
           std::vector<float>* output) {
  ExecutionPlace place;
  place.custom_calls = &calls;
  output->assign(4, 0.0f);
  std::vector<uint8_t> scratch(static_cast<size_t>(Executor::ScratchBytes(program)) + 1);
  return Executor::Run(program, place, {input.data()}, {output->data()}, scratch.data());
}

const char kScaleAdd[] = R"(
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %r = stablehlo.custom_call @scale_add(%a) {api_version = 4 : i32, mhlo.backend_config = {tag = "hi", scale = 2.5 : f32, offset = 3 : i32}, operand_layouts = [dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  })";

TEST(SimFfiCallsTest, HandlerGetsBuffersSortedAttributesUserDataAndTheDevice) {
  StatusOr<DeviceProgram> program = CompileText(kScaleAdd);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  const Instruction& call = program->entry().instructions.at(0);
  ASSERT_EQ(call.opcode, Opcode::kCustomCall);
  const CustomCallParams& params = std::get<CustomCallParams>(call.params);
  EXPECT_EQ(params.target, "scale_add");
  ASSERT_EQ(params.attributes.size(), 3u);
  EXPECT_EQ(params.attributes[0].name, "offset");
  EXPECT_EQ(params.attributes[0].type, ElementType::kS32);
  EXPECT_EQ(params.attributes[0].bytes, std::string("\x03\0\0\0", 4));
  EXPECT_EQ(params.attributes[1].name, "scale");
  EXPECT_EQ(params.attributes[2].kind, FfiAttribute::Kind::kString);
  EXPECT_FALSE(params.has_side_effect);

  SimFfiHandlers handlers;
  ASSERT_TRUE(handlers.Register(Handler("scale_add", ScaleAdd), "pjrtkit").ok());
  int counter[2] = {0, -1};
  SimFfiCalls calls(handlers, {{kCounterType, counter}}, 2, "pjrtkit");
  std::vector<float> out;
  Status status = RunProgram(*program, calls, {0, 1, -2, 4}, &out);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(out, (std::vector<float>{3, 5.5, -2, 13}));
  EXPECT_EQ(counter[0], 1);
  EXPECT_EQ(counter[1], 2);
}

TEST(SimFfiCallsTest, ErrorsKeepTheirCodeAndNameTheTarget) {
  SimFfiHandlers handlers;
  ASSERT_TRUE(handlers.Register(Handler("scale_add", AlwaysFails), "pjrtkit").ok());
  StatusOr<DeviceProgram> program = CompileText(kScaleAdd);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  std::vector<float> out;
  SimFfiCalls calls(handlers, {}, 0, "pjrtkit");
  Status status = RunProgram(*program, calls, {0, 0, 0, 0}, &out);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "custom call @scale_add: bad input");

  // No user data of the type asked for: the handler gets NOT_FOUND and passes it on.
  SimFfiHandlers counting;
  ASSERT_TRUE(counting.Register(Handler("scale_add", ScaleAdd, "Host"), "pjrtkit").ok());
  status = RunProgram(*program, SimFfiCalls(counting, {}, 0, "pjrtkit"), {0, 0, 0, 0}, &out);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(),
            "custom call @scale_add: the execution has no user data of FFI type id 42");

  // No handler at all.
  SimFfiHandlers none;
  status = RunProgram(*program, SimFfiCalls(none, {}, 0, "pjrtkit"), {0, 0, 0, 0}, &out);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(),
            "custom call @scale_add: no FFI handler is registered for it on platform pjrtkit");

  // Unimplemented parts of the API answer UNIMPLEMENTED, naming what.
  SimFfiHandlers stream;
  ASSERT_TRUE(stream.Register(Handler("scale_add", WantsStream), "pjrtkit").ok());
  status = RunProgram(*program, SimFfiCalls(stream, {}, 0, "pjrtkit"), {0, 0, 0, 0}, &out);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("XLA_FFI_Stream_Get"), std::string::npos) << status.message();
}

TEST(SimFfiCallsTest, EffectfulCallsRunInOrderEvenWithUnusedResultsAndInsideLoops) {
  const char program_text[] = R"(
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      stablehlo.custom_call @count(%a) {api_version = 4 : i32, has_side_effect = true, mhlo.backend_config = {id = 1 : i32}} : (tensor<4xf32>) -> ()
      %unused = stablehlo.custom_call @count(%a) {api_version = 4 : i32, has_side_effect = true, mhlo.backend_config = {id = 2 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %r:2 = stablehlo.while(%i = %zero, %v = %a) : tensor<i32>, tensor<4xf32>
        cond {
          %three = stablehlo.constant dense<3> : tensor<i32>
          %lt = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          stablehlo.custom_call @count(%v) {api_version = 4 : i32, has_side_effect = true, mhlo.backend_config = {id = 3 : i32}} : (tensor<4xf32>) -> ()
          %one = stablehlo.constant dense<1> : tensor<i32>
          %n = stablehlo.add %i, %one : tensor<i32>
          stablehlo.return %n, %v : tensor<i32>, tensor<4xf32>
        }
      stablehlo.custom_call @count(%a) {api_version = 4 : i32, has_side_effect = true, mhlo.backend_config = {id = 4 : i32}} : (tensor<4xf32>) -> ()
      %neg = stablehlo.negate %a : tensor<4xf32>
      return %neg : tensor<4xf32>
    })";
  StatusOr<DeviceProgram> program = CompileText(program_text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  SimFfiHandlers handlers;
  ASSERT_TRUE(handlers.Register(Handler("count", Count), "pjrtkit").ok());
  int log[17] = {};
  std::vector<float> out;
  Status status = RunProgram(*program, SimFfiCalls(handlers, {{kCounterType, log}}, 0, "pjrtkit"),
                             {1, 2, 3, 4}, &out);
  ASSERT_TRUE(status.ok()) << status.ToString();
  // Program order, the unread result's call and the loop nobody reads included.
  EXPECT_EQ(std::vector<int>(log, log + 7), (std::vector<int>{6, 1, 2, 3, 3, 3, 4}));
  EXPECT_EQ(out, (std::vector<float>{-1, -2, -3, -4}));
}

TEST(SimFfiCallsTest, AnAliasedResultStartsAsItsOperand) {
  const char program_text[] = R"(
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %r = stablehlo.custom_call @increment(%a) {api_version = 4 : i32, mhlo.backend_config = {}, output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]} : (tensor<4xf32>) -> tensor<4xf32>
      return %r : tensor<4xf32>
    })";
  StatusOr<DeviceProgram> program = CompileText(program_text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(std::get<CustomCallParams>(program->entry().instructions.at(0).params).aliases,
            (std::vector<std::pair<int64_t, int64_t>>{{0, 0}}));
  SimFfiHandlers handlers;
  ASSERT_TRUE(handlers.Register(Handler("increment", IncrementInPlace), "pjrtkit").ok());
  std::vector<float> out;
  Status status = RunProgram(*program, SimFfiCalls(handlers, {}, 0, "pjrtkit"), {1, 2, 3, 4}, &out);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(out, (std::vector<float>{2, 3, 4, 5}));
}

// Copies its operand's bytes to its result and records the dims it was told (ints[0..3]).
XLA_FFI_Error* CopyBytes(XLA_FFI_CallFrame* frame) {
  auto* in = static_cast<XLA_FFI_Buffer*>(frame->args.args[0]);
  auto* out = static_cast<XLA_FFI_Buffer*>(frame->rets.rets[0]);
  std::memcpy(out->data, in->data, 6 * sizeof(float));
  XLA_FFI_TypeId id{kCounterType};
  XLA_FFI_InvokeContext_Get_Args get{sizeof(XLA_FFI_InvokeContext_Get_Args), nullptr, frame->ctx,
                                     &id, nullptr};
  if (XLA_FFI_Error* error = frame->api->XLA_FFI_InvokeContext_Get(&get)) return error;
  int* dims = static_cast<int*>(get.data);
  dims[0] = static_cast<int>(in->dims[0]);
  dims[1] = static_cast<int>(in->dims[1]);
  dims[2] = static_cast<int>(out->dims[0]);
  dims[3] = static_cast<int>(out->dims[1]);
  return nullptr;
}

TEST(SimFfiCallsTest, ColumnMajorLayoutsGiveTheHandlerTransposedBytesAndLogicalDims) {
  // The operand column-major (LAPACK's layout), the result row-major: the handler sees the
  // column-major bytes of the 2x3 input and writes them as the row-major bytes of a 3x2 result,
  // which is the transpose. Dims are the arrays' own, whatever the layout.
  const char program_text[] = R"(
    func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
      %r = stablehlo.custom_call @copy(%a) {api_version = 4 : i32, mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
      return %r : tensor<3x2xf32>
    })";
  StatusOr<DeviceProgram> program = CompileText(program_text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  SimFfiHandlers handlers;
  ASSERT_TRUE(handlers.Register(Handler("copy", CopyBytes), "pjrtkit").ok());
  int dims[4] = {0, 0, 0, 0};
  std::vector<float> out(6, 0.0f);
  std::vector<float> input = {1, 2, 3, 4, 5, 6};  // [[1, 2, 3], [4, 5, 6]]
  ExecutionPlace place;
  SimFfiCalls calls(handlers, {{kCounterType, dims}}, 0, "pjrtkit");
  place.custom_calls = &calls;
  std::vector<uint8_t> scratch(static_cast<size_t>(Executor::ScratchBytes(*program)) + 1);
  Status status = Executor::Run(*program, place, {input.data()}, {out.data()}, scratch.data());
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_EQ(std::vector<int>(dims, dims + 4), (std::vector<int>{2, 3, 3, 2}));

  // Column-major on both sides: a 2x3 result holding the input unchanged.
  const char both[] = R"(
    func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %r = stablehlo.custom_call @copy(%a) {api_version = 4 : i32, mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      return %r : tensor<2x3xf32>
    })";
  program = CompileText(both);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  scratch.assign(static_cast<size_t>(Executor::ScratchBytes(*program)) + 1, 0);
  status = Executor::Run(*program, place, {input.data()}, {out.data()}, scratch.data());
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(out, input);
  EXPECT_EQ(std::vector<int>(dims, dims + 4), (std::vector<int>{2, 3, 2, 3}));
}

TEST(SimFfiCallsTest, RegistrationChecksPlatformAndHandler) {
  SimFfiHandlers handlers;
  EXPECT_TRUE(handlers.Register(Handler("t", Count, "PJRTKIT"), "pjrtkit").ok());
  EXPECT_TRUE(handlers.Register(Handler("t", Count), "pjrtkit").ok());  // Same again: fine.
  Status other = handlers.Register(Handler("t", AlwaysFails), "pjrtkit");
  EXPECT_EQ(other.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(other.message(),
            "a different FFI handler is already registered for t on platform pjrtkit");
  Status cuda = handlers.Register(Handler("u", Count, "CUDA"), "pjrtkit");
  EXPECT_EQ(cuda.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cuda.message(), "FFI handler for u: platform 'CUDA' is not this device's; accepted: "
                            "'pjrtkit' or 'Host'");
  FfiHandlerRegistration null_handler = Handler("v", Count);
  null_handler.handler = nullptr;
  EXPECT_EQ(handlers.Register(null_handler, "pjrtkit").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(handlers.Find("t"), reinterpret_cast<void*>(&Count));
  EXPECT_EQ(handlers.Find("u"), nullptr);
}

TEST(SimFfiCallsTest, CompilerRefusesWhatHandlersCannotBeGiven) {
  const char array_attribute[] = R"(
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      %r = stablehlo.custom_call @h(%a) {api_version = 4 : i32, mhlo.backend_config = {dims = array<i64: 1, 2>}} : (tensor<4xf32>) -> tensor<4xf32>
      return %r : tensor<4xf32>
    })";
  StatusOr<DeviceProgram> compiled = CompileText(array_attribute);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(compiled.status().message().find("custom_call @h attribute 'dims'"), std::string::npos)
      << compiled.status().message();

  const char not_a_permutation[] = R"(
    func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %r = stablehlo.custom_call @h(%a) {api_version = 4 : i32, mhlo.backend_config = {}, operand_layouts = [dense<[0, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      return %r : tensor<2x3xf32>
    })";
  compiled = CompileText(not_a_permutation);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
  // The StableHLO verifier refuses it already (the compiler checks again for programs it reads
  // without verification).
  EXPECT_NE(compiled.status().message().find("permutation"), std::string::npos)
      << compiled.status().message();

  const char sub_byte[] = R"(
    func.func @main(%a: tensor<4xi4>) -> tensor<4xi4> {
      %r = stablehlo.custom_call @h(%a) {api_version = 4 : i32, mhlo.backend_config = {}} : (tensor<4xi4>) -> tensor<4xi4>
      return %r : tensor<4xi4>
    })";
  compiled = CompileText(sub_byte);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnimplemented);

  const char row_major_2d[] = R"(
    func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %r = stablehlo.custom_call @h(%a) {api_version = 4 : i32, mhlo.backend_config = {}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      return %r : tensor<2x3xf32>
    })";
  EXPECT_TRUE(CompileText(row_major_2d).ok());
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
