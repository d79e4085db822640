#include "tests/fuzz/fuzz_support.h"

#include "tests/conformance/test_data.h"

// C and C++ standard library.
#include <cstdio>
#include <cstdlib>
#include <cstring>

// The plugin's one exported symbol (xla_plugin/plugin.cc, linked into the fuzzer).
extern "C" const PJRT_Api* GetPjrtApi();

namespace pjrtkit_fuzz {
namespace {

// A PJRT_NamedValue of type int64.
PJRT_NamedValue IntOption(const char* name, int64_t value) {
  PJRT_NamedValue option{};
  option.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  option.name = name;
  option.name_size = std::strlen(name);
  option.type = PJRT_NamedValue_kInt64;
  option.int64_value = value;
  option.value_size = 1;
  return option;
}

}  // namespace

std::string_view CompileOptions1x1() {
  return std::string_view(reinterpret_cast<const char*>(pjrt_conformance::kCompileOptions1x1),
                          pjrt_conformance::kCompileOptions1x1Size);
}

std::string_view AddOneMlir() { return pjrt_conformance::kAddOneF32; }

FuzzSupport& FuzzSupport::Get() {
  static FuzzSupport* const support = new FuzzSupport();  // Never destroyed: threads may use it.
  return *support;
}

FuzzSupport::FuzzSupport() : api_(GetPjrtApi()) {
  Require(api_ != nullptr, "GetPjrtApi() returned null");
  PJRT_Plugin_Initialize_Args args{};
  args.struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE;
  Require(!Consume(api_->PJRT_Plugin_Initialize(&args), "PJRT_Plugin_Initialize"),
          "PJRT_Plugin_Initialize failed");
}

void FuzzSupport::Require(bool condition, const std::string& what) {
  if (condition) return;
  std::fprintf(stderr, "pjrtkit fuzz oracle: %s\n", what.c_str());
  std::abort();
}

bool FuzzSupport::Consume(PJRT_Error* error, const char* call) const {
  if (error == nullptr) return false;
  PJRT_Error_Message_Args message{};
  message.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  message.error = error;
  api_->PJRT_Error_Message(&message);
  PJRT_Error_GetCode_Args code{};
  code.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  code.error = error;
  PJRT_Error* code_error = api_->PJRT_Error_GetCode(&code);
  Require(code_error == nullptr, std::string(call) + ": PJRT_Error_GetCode failed");
  Require(code.code != PJRT_Error_Code_OK, std::string(call) + ": an error with code OK");
  Require(message.message != nullptr && message.message_size > 0,
          std::string(call) + ": an error without a message");
  PJRT_Error_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  destroy.error = error;
  api_->PJRT_Error_Destroy(&destroy);
  return true;
}

PJRT_Client* FuzzSupport::Client() {
  if (client_ != nullptr) return client_;
  const char* plugin = std::getenv("PJRTKIT_XLA_CPU_PLUGIN");
  Require(plugin != nullptr && *plugin != '\0',
          "set PJRTKIT_XLA_CPU_PLUGIN to the absolute path of xla_cpu_pjrt.so");
  PJRT_NamedValue options[] = {IntOption("device_count", 2),
                               IntOption("host_buffer_cache_mib", 0)};
  PJRT_Client_Create_Args args{};
  args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  args.create_options = options;
  args.num_options = 2;
  Require(!Consume(api_->PJRT_Client_Create(&args), "PJRT_Client_Create"),
          "the shared client could not be created");
  client_ = args.client;
  return client_;
}

void FuzzSupport::DestroyLoaded(PJRT_LoadedExecutable* loaded) const {
  PJRT_LoadedExecutable_Destroy_Args args{};
  args.struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE;
  args.executable = loaded;
  Require(!Consume(api_->PJRT_LoadedExecutable_Destroy(&args), "PJRT_LoadedExecutable_Destroy"),
          "PJRT_LoadedExecutable_Destroy failed");
}

std::string FuzzSupport::Serialize(PJRT_LoadedExecutable* loaded) const {
  PJRT_LoadedExecutable_GetExecutable_Args get{};
  get.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  get.loaded_executable = loaded;
  if (Consume(api_->PJRT_LoadedExecutable_GetExecutable(&get),
              "PJRT_LoadedExecutable_GetExecutable")) {
    return "";
  }
  PJRT_Executable_Serialize_Args serialize{};
  serialize.struct_size = PJRT_Executable_Serialize_Args_STRUCT_SIZE;
  serialize.executable = get.executable;
  std::string bytes;
  if (!Consume(api_->PJRT_Executable_Serialize(&serialize), "PJRT_Executable_Serialize")) {
    bytes.assign(serialize.serialized_bytes, serialize.serialized_bytes_size);
    serialize.serialized_executable_deleter(serialize.serialized_executable);
  }
  PJRT_Executable_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE;
  destroy.executable = get.executable;
  Require(!Consume(api_->PJRT_Executable_Destroy(&destroy), "PJRT_Executable_Destroy"),
          "PJRT_Executable_Destroy failed");
  return bytes;
}

bool FuzzSupport::CompileAndDestroy(std::string_view code, const char* format,
                                    std::string_view compile_options) {
  bool compiled = false;
  (void)Compile(code, format, compile_options, &compiled);
  return compiled;
}

std::string FuzzSupport::CompileAndSerialize(std::string_view code, const char* format,
                                             std::string_view compile_options) {
  bool compiled = false;
  return Compile(code, format, compile_options, &compiled);
}

std::string FuzzSupport::Compile(std::string_view code, const char* format,
                                 std::string_view compile_options, bool* compiled) {
  std::string owned_code(code);  // PJRT_Program::code is a char*.
  PJRT_Program program{};
  program.struct_size = PJRT_Program_STRUCT_SIZE;
  program.code = owned_code.data();
  program.code_size = owned_code.size();
  program.format = format;
  program.format_size = std::strlen(format);
  PJRT_Client_Compile_Args args{};
  args.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
  args.client = Client();
  args.program = &program;
  args.compile_options = compile_options.data();
  args.compile_options_size = compile_options.size();
  if (Consume(api_->PJRT_Client_Compile(&args), "PJRT_Client_Compile")) return "";
  Require(args.executable != nullptr, "PJRT_Client_Compile succeeded without an executable");
  *compiled = true;
  std::string bytes = Serialize(args.executable);
  DestroyLoaded(args.executable);
  return bytes;
}

}  // namespace pjrtkit_fuzz
