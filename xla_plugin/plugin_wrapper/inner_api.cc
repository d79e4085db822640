#include "xla_plugin/plugin_wrapper/inner_api.h"

// dlopen/dlsym are in glibc's libc since 2.34: nothing extra to link.
#include <dlfcn.h>

#include <utility>
#include <vector>

#include "xla_plugin/abi/raw_enum.h"

namespace pjrtkit {
namespace plugin_wrapper {
namespace {

// The numeric values of pjrtkit's enums equal the PJRT C API's; spot-check the ends.
static_assert(static_cast<int>(ElementType::kPred) == PJRT_Buffer_Type_PRED, "ElementType");
static_assert(static_cast<int>(ElementType::kBF16) == PJRT_Buffer_Type_BF16, "ElementType");
static_assert(static_cast<int>(ElementType::kF6E3M2FN) == PJRT_Buffer_Type_F6E3M2FN, "ElementType");
static_assert(static_cast<int>(StatusCode::kUnauthenticated) == PJRT_Error_Code_UNAUTHENTICATED,
              "StatusCode");
static_assert(static_cast<int>(HostBufferSemantics::kMutableZeroCopy) ==
                  PJRT_HostBufferSemantics_kMutableZeroCopy,
              "HostBufferSemantics");

// What an inner OnReady callback needs: the table (to read the error) and the Event to set.
struct OnReadyContext {
  std::shared_ptr<const InnerApi> inner;  // Keeps the table alive until the callback ran.
  std::shared_ptr<Event> event;           // Set by the callback.
  const char* context;                    // Names the operation in error messages (a literal).
};

// Inner PJRT_Event_OnReady callback: owns `error` and the context.
void OnInnerEventReady(PJRT_Error* error, void* user_arg) {
  std::unique_ptr<OnReadyContext> ctx(static_cast<OnReadyContext*>(user_arg));
  ctx->event->Set(ctx->inner->ToStatus(error, ctx->context));
}

}  // namespace

StatusOr<std::shared_ptr<InnerApi>> InnerApi::Load(const std::string& path,
                                                   const std::string& source,
                                                   const InnerPluginName& plugin) {
  const std::string what = source + " ('" + path + "')";
  if (path.empty() || path[0] != '/') {
    return InvalidArgument(what + " must be the absolute path of OpenXLA's " + plugin.display +
                           " PJRT plugin (" + plugin.file + ")");
  }
  dlerror();  // Clears an old error.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return FailedPrecondition(what + ": cannot load the " + plugin.display + " plugin: " +
                              (error != nullptr ? error : "unknown dlopen error"));
  }
  using GetPjrtApiFn = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
  if (get_api == nullptr) {
    return FailedPrecondition(what + " is not a PJRT plugin: it has no GetPjrtApi symbol");
  }
  const PJRT_Api* api = get_api();
  if (api == nullptr || api->struct_size < PJRT_STRUCT_SIZE(PJRT_Api, PJRT_Client_Compile)) {
    return FailedPrecondition(what + ": GetPjrtApi returned no usable PJRT_Api table");
  }
  if (api->pjrt_api_version.major_version != PJRT_API_MAJOR) {
    return FailedPrecondition(what + ": the plugin implements PJRT C API " +
                              std::to_string(api->pjrt_api_version.major_version) + "." +
                              std::to_string(api->pjrt_api_version.minor_version) +
                              "; pjrtkit needs major version " + std::to_string(PJRT_API_MAJOR));
  }
  std::shared_ptr<InnerApi> inner(new InnerApi(handle, api, path, plugin));
  Status init = inner->Initialize();
  if (!init.ok()) return Status(init.code(), what + ": " + init.message());
  return inner;
}

InnerApi::InnerApi(void* handle, const PJRT_Api* api, std::string path, InnerPluginName plugin)
    : handle_(handle), api_(api), path_(std::move(path)), plugin_(std::move(plugin)) {}

std::string InnerApi::ApiVersionString() const {
  return std::to_string(api_->pjrt_api_version.major_version) + "." +
         std::to_string(api_->pjrt_api_version.minor_version);
}

Status InnerApi::Initialize() {
  PJRTKIT_INNER_ARGS(PJRT_Plugin_Initialize, args);
  return PJRTKIT_INNER_CALL(*this, PJRT_Plugin_Initialize, &args);
}

