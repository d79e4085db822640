#include "xla_plugin/devices/sim/differential/case_helpers.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "xla_plugin/stablehlo/ir.h"

namespace pjrtkit {
namespace sim {
namespace differential {

const std::vector<ElementType>& SignedTypes() {
  static const auto* const types = new std::vector<ElementType>{
      ElementType::kS8, ElementType::kS16, ElementType::kS32, ElementType::kS64};
  return *types;
}

const std::vector<ElementType>& UnsignedTypes() {
  static const auto* const types = new std::vector<ElementType>{
      ElementType::kU8, ElementType::kU16, ElementType::kU32, ElementType::kU64};
  return *types;
}

const std::vector<ElementType>& IntegerTypes() {
  static const auto* const types = new std::vector<ElementType>(Types({SignedTypes(), UnsignedTypes()}));
  return *types;
}

const std::vector<ElementType>& FloatTypes() {
  static const auto* const types = new std::vector<ElementType>{
      ElementType::kF16, ElementType::kBF16, ElementType::kF32, ElementType::kF64};
  return *types;
}

const std::vector<ElementType>& Float8Types() {
  static const auto* const types = new std::vector<ElementType>{
      ElementType::kF8E5M2,     ElementType::kF8E4M3FN, ElementType::kF8E4M3B11FNUZ,
      ElementType::kF8E5M2FNUZ, ElementType::kF8E4M3FNUZ, ElementType::kF8E4M3,
      ElementType::kF8E3M4,     ElementType::kF8E8M0FNU};
  return *types;
}

const std::vector<ElementType>& ComplexTypes() {
  static const auto* const types = new std::vector<ElementType>{ElementType::kC64, ElementType::kC128};
  return *types;
}

std::vector<ElementType> Types(std::initializer_list<std::vector<ElementType>> lists) {
  std::vector<ElementType> all;
  for (const auto& list : lists) all.insert(all.end(), list.begin(), list.end());
  return all;
}

std::vector<ElementType> AllTypes() {
  return Types({{ElementType::kPred}, IntegerTypes(), FloatTypes(), ComplexTypes()});
}

bool Measuring() {
  const char* measure = std::getenv("PJRTKIT_DIFF_MEASURE");
  return measure != nullptr && std::string(measure) == "1";
}

const std::vector<std::vector<int64_t>>& ElementwiseShapes() {
  // Measuring adds 100000 elements per case.
  static const auto* const shapes =
      Measuring() ? new std::vector<std::vector<int64_t>>{{33, 17}, {1200}, {7}, {}, {0, 5},
                                                          {100000}}
                  : new std::vector<std::vector<int64_t>>{{33, 17}, {1200}, {7}, {}, {0, 5}};
  return *shapes;
}

uint64_t SeedOf(const std::string& name) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : name) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

std::string TypeName(ElementType type) { return stablehlo::MlirElementTypeName(type); }

std::string ElementwiseProgram(const std::string& op, const std::vector<ElementType>& operand_types,
                               ElementType result, const std::vector<int64_t>& dims,
                               const std::string& attributes,
                               const std::vector<bool>& scalar_operands) {
  ProgramBuilder b;
  std::vector<std::string> operands;
  for (size_t i = 0; i < operand_types.size(); ++i) {
    const bool scalar = i < scalar_operands.size() && scalar_operands[i];
    operands.push_back(b.Parameter(ArrayType{operand_types[i], scalar ? std::vector<int64_t>{} : dims}));
  }
  return b.Build({b.Op1(op, operands, ArrayType{result, dims}, attributes)});
}

void ExpectAgree(const std::string& family, const std::vector<DiffCase>& cases) {
  const auto start = std::chrono::steady_clock::now();
  if (Measuring()) {
    std::map<std::string, double> worst;
    for (DiffCase c : cases) {
      bool ulps = false;
      for (Tolerance& t : c.tolerances) {
        if (t.kind == Tolerance::Kind::kExact) continue;
        t.ulps = 1e18;
        t.factor = 1e18;
        ulps = true;
      }
      if (!ulps || !c.refused.empty()) continue;
      double max_ulps = 0;
      const std::string message = RunDiffCase(c, &max_ulps);
      const std::string key = c.op + " " + c.what.substr(0, c.what.find('['));
      if (!message.empty()) std::printf("measure: %s\n", message.c_str());
      worst[key] = std::max(worst[key], max_ulps);
    }
    for (const auto& [key, ulps] : worst) std::printf("measure: %-40s %.3g ulps\n", key.c_str(), ulps);
  }
  int runs = 0, refused = 0;
  const std::string failures = RunDiffCases(cases, &runs, &refused, 1000);
  if (!failures.empty()) ADD_FAILURE() << family << ": " << failures;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %d cases run on both, %d refused as listed (%.1f s)\n", family.c_str(), runs,
              refused, seconds);
}

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
