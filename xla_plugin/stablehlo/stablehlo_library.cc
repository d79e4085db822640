#include "xla_plugin/stablehlo/stablehlo_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "xla_plugin/stablehlo/ir.h"
#include "xla_plugin/stablehlo/text_parser.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

using mlir_c::MlirAttribute;
using mlir_c::MlirModule;
using mlir_c::MlirStringRef;

// Diagnostics kept per call, at most this many bytes.
constexpr size_t kMaxDiagnosticBytes = 8192;

void AppendToString(MlirStringRef text, void* user_data) {
  static_cast<std::string*>(user_data)->append(text.data, text.length);
}

MlirStringRef StringRef(const std::string& text) { return {text.data(), text.size()}; }

// "1.19.0" -> {1, 19, 0}.
bool ParseVersion(const std::string& text, std::array<int64_t, 3>* version) {
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    if (pos >= text.size() || text[pos] < '0' || text[pos] > '9') return false;
    int64_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && value < (1LL << 40)) {
      value = value * 10 + (text[pos++] - '0');
    }
    (*version)[i] = value;
    if (i < 2 && (pos >= text.size() || text[pos++] != '.')) return false;
  }
  return pos == text.size();
}

// MLIR bytecode ("ML\xefR", a version varint, then the producer string) made by StableHLO's
// portable-artifact writer: the producer starts "StableHLO_v".
bool IsPortableArtifact(std::string_view bytes) {
  if (bytes.size() < 8 || bytes.substr(0, 4) != std::string_view("ML\xefR", 4)) return false;
  return bytes.substr(4, 40).find("StableHLO_v") != std::string_view::npos;
}

}  // namespace