Status InnerApi::ToStatus(PJRT_Error* error, const char* context) const {
  if (error == nullptr) return OkStatus();
  PJRT_Error_Message_Args message{};
  message.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  message.error = error;
  api_->PJRT_Error_Message(&message);
  std::string text = message.message != nullptr
                         ? std::string(message.message, message.message_size)
                         : std::string("(no message)");
  PJRT_Error_GetCode_Args code_args{};
  code_args.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  code_args.error = error;
  StatusCode code = StatusCode::kUnknown;
  if (api_->PJRT_Error_GetCode(&code_args) == nullptr) {
    const int value = static_cast<int>(code_args.code);
    if (value > 0 && value <= static_cast<int>(StatusCode::kUnauthenticated)) {
      code = static_cast<StatusCode>(value);
    }
  }
  PJRT_Error_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  destroy.error = error;
  api_->PJRT_Error_Destroy(&destroy);
  return Status(code, name() + " " + std::string(context) + ": " + text);
}

std::shared_ptr<Event> InnerApi::WrapEvent(PJRT_Event* event, const char* context) const {
  if (event == nullptr) return ready_event_;
  PJRTKIT_INNER_ARGS(PJRT_Event_IsReady, ready_args);
  ready_args.event = event;
  if (PJRTKIT_INNER_CALL(*this, PJRT_Event_IsReady, &ready_args).ok() && ready_args.is_ready) {
    PJRTKIT_INNER_ARGS(PJRT_Event_Error, error_args);
    error_args.event = event;
    // PJRT_Event_Error returns the event's error (ours to destroy), or null when it is OK.
    Status status = ToStatus(api_->PJRT_Event_Error(&error_args), context);
    DestroyEvent(event);
    return status.ok() ? ready_event_ : Event::CreateReady(std::move(status));
  }
  std::shared_ptr<Event> ours = Event::Create();
  auto* ctx = new OnReadyContext{shared_from_this(), ours, context};
  PJRTKIT_INNER_ARGS(PJRT_Event_OnReady, args);
  args.event = event;
  args.callback = &OnInnerEventReady;
  args.user_arg = ctx;
  Status status = PJRTKIT_INNER_CALL(*this, PJRT_Event_OnReady, &args);
  if (!status.ok()) {
    delete ctx;  // The callback was not registered, so it will not run.
    ours->Set(status);
  }
  DestroyEvent(event);  // The inner event's state is ref-counted; the callback still runs.
  return ours;
}

StatusOr<AttributeMap> InnerApi::PluginAttributes() const {
  PJRTKIT_INNER_ARGS(PJRT_Plugin_Attributes, args);
  PJRTKIT_RETURN_IF_ERROR(PJRTKIT_INNER_CALL(*this, PJRT_Plugin_Attributes, &args));
  return ToAttributeMap(args.attributes, args.num_attributes);
}

StatusOr<AttributeMap> InnerApi::ToAttributeMap(const PJRT_NamedValue* values, size_t count) {
  AttributeMap out;
  if (count > 0 && values == nullptr) {
    return Internal("the inner plugin returned " + std::to_string(count) +
                    " named values and a null array");
  }
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& v = values[i];
    if (v.name == nullptr && v.name_size > 0) {
      return Internal("the inner plugin returned named value " + std::to_string(i) +
                      " with a null name");
    }
    std::string name(v.name == nullptr ? "" : v.name, v.name_size);
    switch (RawEnumValue(v.type)) {
      case PJRT_NamedValue_kString:
        if (v.string_value == nullptr && v.value_size > 0) {
          return Internal("the inner plugin returned string '" + name + "' with a null value");
        }
        out[name] = std::string(v.string_value == nullptr ? "" : v.string_value, v.value_size);
        break;
      case PJRT_NamedValue_kInt64:
        out[name] = v.int64_value;
        break;
      case PJRT_NamedValue_kInt64List:
        if (v.int64_array_value == nullptr && v.value_size > 0) {
          return Internal("the inner plugin returned int64 list '" + name + "' with a null array");
        }
        out[name] = v.value_size == 0 ? std::vector<int64_t>()
                                       : std::vector<int64_t>(v.int64_array_value,
                                                              v.int64_array_value + v.value_size);
        break;
      case PJRT_NamedValue_kFloat:
        out[name] = v.float_value;
        break;
      case PJRT_NamedValue_kBool:
        out[name] = v.bool_value;
        break;
      default:
        // A value type newer than this build's header (an inner plugin ahead of ours): left out,
        // so the values this build can name still reach the framework.
        break;
    }
  }
  return out;
}

