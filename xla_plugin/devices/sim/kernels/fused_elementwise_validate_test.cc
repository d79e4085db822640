// Validate's refusals (each malformed program with its code and message) and CheckSupported's
// answers, which must agree with the golden tables: every op/type case XLA:CPU computed there is
// supported, and nothing else is.
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "xla_plugin/devices/sim/kernels/element_kind.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/kernels/kernel_registry.h"
#include "xla_plugin/devices/sim/kernels/testdata/golden_util.h"

namespace pjrtkit {
namespace sim {
namespace {

const golden::OpCase kOpCases[] = {
#include "xla_plugin/devices/sim/kernels/testdata/golden_ops.inc"
};
const golden::OpCase kConvertCases[] = {
#include "xla_plugin/devices/sim/kernels/testdata/golden_convert.inc"
};

constexpr ElementType kF32 = ElementType::kF32;

EwStep Step(EwOp op, ElementType type, std::vector<int32_t> operands, int64_t attr = 0) {
  EwStep s;
  s.op = op;
  s.type = type;
  s.attr = attr;
  for (size_t i = 0; i < operands.size(); ++i) s.operands[i] = operands[i];
  return s;
}

// A valid program: out = x + y over [2, 3] f32 inputs.
FusedElementwise Valid() {
  FusedElementwise f;
  f.dims = {2, 3};
  f.inputs = {EwInput{kF32, {3, 1}}, EwInput{kF32, {0, 1}}};
  f.steps = {Step(EwOp::kInput, kF32, {}, 0), Step(EwOp::kInput, kF32, {}, 1),
             Step(EwOp::kAdd, kF32, {0, 1})};
  f.outputs = {2};
  return f;
}

void ExpectError(const FusedElementwise& f, StatusCode code, const std::string& message) {
  const Status s = Validate(f);
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(message), std::string::npos)
      << "message: " << s.message() << "\nexpected to contain: " << message;
}

TEST(ValidateTest, AcceptsAValidProgram) { EXPECT_TRUE(Validate(Valid()).ok()); }

TEST(ValidateTest, RefusesMalformedShapesAndInputs) {
  FusedElementwise f = Valid();
  f.dims = {2, -3};
  ExpectError(f, StatusCode::kInvalidArgument, "dims[1] is -3; expected >= 0");
  f = Valid();
  f.inputs[1].strides = {1};
  ExpectError(f, StatusCode::kInvalidArgument,
              "input 1 has 1 strides; expected one per output dimension (2)");
  f = Valid();
  f.inputs[0].strides = {3, -1};
  ExpectError(f, StatusCode::kInvalidArgument, "input 0 has a negative stride");
  f = Valid();
  f.inputs[0].type = ElementType::kS4;
  ExpectError(f, StatusCode::kUnimplemented, "input 0: element type s4 is not supported");
  f = Valid();
  f.dims = {int64_t{1} << 40, int64_t{1} << 40};
  ExpectError(f, StatusCode::kInvalidArgument, "more than 2^63 elements");
}

TEST(ValidateTest, RefusesBadOperandsAndLeaves) {
  FusedElementwise f = Valid();
  f.steps[2].operands[1] = 2;
  ExpectError(f, StatusCode::kInvalidArgument,
              "step 2 (add: f32 from f32, ?): operand 1 is 2; expected an earlier step in [0, 2)");
  f = Valid();
  f.steps[2].operands[0] = -1;
  ExpectError(f, StatusCode::kInvalidArgument, "operand 0 is -1; expected an earlier step");
  f = Valid();
  f.steps[2].operands[2] = 0;
  ExpectError(f, StatusCode::kInvalidArgument,
              "operand 2 is 0; the op takes 2 operand(s), so it must be -1");
  f = Valid();
  f.steps[1].attr = 5;
  ExpectError(f, StatusCode::kInvalidArgument,
              "step 1 (input: f32): input index 5 is out of range");
  f = Valid();
  f.steps[1].type = ElementType::kF64;
  ExpectError(f, StatusCode::kInvalidArgument, "reads input 1 of type f32 as f64");
  f = Valid();
  f.steps.insert(f.steps.begin() + 2, Step(EwOp::kConstant, kF32, {}));
  f.steps[3].operands[1] = 2;
  f.steps[2].constant = "abc";
  f.outputs = {3};
  ExpectError(f, StatusCode::kInvalidArgument, "constant has 3 bytes; expected 4");
  f = Valid();
  f.steps[1] = Step(EwOp::kIota, kF32, {}, 2);
  ExpectError(f, StatusCode::kInvalidArgument, "iota dimension 2 is out of range [0, 2)");
  f = Valid();
  f.steps[2].op = static_cast<EwOp>(200);
  ExpectError(f, StatusCode::kInvalidArgument, "step 2 has op 200, which is not an EwOp");
  f = Valid();
  f.outputs = {3};
  ExpectError(f, StatusCode::kInvalidArgument, "output 0 is step 3; expected a step in [0, 3)");
}

TEST(ValidateTest, RefusesInconsistentTypes) {
  FusedElementwise f = Valid();
  f.steps[2].type = ElementType::kF64;
  ExpectError(f, StatusCode::kInvalidArgument,
              "step 2 (add: f64 from f32, f32): op 'add' needs operand 0 of type f64, got f32");
  f = Valid();
  f.steps[2].operand_type = ElementType::kS32;
  ExpectError(f, StatusCode::kInvalidArgument, "operand_type is s32 but operand 0 has type f32");
  f = Valid();
  f.steps[2] = Step(EwOp::kCompare, ElementType::kPred, {0, 1},
                    static_cast<int>(ComparisonDirection::kLt) |
                        (static_cast<int>(ComparisonType::kSigned) << 8));
  ExpectError(f, StatusCode::kInvalidArgument,
              "op 'compare' with comparison type SIGNED does not fit f32 operands");
  f.steps[2].attr = 9;
  ExpectError(f, StatusCode::kInvalidArgument, "op 'compare' has attr 9");
  f.steps[2] = Step(EwOp::kCompare, kF32, {0, 1});
  ExpectError(f, StatusCode::kInvalidArgument, "op 'compare' needs a result of type pred, got f32");
  f = Valid();
  f.steps[2] = Step(EwOp::kSelect, kF32, {0, 0, 1});
  ExpectError(f, StatusCode::kInvalidArgument, "op 'select' needs operand 0 of type pred, got f32");
  f = Valid();
  f.steps[2] = Step(EwOp::kIsFinite, kF32, {0});
  ExpectError(f, StatusCode::kInvalidArgument, "op 'is_finite' needs a result of type pred");
  f = Valid();
  f.steps[2] = Step(EwOp::kReducePrecision, kF32, {0}, 3);
  ExpectError(f, StatusCode::kInvalidArgument,
              "op 'reduce_precision' has exponent_bits 0 and mantissa_bits 3");
  f = Valid();
  f.steps[2] = Step(EwOp::kBitcastConvert, ElementType::kF64, {0});
  ExpectError(f, StatusCode::kInvalidArgument, "needs types of one bit width, got f32 -> f64");
  f = Valid();
  f.steps[2] = Step(EwOp::kComplex, ElementType::kC128, {0, 1});
  ExpectError(f, StatusCode::kInvalidArgument, "op 'complex' needs operand 0 of type f64, got f32");
}

TEST(ValidateTest, RefusesUnsupportedOpsWithUnimplemented) {
  FusedElementwise f = Valid();
  f.steps[2] = Step(EwOp::kConvert, ElementType::kU4, {0});
  ExpectError(f, StatusCode::kUnimplemented, "element type u4 is not supported by the sim device");
  f = Valid();
  f.steps[2] = Step(EwOp::kNot, kF32, {0});
  ExpectError(f, StatusCode::kUnimplemented,
              "step 2 (not: f32 from f32): op 'not' on f32 is not supported");
  f = Valid();
  f.inputs[0].type = f.inputs[1].type = ElementType::kC64;
  f.steps[0].type = f.steps[1].type = ElementType::kC64;
  f.steps[2] = Step(EwOp::kCompare, ElementType::kPred, {0, 1},
                    static_cast<int>(ComparisonDirection::kLt));
  ExpectError(f, StatusCode::kUnimplemented, "op 'compare' on c64 (LT NOTYPE) is not supported");
  f.steps[2] = Step(EwOp::kRemainder, ElementType::kC64, {0, 1});
  ExpectError(f, StatusCode::kUnimplemented, "op 'remainder' on c64 is not supported");
}

TEST(CheckSupportedTest, NamesOpAndTypes) {
  EXPECT_TRUE(CheckSupported(EwOp::kAdd, ElementType::kBF16, ElementType::kInvalid).ok());
  EXPECT_TRUE(CheckSupported(EwOp::kAbs, kF32, ElementType::kC64).ok());
  EXPECT_TRUE(CheckSupported(EwOp::kIota, ElementType::kF8E5M2, ElementType::kInvalid).ok());
  const Status s = CheckSupported(EwOp::kShiftLeft, kF32, ElementType::kInvalid);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(),
            "op 'shift_left' on f32 is not supported by the sim device's elementwise engine");
  EXPECT_EQ(CheckSupported(EwOp::kInput, ElementType::kF4E2M1FN, ElementType::kInvalid).code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(CheckSupported(EwOp::kCompare, ElementType::kPred, ElementType::kInvalid).code(),
            StatusCode::kInvalidArgument);
}

// Every (op, result, operand) XLA:CPU computed in the golden tables is supported, and for every
// op and supported type not in the tables CheckSupported says UNIMPLEMENTED (or, for mismatched
// types, INVALID_ARGUMENT): the tables list exactly what the engine runs.
TEST(CheckSupportedTest, AgreesWithTheGoldenTables) {
  std::set<std::tuple<int, int, int>> golden;  // (op, result, operand)
  for (const golden::OpCase* cases : {kOpCases, kConvertCases}) {
    const size_t n = cases == kOpCases ? sizeof(kOpCases) / sizeof(kOpCases[0])
                                       : sizeof(kConvertCases) / sizeof(kConvertCases[0]);
    for (size_t i = 0; i < n; ++i) {
      EwOp op;
      ASSERT_TRUE(EwOpFromName(cases[i].op, &op)) << cases[i].op;
      const ElementType result = static_cast<ElementType>(cases[i].result_type);
      ElementType operand = static_cast<ElementType>(cases[i].operand_type);
      if (op == EwOp::kSelect) operand = ElementType::kInvalid;
      golden.insert({static_cast<int>(op), cases[i].result_type, static_cast<int>(operand)});
      EXPECT_TRUE(CheckSupported(op, result, operand).ok())
          << cases[i].op << " " << ElementTypeName(result) << " <- " << ElementTypeName(operand)
          << ": " << CheckSupported(op, result, operand).ToString();
    }
  }
  std::vector<ElementType> types;
  for (int t = 1; t <= kMaxElementType; ++t) {
    if (IsSupportedElementType(static_cast<ElementType>(t))) types.push_back(ElementType(t));
  }
  int checked = 0;
  for (int o = static_cast<int>(EwOp::kAbs); o < kNumEwOps; ++o) {
    const EwOp op = static_cast<EwOp>(o);
    for (ElementType result : types) {
      for (ElementType operand : types) {
        const bool natural = NumOperands(op) >= 2 && op != EwOp::kCompare && op != EwOp::kComplex;
        if (natural && operand != result) continue;  // Operand type = result type.
        const ElementType key = op == EwOp::kSelect ? ElementType::kInvalid : operand;
        const bool in_golden = golden.count({o, static_cast<int>(result), static_cast<int>(key)});
        const Status s = CheckSupported(op, result, operand);
        ++checked;
        EXPECT_EQ(s.ok(), in_golden) << EwOpName(op) << " " << ElementTypeName(result) << " <- "
                                     << ElementTypeName(operand) << ": " << s.ToString();
      }
    }
  }
  EXPECT_GT(checked, 5000);
}

}  // namespace
}  // namespace sim
}  // namespace pjrtkit
