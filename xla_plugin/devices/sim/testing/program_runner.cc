#include "xla_plugin/devices/sim/testing/program_runner.h"

#include <limits.h>
#include <stdlib.h>

#include <cstring>
#include <thread>

#include "xla_plugin/devices/sim/executor/executor.h"
#include "xla_plugin/devices/sim/kernels/fused_elementwise.h"
#include "xla_plugin/devices/sim/runtime/rendezvous.h"
#include "xla_plugin/stablehlo/text_parser.h"

namespace pjrtkit {
namespace sim {
namespace testing {
namespace {

std::string Runfile(const std::string& relative) {
  const char* srcdir = getenv("TEST_SRCDIR");
  if (srcdir == nullptr) return "";
  for (const std::string& root : {std::string(srcdir) + "/pjrtkit/", std::string(srcdir) + "/"}) {
    char resolved[PATH_MAX];
    if (realpath((root + relative).c_str(), resolved) != nullptr) return resolved;
  }
  return "";
}

// 64-byte aligned host memory standing in for device memory.
struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes) : data(static_cast<char*>(aligned_alloc(64, Round(bytes)))) {}
  ~AlignedBuffer() { free(data); }
  static size_t Round(size_t bytes) { return (bytes + 63) / 64 * 64 + 64; }
  char* data;
};

}  // namespace

std::shared_ptr<const stablehlo::StablehloLibrary> TestLibrary() {
  static const auto* const library = [] {
    std::string path = Runfile("external/venv/stablehlo/libTorchMLIRAggregateCAPI.so");
    if (path.empty() && getenv("PJRTKIT_STABLEHLO_LIBRARY") != nullptr) {
      path = getenv("PJRTKIT_STABLEHLO_LIBRARY");
    }
    auto loaded = stablehlo::StablehloLibrary::Load(path);
    return new std::shared_ptr<const stablehlo::StablehloLibrary>(loaded.ok() ? *loaded : nullptr);
  }();
  return *library;
}

StatusOr<DeviceProgram> CompileText(std::string_view program, const CompileFacts& facts,
                                    CompileReport* report) {
  auto library = TestLibrary();
  if (library == nullptr) return FailedPrecondition("the StableHLO library is missing");
  PJRTKIT_ASSIGN_OR_RETURN(std::string text, library->ToGenericText(program));
  PJRTKIT_ASSIGN_OR_RETURN(stablehlo::Module module, stablehlo::TextParser::Parse(text));
  return CompileModule(module, facts, report);
}

StatusOr<std::vector<std::vector<HostTensor>>> RunCompiled(
    const DeviceProgram& program, const std::vector<std::vector<HostTensor>>& inputs) {
  const Computation& entry = program.entry();
  const size_t devices = inputs.size();
  std::vector<std::vector<HostTensor>> results(devices);
  std::vector<Status> statuses(devices);
  Rendezvous rendezvous(static_cast<int>(devices));
  auto run = [&](size_t d) {
    if (inputs[d].size() != entry.parameters.size()) {
      statuses[d] = InvalidArgument("wrong number of inputs");
      return;
    }
    std::vector<std::unique_ptr<AlignedBuffer>> memory;
    std::vector<const void*> args;
    for (size_t i = 0; i < inputs[d].size(); ++i) {
      const ArrayType& type = entry.slot_types[entry.parameters[i]];
      if (inputs[d][i].type != type.type || inputs[d][i].dims != type.dims ||
          static_cast<int64_t>(inputs[d][i].data.size()) != type.byte_size()) {
        statuses[d] = InvalidArgument("input " + std::to_string(i) + " is not " + type.ToString());
        return;
      }
      memory.push_back(std::make_unique<AlignedBuffer>(type.byte_size()));
      std::memcpy(memory.back()->data, inputs[d][i].data.data(), type.byte_size());
      args.push_back(memory.back()->data);
    }
    std::vector<void*> outs;
    for (Slot s : entry.results) {
      memory.push_back(std::make_unique<AlignedBuffer>(entry.slot_types[s].byte_size()));
      outs.push_back(memory.back()->data);
    }
    AlignedBuffer scratch(Executor::ScratchBytes(program));
    ExecutionPlace place;
    place.replica = static_cast<int64_t>(d) / program.num_partitions;
    place.partition = static_cast<int64_t>(d) % program.num_partitions;
    place.num_participants = static_cast<int64_t>(devices);
    place.rendezvous = devices > 1 ? &rendezvous : nullptr;
    statuses[d] = Executor::Run(program, place, args, outs, scratch.data);
    for (size_t j = 0; j < entry.results.size(); ++j) {
      const ArrayType& type = entry.slot_types[entry.results[j]];
      HostTensor t;
      t.type = type.type;
      t.dims = type.dims;
      t.data.assign(static_cast<const char*>(outs[j]), type.byte_size());
      results[d].push_back(std::move(t));
    }
  };
  if (devices == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    for (size_t d = 0; d < devices; ++d) threads.emplace_back(run, d);
    for (std::thread& t : threads) t.join();
  }
  for (const Status& s : statuses) PJRTKIT_RETURN_IF_ERROR(s);
  return results;
}

StatusOr<std::vector<HostTensor>> RunOnSim(std::string_view program,
                                           const std::vector<HostTensor>& inputs) {
  PJRTKIT_ASSIGN_OR_RETURN(DeviceProgram compiled, CompileText(program));
  PJRTKIT_ASSIGN_OR_RETURN(auto results, RunCompiled(compiled, {inputs}));
  return results[0];
}

StatusOr<std::vector<HostTensor>> RunOnInterpreter(std::string_view program,
                                                   const std::vector<HostTensor>& inputs) {
  auto library = TestLibrary();
  if (library == nullptr) return FailedPrecondition("the StableHLO library is missing");
  return library->Interpret(program, inputs);
}

HostTensor Tensor(ElementType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  HostTensor t;
  t.type = type;
  t.dims = std::move(dims);
  const int bits = ElementTypeBits(type);
  const size_t bytes = bits <= 8 ? 1 : bits / 8;
  t.data.resize(values.size() * bytes);
  for (size_t i = 0; i < values.size(); ++i) {
    char* out = &t.data[i * bytes];
    const double v = values[i];
    switch (type) {
      case ElementType::kF64: std::memcpy(out, &v, 8); break;
      case ElementType::kF32:
      case ElementType::kF16:
      case ElementType::kBF16: {
        const float f = static_cast<float>(v);
        if (type == ElementType::kF32) {
          std::memcpy(out, &f, 4);
        } else {
          ConvertArray(ElementType::kF32, &f, type, out, 1);
        }
        break;
      }
      case ElementType::kC64: {
        const float c[2] = {static_cast<float>(v), 0};
        std::memcpy(out, c, 8);
        break;
      }
      case ElementType::kC128: {
        const double c[2] = {v, 0};
        std::memcpy(out, c, 16);
        break;
      }
      default: {
        const int64_t i64 = static_cast<int64_t>(v);
        ConvertArray(ElementType::kS64, &i64, type, out, 1);
      }
    }
  }
  return t;
}

std::vector<double> Values(const HostTensor& tensor) {
  const int bits = ElementTypeBits(tensor.type);
  const size_t bytes = bits <= 8 ? 1 : bits / 8;
  const size_t n = bytes == 0 ? 0 : tensor.data.size() / bytes;
  std::vector<double> values(n);
  for (size_t i = 0; i < n; ++i) {
    const char* in = &tensor.data[i * bytes];
    switch (tensor.type) {
      case ElementType::kC64: {
        float c[2];
        std::memcpy(c, in, 8);
        values[i] = c[0];
        break;
      }
      case ElementType::kC128: {
        double c[2];
        std::memcpy(c, in, 16);
        values[i] = c[0];
        break;
      }
      default:
        ConvertArray(tensor.type, in, ElementType::kF64, &values[i], 1);
    }
  }
  return values;
}

}  // namespace testing
}  // namespace sim
}  // namespace pjrtkit
