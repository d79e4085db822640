#include "xla_plugin/c_api/testing/fake_executable.h"

// C++ standard library.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <sstream>
#include <utility>

// pjrtkit.
#include "xla_plugin/c_api/testing/fake_buffer.h"
#include "xla_plugin/c_api/testing/fake_client.h"

namespace pjrtkit {
namespace testing {
namespace {

constexpr char kMagic[] = "FAKEEXE1";  // First line of a serialized FakeExecutable.

// The ElementType named `name` ("f32", ...), or kInvalid.
ElementType TypeFromName(const std::string& name) {
  for (int t = 1; t <= kMaxElementType; ++t) {
    if (name == ElementTypeName(static_cast<ElementType>(t))) return static_cast<ElementType>(t);
  }
  return ElementType::kInvalid;
}

// "f32[2,3]".
std::string ShapeString(ElementType type, const std::vector<int64_t>& dims) {
  std::string out = std::string(ElementTypeName(type)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

// Splits "a=1;b=2" into pairs and applies them.
Status ParseOptions(const std::string& text, std::string* name, int* replicas, bool* donate,
                    int* topology_devices, std::string* output_layout, bool* short_logical_ids,
                    std::string* shardings) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ';')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return InvalidArgument("fake: bad compile option '" + item + "'");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "replicas") {
      *replicas = std::atoi(value.c_str());
    } else if (key == "donate") {
      *donate = value == "1";
    } else if (key == "name") {
      *name = value;
    } else if (key == "topology_devices") {
      *topology_devices = std::atoi(value.c_str());
    } else if (key == "output_layout") {
      if (value != "row" && value != "column" && value != "invalid") {
        return InvalidArgument("fake: output_layout is '" + value +
                               "', accepted: row, column, invalid");
      }
      *output_layout = value;
    } else if (key == "logical_ids") {
      *short_logical_ids = value == "short";
    } else if (key == "shardings") {
      if (value != "none" && value != "reported" && value != "short") {
        return InvalidArgument("fake: shardings is '" + value +
                               "', accepted: none, reported, short");
      }
      *shardings = value;
    } else {
      return InvalidArgument("fake: unknown compile option '" + key + "'");
    }
  }
  if (*replicas < 1) return InvalidArgument("fake: replicas must be >= 1");
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<FakeShape>> ParseSignature(const std::string& text) {
  std::vector<FakeShape> out;
  std::stringstream in(text);
  std::string token;
  while (in >> token) {
    const size_t open = token.find('[');
    if (open == std::string::npos || token.back() != ']') {
      return InvalidArgument("fake: cannot parse '" + token + "' (want e.g. f32[2,3])");
    }
    FakeShape shape;
    shape.type = TypeFromName(token.substr(0, open));
    if (shape.type == ElementType::kInvalid) {
      return InvalidArgument("fake: unknown element type in '" + token + "'");
    }
    std::stringstream dims(token.substr(open + 1, token.size() - open - 2));
    std::string dim;
    while (std::getline(dims, dim, ',')) {
      if (dim.empty() || dim.find_first_not_of("0123456789") != std::string::npos) {
        return InvalidArgument("fake: bad dimension '" + dim + "' in '" + token + "'");
      }
      shape.dims.push_back(std::stoll(dim));
    }
    out.push_back(std::move(shape));
  }
  if (out.empty()) return InvalidArgument("fake: the program signature is empty");
  return out;
}

// ---- FakeExecutable ---------------------------------------------------------------------------

StatusOr<std::shared_ptr<FakeExecutable>> FakeExecutable::Compile(const Program& program,
                                                                  const std::string& options) {
  if (program.format.empty()) return InvalidArgument("fake: the program has no format");
  std::shared_ptr<FakeExecutable> executable(new FakeExecutable());
  executable->program_ = program;
  executable->options_ = options;
  PJRTKIT_RETURN_IF_ERROR(
      ParseOptions(options, &executable->name_, &executable->replicas_, &executable->donate_,
                   &executable->topology_devices_, &executable->output_layout_,
                   &executable->short_logical_ids_, &executable->shardings_));
  PJRTKIT_ASSIGN_OR_RETURN(executable->signature_, ParseSignature(program.code));
  return executable;
}

StatusOr<std::shared_ptr<FakeExecutable>> FakeExecutable::Deserialize(
    const std::string& bytes, const std::optional<std::string>& options_override) {
  std::stringstream in(bytes);
  std::string magic, format, options;
  if (!std::getline(in, magic) || magic != kMagic || !std::getline(in, format) ||
      !std::getline(in, options)) {
    return InvalidArgument("fake: not a serialized FakeExecutable");
  }
  std::string code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return Compile(Program{format, code}, options_override.value_or(options));
}

// Output (parameter) i: replicated (empty) for even i, xla.OpSharding MANUAL for odd i.
std::vector<std::string> FakeShardings(size_t count) {
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) out.push_back(i % 2 ? std::string("\x08\x04", 2) : "");
  return out;
}

StatusOr<std::optional<std::vector<std::string>>> FakeExecutable::parameter_shardings() const {
  if (shardings_ == "none") return std::optional<std::vector<std::string>>();
  return std::optional<std::vector<std::string>>(FakeShardings(signature_.size()));
}

StatusOr<std::optional<std::vector<std::string>>> FakeExecutable::output_shardings() const {
  if (shardings_ == "none") return std::optional<std::vector<std::string>>();
  return std::optional<std::vector<std::string>>(
      FakeShardings(signature_.size() - (shardings_ == "short" ? 1 : 0)));
}

StatusOr<std::vector<ElementType>> FakeExecutable::output_element_types() const {
  std::vector<ElementType> out;
  for (const FakeShape& s : signature_) out.push_back(s.type);
  return out;
}

StatusOr<std::vector<std::vector<int64_t>>> FakeExecutable::output_dimensions() const {
  std::vector<std::vector<int64_t>> out;
  for (const FakeShape& s : signature_) out.push_back(s.dims);
  return out;
}

MemoryLayout FakeExecutable::OutputLayout(size_t rank) const {
  MemoryLayout layout = RowMajorLayout(rank);
  if (output_layout_ == "column") {
    std::reverse(layout.minor_to_major.begin(), layout.minor_to_major.end());
  } else if (output_layout_ == "invalid") {
    layout.minor_to_major.assign(rank + 1, 0);  // Not a permutation of the dimensions.
  }
  return layout;
}

StatusOr<std::vector<MemoryLayout>> FakeExecutable::output_layouts() const {
  if (output_layout_ == "row") return Executable::output_layouts();  // The client layer's default.
  std::vector<MemoryLayout> out;
  for (const FakeShape& s : signature_) out.push_back(OutputLayout(s.dims.size()));
  return out;
}

StatusOr<std::vector<std::string>> FakeExecutable::output_memory_kinds() const {
  return std::vector<std::string>(signature_.size(), "device");
}

StatusOr<std::string> FakeExecutable::fingerprint() const {
  const size_t hash =
      std::hash<std::string>()(program_.format + "|" + program_.code + "|" + options_);
  char text[32];
  std::snprintf(text, sizeof(text), "fake-%016zx", hash);
  return std::string(text);
}

StatusOr<Program> FakeExecutable::optimized_program() const {
  return Program{"fake", "optimized(" + program_.code + ")"};
}

StatusOr<std::string> FakeExecutable::Serialize() const {
  return std::string(kMagic) + "\n" + program_.format + "\n" + options_ + "\n" + program_.code;
}

int64_t FakeExecutable::SizeOfGeneratedCodeInBytes() const {
  return static_cast<int64_t>(program_.code.size());
}

StatusOr<CompiledMemoryStats> FakeExecutable::GetCompiledMemoryStats() const {
  int64_t bytes = 0;
  for (const FakeShape& s : signature_)
    bytes += static_cast<int64_t>(DenseByteSize(s.type, s.dims));
  CompiledMemoryStats stats;
  stats.generated_code_size_in_bytes = SizeOfGeneratedCodeInBytes();
  stats.argument_size_in_bytes = bytes;
  stats.output_size_in_bytes = bytes;
  stats.temp_size_in_bytes = 7;
  stats.host_temp_size_in_bytes = 11;
  stats.peak_memory_in_bytes = 2 * bytes + 7;
  stats.total_size_in_bytes = stats.generated_code_size_in_bytes + 2 * bytes + 7;
  stats.total_allocation_bytes = 2 * bytes;
  stats.indefinite_allocations = 3;
  stats.peak_unpadded_heap_bytes = 5;
  return stats;
}

StatusOr<std::vector<MemoryLayout>> FakeExecutable::parameter_layouts() const {
  std::vector<MemoryLayout> out;
  for (const FakeShape& s : signature_) out.push_back(OutputLayout(s.dims.size()));
  return out;
}

StatusOr<std::vector<std::string>> FakeExecutable::parameter_memory_kinds() const {
  return std::vector<std::string>(signature_.size(), "device");
}

StatusOr<std::string> FakeExecutable::compile_options() const { return options_; }

StatusOr<AttributeMap> FakeExecutable::GetCostAnalysis() const {
  int64_t bytes = 0;
  for (const FakeShape& s : signature_)
    bytes += static_cast<int64_t>(DenseByteSize(s.type, s.dims));
  return AttributeMap{{"flops", 0.0f}, {"bytes accessed", static_cast<float>(2 * bytes)}};
}

// ---- FakeLoadedExecutable ---------------------------------------------------------------------

StatusOr<std::unique_ptr<LoadedExecutable>> FakeLoadedExecutable::Load(
    FakeClient* client, std::shared_ptr<FakeExecutable> executable) {
  const std::vector<Device*>& available = client->addressable_devices();
  if (static_cast<size_t>(executable->num_replicas()) > available.size()) {
    return InvalidArgument("fake: " + std::to_string(executable->num_replicas()) +
                           " replicas but only " + std::to_string(available.size()) + " devices");
  }
  std::unique_ptr<FakeLoadedExecutable> loaded(new FakeLoadedExecutable());
  loaded->client_ = client;
  loaded->devices_.assign(available.begin(), available.begin() + executable->num_replicas());
  loaded->executable_ = std::move(executable);
  return std::unique_ptr<LoadedExecutable>(std::move(loaded));
}

StatusOr<ExecuteResult> FakeLoadedExecutable::Execute(
    const std::vector<std::vector<Buffer*>>& arguments, const ExecuteOptions& options) {
  if (IsDeleted()) return FailedPrecondition("fake: the executable was deleted");
  std::vector<Device*> devices = devices_;
  if (options.execute_device != nullptr) devices = {options.execute_device};
  if (arguments.size() != devices.size()) {
    return InvalidArgument("fake: " + std::to_string(arguments.size()) + " argument lists for " +
                           std::to_string(devices.size()) + " devices");
  }
  const std::vector<FakeShape>& signature = executable_->signature();
  for (const std::vector<Buffer*>& args : arguments) {
    if (args.size() != signature.size()) {
      return InvalidArgument("fake: expected " + std::to_string(signature.size()) +
                             " arguments, got " + std::to_string(args.size()));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i]->element_type() != signature[i].type ||
          args[i]->dimensions() != signature[i].dims) {
        return InvalidArgument("fake: argument " + std::to_string(i) + " is " +
                               ShapeString(args[i]->element_type(), args[i]->dimensions()) +
                               ", expected " + ShapeString(signature[i].type, signature[i].dims));
      }
    }
  }
  client_->RecordExecute(options.launch_id, options.non_donatable_input_indices);
  for (Device* device : devices) static_cast<FakeDevice*>(device)->RecordLaunch(options.launch_id);
  client_->RecordContext(options.context);
  ExecuteResult result;
  for (size_t d = 0; d < devices.size(); ++d) {
    std::vector<std::unique_ptr<Buffer>> outputs;
    for (Buffer* arg : arguments[d]) {
      PJRTKIT_ASSIGN_OR_RETURN(std::unique_ptr<Buffer> copy, arg->CopyToDevice(devices[d]));
      if (executable_->output_layout() != "row") {
        static_cast<FakeBuffer*>(copy.get())->set_layout(
            executable_->OutputLayout(copy->dimensions().size()));
      }
      outputs.push_back(std::move(copy));
    }
    result.outputs.push_back(std::move(outputs));
    if (options.want_completion_events) result.completion.push_back(Event::CreateReady());
  }
  if (executable_->donate()) {
    for (const std::vector<Buffer*>& args : arguments) {
      for (size_t i = 0; i < args.size(); ++i) {
        if (options.non_donatable_input_indices.count(static_cast<int64_t>(i)) == 0) {
          static_cast<FakeBuffer*>(args[i])->Donate();
        }
      }
    }
  }
  return result;
}

StatusOr<std::string> FakeLoadedExecutable::SerializedDeviceAssignment() const {
  std::string ids;
  for (const Device* d : devices_) {
    ids += (ids.empty() ? "" : ",") + std::to_string(d->description().id());
  }
  return "replicas=" + std::to_string(devices_.size()) + " partitions=1 devices=" + ids;
}

StatusOr<std::vector<LogicalDeviceId>> FakeLoadedExecutable::addressable_device_logical_ids()
    const {
  std::vector<LogicalDeviceId> out;
  for (size_t i = 0; i < devices_.size(); ++i) {
    LogicalDeviceId id;
    id.replica = static_cast<int>(i);
    out.push_back(id);
  }
  if (executable_->short_logical_ids() && !out.empty()) out.pop_back();
  return out;
}

}  // namespace testing
}  // namespace pjrtkit
