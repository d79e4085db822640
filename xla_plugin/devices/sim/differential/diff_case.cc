#include "xla_plugin/devices/sim/differential/diff_case.h"

#include <cmath>
#include <cstdio>

#include "xla_plugin/devices/sim/testing/program_runner.h"

namespace pjrtkit {
namespace sim {
namespace differential {
namespace {

using testing::CompileText;
using testing::RunCompiled;
using testing::RunOnInterpreter;

std::string Name(const DiffCase& c) { return c.op + " " + c.what; }

std::string IndexText(const std::vector<int64_t>& dims, int64_t flat) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] == 0 ? 0 : flat % dims[d];
    flat = dims[d] == 0 ? 0 : flat / dims[d];
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d) text += (d > 0 ? "," : "") + std::to_string(index[d]);
  return text + "]";
}

// The inputs with every float (and complex part) replaced by its absolute value.
std::vector<HostTensor> AbsoluteInputs(const std::vector<HostTensor>& inputs) {
  std::vector<HostTensor> result = inputs;
  for (HostTensor& t : result) {
    const ElementType component = ComponentType(t.type);
    if (!IsFloat(component)) continue;
    if (component == ElementType::kF8E8M0FNU) continue;  // Unsigned already.
    for (int64_t i = 0; i < NumElements(t); ++i) {
      if (!IsComplex(t.type)) {
        const uint64_t bits = ElementBits(t, i);
        const double v = FloatValue(component, bits);
        if (!std::isnan(v)) SetElementBits(&t, i, FloatBits(component, std::fabs(v)));
        continue;
      }
      // |re| + |im| as the real part: products and sums of these bound the complex ones.
      const double re = FloatValue(component, ElementBits(t, i, 0));
      const double im = FloatValue(component, ElementBits(t, i, 1));
      SetElementBits(&t, i, FloatBits(component, std::fabs(re) + std::fabs(im)), 0);
      SetElementBits(&t, i, FloatBits(component, 0.0), 1);
    }
  }
  return result;
}

// Whether a sim result of zero is accepted for the interpreter's `value` under flush-to-zero: a
// nonzero value at most the smallest normal of the type the sim computes in (f32 for the types
// computed in f32, f64 for f64). The exact result was then below it (a bf16 result can round up
// to 2^-126 from an f32 denormal the sim flushed), and the zero's sign is either (formulas of
// several steps, such as complex products, flush intermediate results).
bool FlushesToZero(ElementType type, double value) {
  const double smallest_normal = type == ElementType::kF64 ? 0x1p-1022 : 0x1p-126;
  return value != 0 && std::fabs(value) <= smallest_normal;
}

// Compares one real element (bits of float type `type`, or an integer/pred); "" when accepted,
// else why not ("3 ulps apart", "NaN positions differ", ...).
std::string CompareReal(ElementType type, uint64_t sim, uint64_t ref, const Tolerance& tolerance,
                        double magnitude, double complex_scale) {
  if (!IsFloat(type)) return sim == ref ? "" : "differs";
  const bool sim_nan = IsNaN(type, sim), ref_nan = IsNaN(type, ref);
  if (sim_nan || ref_nan) return sim_nan == ref_nan ? "" : "NaN positions differ";
  if (sim == ref) return "";
  const double s = FloatValue(type, sim), r = FloatValue(type, ref);
  if (tolerance.flush_to_zero && s == 0 && FlushesToZero(type, r)) return "";
  switch (tolerance.kind) {
    case Tolerance::Kind::kExact:
      return "differs (exact comparison)";
    case Tolerance::Kind::kUlps: {
      if (std::isinf(s) || std::isinf(r)) return "infinities differ";
      if (complex_scale >= 0) {
        // A complex part: within `ulps` ulps of the larger part's magnitude.
        const double allowed = tolerance.ulps * Epsilon(type) * complex_scale;
        if (std::fabs(s - r) <= allowed) return "";
        char text[160];
        std::snprintf(text, sizeof text, "differs by %.3g, more than %g ulps of %.6g",
                      std::fabs(s - r), tolerance.ulps, complex_scale);
        return text;
      }
      const uint64_t distance = UlpDistance(type, sim, ref);
      if (distance <= tolerance.ulps) return "";
      return std::to_string(distance) + " ulps apart (tolerance " +
             std::to_string(static_cast<int64_t>(tolerance.ulps)) + ")";
    }
    case Tolerance::Kind::kScaled: {
      if (!std::isfinite(magnitude)) return "";  // Overflow depends on the order of the terms.
      if (std::isinf(s) || std::isinf(r)) return "infinities differ";
      const double allowed = tolerance.factor * Epsilon(type) * magnitude;
      if (std::fabs(s - r) <= allowed) return "";
      char text[200];
      std::snprintf(text, sizeof text,
                    "differs by %.3g, more than %g * eps * %.6g (the terms' magnitude) = %.3g",
                    std::fabs(s - r), tolerance.factor, magnitude, allowed);
      return text;
    }
  }
  return "";
}

// "" when element i of sim and ref agree, else why not.
std::string CompareElement(const HostTensor& sim, const HostTensor& ref, const HostTensor* scale,
                           int64_t i, const Tolerance& tolerance) {
  const ElementType component = ComponentType(ref.type);
  if (!IsComplex(ref.type)) {
    const double m = scale != nullptr ? std::fabs(FloatValue(component, ElementBits(*scale, i)))
                                      : 0;
    return CompareReal(component, ElementBits(sim, i), ElementBits(ref, i), tolerance, m, -1);
  }
  // Complex: a NaN in either part makes the element a NaN.
  auto is_nan = [&](const HostTensor& t) {
    return IsNaN(component, ElementBits(t, i, 0)) || IsNaN(component, ElementBits(t, i, 1));
  };
  if (is_nan(sim) || is_nan(ref)) return is_nan(sim) == is_nan(ref) ? "" : "NaN positions differ";
  const double re = std::fabs(FloatValue(component, ElementBits(ref, i, 0)));
  const double im = std::fabs(FloatValue(component, ElementBits(ref, i, 1)));
  const double m = scale != nullptr ? FloatValue(component, ElementBits(*scale, i, 0)) : 0;
  for (int part = 0; part < 2; ++part) {
    std::string why = CompareReal(component, ElementBits(sim, i, part), ElementBits(ref, i, part),
                                  tolerance, m, std::max(re, im));
    if (!why.empty()) return std::string(part == 0 ? "real" : "imaginary") + " part " + why;
  }
  return "";
}

std::string MismatchMessage(const DiffCase& c, size_t output, const HostTensor& sim,
                            const HostTensor& ref, int64_t i, const std::string& why) {
  std::string text = Name(c) + ": output " + std::to_string(output) + " (" +
                     ShapeText(ref.type, ref.dims) + ") differs at element " + std::to_string(i) +
                     " " + IndexText(ref.dims, i) + ": sim " + ElementText(sim, i) +
                     ", interpreter " + ElementText(ref, i) + " (" + why + ")";
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const HostTensor& in = c.inputs[k];
    text += "\n  input " + std::to_string(k) + " " + ShapeText(in.type, in.dims) + ": ";
    if (c.elementwise && NumElements(in) == NumElements(ref)) {
      text += ElementText(in, i) + " (at the element)";
    } else if (c.elementwise && NumElements(in) == 1) {
      text += ElementText(in, 0);
    } else {
      text += TensorValuesText(in, 48);
    }
  }
  if (!c.elementwise) text += "\n  interpreter output: " + TensorValuesText(ref, 48);
  return text;
}