// One MLIR context for one call, with its diagnostics collected as text.
class StablehloLibrary::Session {
 public:
  explicit Session(const StablehloLibrary& library) : api_(library.api_) {
    context_ = api_.mlirContextCreateWithRegistry(library.registry_, /*threads=*/false);
    api_.mlirContextSetAllowUnregisteredDialects(context_, true);
    api_.mlirContextAttachDiagnosticHandler(context_, &Session::OnDiagnostic, this, nullptr);
  }
  ~Session() {
    if (module_.ptr != nullptr) api_.mlirModuleDestroy(module_);
    api_.mlirContextDestroy(context_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Reads `program` (portable artifact, bytecode or text) into module().
  Status Read(std::string_view program) {
    const std::string bytes(program);  // NUL-terminated, as MLIR's lexer expects.
    const bool portable = IsPortableArtifact(bytes);
    module_ = portable
                  ? api_.stablehloDeserializePortableArtifactNoError(StringRef(bytes), context_)
                  : api_.mlirModuleCreateParse(context_, StringRef(bytes));
    if (module_.ptr != nullptr) return OkStatus();
    std::string kind = portable ? "VHLO portable artifact"
                       : bytes.substr(0, 4) == std::string("ML\xefR", 4) ? "MLIR bytecode"
                                                                          : "MLIR text";
    return InvalidArgument("cannot read the program (" + kind + ", " +
                           std::to_string(bytes.size()) + " bytes): " +
                           (diagnostics_.empty() ? "no diagnostic" : diagnostics_));
  }

  // The module in generic op form with debug locations.
  std::string GenericText() const {
    mlir_c::MlirOpPrintingFlags flags = api_.mlirOpPrintingFlagsCreate();
    api_.mlirOpPrintingFlagsPrintGenericOpForm(flags);
    api_.mlirOpPrintingFlagsEnableDebugInfo(flags, /*enable=*/true, /*pretty_form=*/false);
    api_.mlirOpPrintingFlagsAssumeVerified(flags);  // Reading verified it.
    std::string text;
    api_.mlirOperationPrintWithFlags(api_.mlirModuleGetOperation(module_), flags, AppendToString,
                                     &text);
    api_.mlirOpPrintingFlagsDestroy(flags);
    return text;
  }

  mlir_c::MlirContext context() const { return context_; }
  MlirModule module() const { return module_; }
  const std::string& diagnostics() const { return diagnostics_; }

 private:
  static mlir_c::MlirLogicalResult OnDiagnostic(mlir_c::MlirDiagnostic diagnostic, void* data) {
    Session* session = static_cast<Session*>(data);
    std::string& out = session->diagnostics_;
    if (out.size() < kMaxDiagnosticBytes) {
      const mlir_c::Functions& api = session->api_;
      std::string text;
      api.mlirLocationPrint(api.mlirDiagnosticGetLocation(diagnostic), AppendToString, &text);
      text += api.mlirDiagnosticGetSeverity(diagnostic) == mlir_c::kError ? ": error: " : ": ";
      api.mlirDiagnosticPrint(diagnostic, AppendToString, &text);
      if (!out.empty()) out += "; ";
      out += text.substr(0, kMaxDiagnosticBytes - out.size());
    }
    return {1};
  }

  const mlir_c::Functions& api_;      // The library's functions.
  mlir_c::MlirContext context_{};     // Owned.
  MlirModule module_{};               // Owned when set.
  std::string diagnostics_;           // "loc: error: message; ...".
};

StatusOr<std::shared_ptr<const StablehloLibrary>> StablehloLibrary::Load(const std::string& path) {
  struct stat info;
  if (path.empty() || stat(path.c_str(), &info) != 0) {
    return NotFound("StableHLO library '" + path + "' not found: " + std::strerror(errno) +
                    " (torch-mlir's libTorchMLIRAggregateCAPI.so; tools/setup.sh installs it)");
  }
  // Never dlclosed: LLVM registers process-wide state (command-line options, atexit handlers)
  // that must not outlive its code; like the XLA plugins, it stays for the process's lifetime.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return FailedPrecondition("cannot load '" + path + "' as a shared library: " +
                              (error != nullptr ? error : "unknown dlopen error"));
  }
  std::shared_ptr<StablehloLibrary> library(new StablehloLibrary());
  library->path_ = path;
  library->handle_ = handle;
#define PJRTKIT_MLIR_C_RESOLVE(ret, name, params)                                             \
  library->api_.name = reinterpret_cast<decltype(library->api_.name)>(dlsym(handle, #name)); \
  if (library->api_.name == nullptr) {                                                        \
    return FailedPrecondition("'" + path + "' does not export " #name                         \
                              ", which pjrtkit's StableHLO reader calls (it expects torch-"   \
                              "mlir 20261001's libTorchMLIRAggregateCAPI.so)");               \
  }
  PJRTKIT_MLIR_C_FUNCTIONS(PJRTKIT_MLIR_C_RESOLVE)
#undef PJRTKIT_MLIR_C_RESOLVE
  const mlir_c::Functions& api = library->api_;
  StablehloVersions& versions = library->versions_;
  versions.api_version = api.stablehloGetApiVersion();
  std::string current, minimum;
  api.stablehloGetCurrentVersion(AppendToString, &current);
  api.stablehloGetMinimumVersion(AppendToString, &minimum);
  if (!ParseVersion(current, &versions.current) || !ParseVersion(minimum, &versions.minimum)) {
    return FailedPrecondition("'" + path + "' reports StableHLO versions '" + current + "' / '" +
                              minimum + "', not major.minor.patch");
  }
  library->registry_ = api.mlirDialectRegistryCreate();
  api.mlirRegisterAllDialects(library->registry_);
  api.mlirDialectHandleInsertDialect(api.mlirGetDialectHandle__stablehlo__(), library->registry_);
  return std::shared_ptr<const StablehloLibrary>(std::move(library));
}

StablehloLibrary::~StablehloLibrary() {
  if (registry_.ptr != nullptr) api_.mlirDialectRegistryDestroy(registry_);
}

StatusOr<std::string> StablehloLibrary::ToGenericText(std::string_view program) const {
  Session session(*this);
  PJRTKIT_RETURN_IF_ERROR(session.Read(program));
  return session.GenericText();
}

StatusOr<std::vector<HostTensor>> StablehloLibrary::Interpret(
    std::string_view module, const std::vector<HostTensor>& inputs) const {
  if (versions_.api_version != kInterpreterApiVersion) {
    return FailedPrecondition("Interpret's call of stablehloEvalModule was verified for StableHLO "
                              "C API " + std::to_string(kInterpreterApiVersion) + "; '" + path_ +
                              "' has " + std::to_string(versions_.api_version));
  }
  Session session(*this);
  PJRTKIT_RETURN_IF_ERROR(session.Read(module));
  // Check the inputs against main's signature: the interpreter aborts on a mismatch.
  PJRTKIT_ASSIGN_OR_RETURN(Module parsed, TextParser::Parse(session.GenericText()));
  const Function* main = parsed.FindFunction("main");
  if (main == nullptr) return InvalidArgument("Interpret: the module has no function main");
  if (main->argument_types.size() != inputs.size()) {
    return InvalidArgument("Interpret: main takes " + std::to_string(main->argument_types.size()) +
                           " arguments, " + std::to_string(inputs.size()) + " inputs given");
  }
  std::vector<MlirAttribute> arguments;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Type type;
    type.kind = Type::Kind::kTensor;
    type.element_type = inputs[i].type;
    type.dims = inputs[i].dims;
    const std::string name = type.ToString();
    if (type != main->argument_types[i]) {
      return InvalidArgument("Interpret: input " + std::to_string(i) + " is " + name +
                             ", main's argument is " + main->argument_types[i].ToString());
    }
    const int64_t count = type.NumElements();
    if (count < 0 ||
        inputs[i].data.size() != static_cast<size_t>(count) * StorageBytes(type.element_type)) {
      return InvalidArgument("Interpret: input " + std::to_string(i) + " (" + name + ") has " +
                             std::to_string(inputs[i].data.size()) + " bytes");
    }
    mlir_c::MlirType mlir_type = api_.mlirTypeParseGet(session.context(), StringRef(name));
    MlirAttribute attribute = mlir_type.ptr == nullptr ? MlirAttribute{nullptr}
        : api_.mlirDenseElementsAttrRawBufferGet(mlir_type, inputs[i].data.size(),
                                                 inputs[i].data.data());
    if (attribute.ptr == nullptr) {
      return InvalidArgument("Interpret: input " + std::to_string(i) + " (" + name +
                             ") is not a valid dense buffer: " + session.diagnostics());
    }
    arguments.push_back(attribute);
  }
  int error = 0;
  MlirAttribute results = api_.stablehloEvalModule(session.module(),
                                                   static_cast<int>(arguments.size()),
                                                   arguments.data(), "", &error);
  if (error != 0 || results.ptr == nullptr) {
    return Internal("stablehloEvalModule failed (error " + std::to_string(error) + "): " +
                    session.diagnostics());
  }
  std::vector<HostTensor> outputs;
  for (intptr_t i = 0; i < api_.mlirArrayAttrGetNumElements(results); ++i) {
    MlirAttribute result = api_.mlirArrayAttrGetElement(results, i);
    if (!api_.mlirAttributeIsADenseElements(result)) {
      return Internal("stablehloEvalModule result " + std::to_string(i) + " is not dense");
    }
    std::string type_text;
    api_.mlirTypePrint(api_.mlirAttributeGetType(result), AppendToString, &type_text);
    PJRTKIT_ASSIGN_OR_RETURN(Type type, TextParser::ParseType(type_text));
    const size_t element_bytes = StorageBytes(type.element_type);
    const int64_t count = api_.mlirElementsAttrGetNumElements(result);
    if (type.kind != Type::Kind::kTensor || element_bytes == 0 || count != type.NumElements()) {
      return Internal("stablehloEvalModule result " + std::to_string(i) + " has type " +
                      type_text + ", which Interpret does not read");
    }
    HostTensor output{type.element_type, type.dims, {}};
    const char* raw = static_cast<const char*>(api_.mlirDenseElementsAttrGetRawData(result));
    // A splat's raw data holds one element.
    const bool splat = api_.mlirDenseElementsAttrIsSplat(result);
    const size_t stored = splat ? element_bytes : element_bytes * static_cast<size_t>(count);
    if (splat) {
      for (int64_t k = 0; k < count; ++k) output.data.append(raw, element_bytes);
    } else {
      output.data.assign(raw, stored);
    }
    outputs.push_back(std::move(output));
  }
  return outputs;
}

}  // namespace stablehlo
}  // namespace pjrtkit