std::vector<PJRT_NamedValue> InnerApi::ToNamedValues(const AttributeMap& options) {
  std::vector<PJRT_NamedValue> values;
  values.reserve(options.size());
  for (const auto& [name, value] : options) {
    PJRT_NamedValue v{};
    v.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    v.name = name.data();
    v.name_size = name.size();
    if (const auto* s = std::get_if<std::string>(&value)) {
      v.type = PJRT_NamedValue_kString;
      v.string_value = s->data();
      v.value_size = s->size();
    } else if (const auto* i = std::get_if<int64_t>(&value)) {
      v.type = PJRT_NamedValue_kInt64;
      v.int64_value = *i;
      v.value_size = 1;
    } else if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) {
      v.type = PJRT_NamedValue_kInt64List;
      v.int64_array_value = list->data();
      v.value_size = list->size();
    } else if (const auto* f = std::get_if<float>(&value)) {
      v.type = PJRT_NamedValue_kFloat;
      v.float_value = *f;
      v.value_size = 1;
    } else if (const auto* b = std::get_if<bool>(&value)) {
      v.type = PJRT_NamedValue_kBool;
      v.bool_value = *b;
      v.value_size = 1;
    }
    values.push_back(v);
  }
  return values;
}

void InnerApi::DestroyClient(PJRT_Client* client) const {
  if (client == nullptr) return;
  PJRTKIT_INNER_ARGS(PJRT_Client_Destroy, args);
  args.client = client;
  PJRTKIT_INNER_CALL(*this, PJRT_Client_Destroy, &args);
}

void InnerApi::DestroyBuffer(PJRT_Buffer* buffer) const {
  if (buffer == nullptr) return;
  PJRTKIT_INNER_ARGS(PJRT_Buffer_Destroy, args);
  args.buffer = buffer;
  PJRTKIT_INNER_CALL(*this, PJRT_Buffer_Destroy, &args);
}

void InnerApi::DestroyEvent(PJRT_Event* event) const {
  if (event == nullptr) return;
  PJRTKIT_INNER_ARGS(PJRT_Event_Destroy, args);
  args.event = event;
  PJRTKIT_INNER_CALL(*this, PJRT_Event_Destroy, &args);
}

void InnerApi::DestroyExecutable(PJRT_Executable* executable) const {
  if (executable == nullptr) return;
  PJRTKIT_INNER_ARGS(PJRT_Executable_Destroy, args);
  args.executable = executable;
  PJRTKIT_INNER_CALL(*this, PJRT_Executable_Destroy, &args);
}

void InnerApi::DestroyLoadedExecutable(PJRT_LoadedExecutable* executable) const {
  if (executable == nullptr) return;
  PJRTKIT_INNER_ARGS(PJRT_LoadedExecutable_Destroy, args);
  args.executable = executable;
  PJRTKIT_INNER_CALL(*this, PJRT_LoadedExecutable_Destroy, &args);
}

ElementType InnerApi::max_element_type() const {
  // PJRT C API 0.81 ends PJRT_Buffer_Type at F4E2M1FN (29); the 0.114 header, the oldest newer
  // one pjrtkit has read, at F6E3M2FN (33), the last type pjrtkit knows. Versions in between are
  // taken at 0.81's list.
  return api_->pjrt_api_version.minor_version >= 114 || api_->pjrt_api_version.major_version > 0
             ? static_cast<ElementType>(kMaxElementType)
             : ElementType::kF4E2M1FN;
}

StatusOr<PJRT_Buffer_Type> InnerApi::ToInnerType(ElementType type) const {
  if (static_cast<int>(type) > static_cast<int>(max_element_type())) {
    return InvalidArgument(std::string("element type ") + ElementTypeName(type) + " (" +
                           std::to_string(static_cast<int>(type)) + ") is not supported by the " +
                           plugin_.display + " plugin at " + path_ + ": its PJRT C API " +
                           ApiVersionString() + " knows element types up to " +
                           ElementTypeName(max_element_type()));
  }
  return static_cast<PJRT_Buffer_Type>(type);
}

StatusOr<ElementType> FromInnerType(PJRT_Buffer_Type type) {
  const int value = static_cast<int>(type);
  if (value <= 0 || value > kMaxElementType) {
    return Internal("the inner plugin reported element type " + std::to_string(value) +
                    ", which pjrtkit does not know");
  }
  return static_cast<ElementType>(value);
}

}  // namespace plugin_wrapper
}  // namespace pjrtkit