// The largest distance in ulps between the non-NaN float elements of sim and ref.
double MaxUlps(const HostTensor& sim, const HostTensor& ref) {
  const ElementType component = ComponentType(ref.type);
  if (!IsFloat(component)) return 0;
  double worst = 0;
  for (int64_t i = 0; i < NumElements(ref); ++i) {
    if (!IsComplex(ref.type)) {
      const uint64_t s = ElementBits(sim, i), r = ElementBits(ref, i);
      if (IsNaN(component, s) || IsNaN(component, r) || IsInf(component, s) ||
          IsInf(component, r) ||
          (FloatValue(component, s) == 0 && FlushesToZero(component, FloatValue(component, r)))) {
        continue;
      }
      worst = std::max(worst, static_cast<double>(UlpDistance(component, s, r)));
      continue;
    }
    double scale = 0, difference = 0;
    for (int part = 0; part < 2; ++part) {
      const double s = FloatValue(component, ElementBits(sim, i, part));
      const double r = FloatValue(component, ElementBits(ref, i, part));
      if (!std::isfinite(s) || !std::isfinite(r)) return worst;
      scale = std::max(scale, std::fabs(r));
      difference = std::max(difference, std::fabs(s - r));
    }
    if (difference > 0) worst = std::max(worst, difference / (Epsilon(component) * scale));
  }
  return worst;
}

// The largest |sim - ref| / (Epsilon * m) over the finite float elements (kScaled's measure).
double MaxScaledRatio(const HostTensor& sim, const HostTensor& ref, const HostTensor& scale) {
  const ElementType component = ComponentType(ref.type);
  if (!IsFloat(component)) return 0;
  const int parts = IsComplex(ref.type) ? 2 : 1;
  double worst = 0;
  for (int64_t i = 0; i < NumElements(ref); ++i) {
    const double m = FloatValue(component, ElementBits(scale, i, 0));
    for (int part = 0; part < parts; ++part) {
      const double s = FloatValue(component, ElementBits(sim, i, part));
      const double r = FloatValue(component, ElementBits(ref, i, part));
      if (!std::isfinite(s) || !std::isfinite(r) || !std::isfinite(m) || s == r ||
          (s == 0 && FlushesToZero(component, r))) {
        continue;
      }
      worst = std::max(worst, std::fabs(s - r) / (Epsilon(component) * m));
    }
  }
  return worst;
}

}  // namespace

Tolerance Exact() { return Tolerance(); }

Tolerance ExactFlushed() {
  Tolerance t;
  t.flush_to_zero = true;
  return t;
}

Tolerance Ulps(double ulps) {
  Tolerance t;
  t.kind = Tolerance::Kind::kUlps;
  t.ulps = ulps;
  t.flush_to_zero = true;
  return t;
}

Tolerance Scaled(double factor) {
  Tolerance t;
  t.kind = Tolerance::Kind::kScaled;
  t.factor = factor;
  t.flush_to_zero = true;
  return t;
}

double SumFactor(int64_t terms) {
  return 2 + 2 * std::sqrt(static_cast<double>(terms < 1 ? 1 : terms));
}

std::string RunDiffCase(const DiffCase& c, double* max_ulps) {
  if (max_ulps != nullptr) *max_ulps = 0;
  StatusOr<DeviceProgram> compiled = CompileText(c.program);
  if (!c.refused.empty()) {
    if (compiled.ok()) {
      return Name(c) + ": listed as refused by the sim (\"" + c.refused +
             "\"), but it compiled: move it to the tested cases";
    }
    if (compiled.status().message().find(c.refused) == std::string::npos) {
      return Name(c) + ": refused with \"" + compiled.status().ToString() + "\", expected \"" +
             c.refused + "\"";
    }
    return "";
  }
  if (!compiled.ok()) {
    return Name(c) + ": the sim refused the program: " + compiled.status().ToString() +
           "\nprogram:\n" + c.program;
  }
  auto sim = RunCompiled(*compiled, {c.inputs});
  if (!sim.ok()) return Name(c) + ": the sim failed to run: " + sim.status().ToString();
  auto ref = RunOnInterpreter(c.program, c.inputs);
  if (!ref.ok()) return Name(c) + ": the interpreter failed: " + ref.status().ToString();
  const std::vector<HostTensor>& sim_out = (*sim)[0];
  if (sim_out.size() != ref->size()) {
    return Name(c) + ": the sim returned " + std::to_string(sim_out.size()) +
           " outputs, the interpreter " + std::to_string(ref->size());
  }
  std::vector<HostTensor> scales;
  for (const Tolerance& t : c.tolerances) {
    if (t.kind != Tolerance::Kind::kScaled) continue;
    auto magnitude = RunOnInterpreter(c.program, AbsoluteInputs(c.inputs));
    if (!magnitude.ok()) {
      return Name(c) + ": the interpreter failed on the inputs' magnitudes: " +
             magnitude.status().ToString();
    }
    scales = std::move(*magnitude);
    break;
  }
  for (size_t k = 0; k < ref->size(); ++k) {
    const HostTensor& s = sim_out[k];
    const HostTensor& r = (*ref)[k];
    if (s.type != r.type || s.dims != r.dims || s.data.size() != r.data.size()) {
      return Name(c) + ": output " + std::to_string(k) + " is " + ShapeText(s.type, s.dims) +
             " on the sim, " + ShapeText(r.type, r.dims) + " on the interpreter";
    }
    const Tolerance& tolerance =
        c.tolerances.empty() ? Tolerance() : c.tolerances[std::min(k, c.tolerances.size() - 1)];
    const HostTensor* scale = tolerance.kind == Tolerance::Kind::kScaled ? &scales[k] : nullptr;
    for (int64_t i = 0; i < NumElements(r); ++i) {
      const std::string why = CompareElement(s, r, scale, i, tolerance);
      if (!why.empty()) return MismatchMessage(c, k, s, r, i, why);
    }
    if (max_ulps != nullptr) {
      *max_ulps = std::max(*max_ulps, scale != nullptr ? MaxScaledRatio(s, r, *scale)
                                                       : MaxUlps(s, r));
    }
  }
  return "";
}

std::string RunDiffCases(const std::vector<DiffCase>& cases, int* runs, int* refused,
                         int max_messages) {
  std::string messages;
  int failures = 0, run = 0, refusals = 0;
  for (const DiffCase& c : cases) {
    const std::string message = RunDiffCase(c);
    (c.refused.empty() ? run : refusals) += 1;
    if (message.empty()) continue;
    if (++failures <= max_messages) messages += (messages.empty() ? "" : "\n\n") + message;
  }
  if (failures > max_messages) {
    messages += "\n\n... and " + std::to_string(failures - max_messages) + " more failing cases";
  }
  if (failures > 0) {
    messages = std::to_string(failures) + " of " + std::to_string(cases.size()) +
               " cases fail:\n\n" + messages;
  }
  if (runs != nullptr) *runs = run;
  if (refused != nullptr) *refused = refusals;
  return messages;
}

}  // namespace differential
}  // namespace sim
}  // namespace pjrtkit
