// InnerApi: the inner PJRT plugin (OpenXLA's XLA:CPU or XLA:GPU), loaded with dlopen, and small
// helpers to call it.
#ifndef PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_API_H_
#define PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_API_H_

// C and C++ standard library.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

// The PJRT C API (the inner plugin's interface).
#include "xla/pjrt/c/pjrt_c_api.h"

// The pjrtkit client layer.
#include "xla_plugin/client/event.h"
#include "xla_plugin/client/status.h"
#include "xla_plugin/client/status_or.h"
#include "xla_plugin/client/types.h"
#include "xla_plugin/plugin_wrapper/inner_plugin_name.h"

// Declares `var`, a zeroed `fn##_Args` struct whose struct_size is the one this build knows.
#define PJRTKIT_INNER_ARGS(fn, var) \
  fn##_Args var{};                  \
  var.struct_size = fn##_Args_STRUCT_SIZE

// Calls inner slot `fn` with `args` (a pointer) through InnerApi `inner`; evaluates to a Status.
#define PJRTKIT_INNER_CALL(inner, fn, args) \
  (inner).Call(#fn, offsetof(PJRT_Api, fn), &PJRT_Api::fn, (args))

namespace pjrtkit {
namespace plugin_wrapper {

// The inner plugin: owns the dlopen handle and the inner `const PJRT_Api*`. Created once per client
// and shared (std::shared_ptr) by every object that calls the inner plugin, so the table stays
// valid for as long as any of them lives. Thread-safe: all members are immutable after Load.
class InnerApi : public std::enable_shared_from_this<InnerApi> {
 public:
  // dlopens `path` (absolute), checks the PJRT major version and runs PJRT_Plugin_Initialize.
  // Errors name `source` (where the path came from: "create option 'xla_cpu_plugin_path'",
  // "environment variable PJRTKIT_XLA_CPU_PLUGIN") and `plugin`: FAILED_PRECONDITION when the file
  // cannot be loaded (with dlerror's text) or is not a compatible PJRT plugin. Errors of later
  // calls name `plugin.display` ("XLA:CPU ...").
  static StatusOr<std::shared_ptr<InnerApi>> Load(const std::string& path,
                                                  const std::string& source,
                                                  const InnerPluginName& plugin);

  InnerApi(const InnerApi&) = delete;
  InnerApi& operator=(const InnerApi&) = delete;
  // The library stays loaded: XLA keeps threads and static state that make dlclose unsafe.
  ~InnerApi() = default;

  // The inner function table.
  const PJRT_Api* api() const { return api_; }
  // The path the plugin was loaded from.
  const std::string& path() const { return path_; }
  // The plugin's names; name() ("XLA:CPU") starts the text of its errors.
  const InnerPluginName& plugin() const { return plugin_; }
  const std::string& name() const { return plugin_.display; }
  // The inner plugin's PJRT C API version, "major.minor".
  std::string ApiVersionString() const;
  // `type` as the inner plugin's PJRT_Buffer_Type (the numeric values are equal), or
  // INVALID_ARGUMENT naming the type, the plugin and its version when the inner plugin's C API is
  // older than the type (XLA:CPU 0.81 knows types up to f4e2m1fn, 29: it would abort on a newer
  // one).
  StatusOr<PJRT_Buffer_Type> ToInnerType(ElementType type) const;
  // The largest element type the inner plugin's PJRT C API version has.
  ElementType max_element_type() const;

  // Calls inner slot `slot` (at byte `offset` of PJRT_Api) on `args`; UNIMPLEMENTED when the
  // inner table is too short for the slot or the slot is null. Use PJRTKIT_INNER_CALL.
  template <typename Args>
  Status Call(const char* name, size_t offset, PJRT_Error* (*PJRT_Api::*slot)(Args*),
              Args* args) const {
    if (offset + sizeof(void*) > api_->struct_size || api_->*slot == nullptr) {
      return Unimplemented(std::string(name) + " is not provided by the " + plugin_.display +
                           " plugin at " +
                           path_ + " (PJRT C API " + ApiVersionString() + ")");
    }
    PJRT_Error* error = (api_->*slot)(args);
    if (error == nullptr) return Status();  // The common case, inline.
    return ToStatus(error, name);
  }

  // Turns an inner error into a Status with the inner code and "<name()> <context>: <message>",
  // and destroys the inner error. nullptr is OK.
  Status ToStatus(PJRT_Error* error, const char* context) const;

  // An Event that becomes ready with `event`'s status. Takes ownership of `event` (destroyed
  // before returning). An inner event that is already ready (XLA:CPU runs small programs and
  // copies inline) is read at once and gives ready_event() when OK, with no allocation; otherwise
  // an inner PJRT_Event_OnReady callback sets the returned Event. nullptr gives ready_event().
  // `context` (a string literal: it must outlive the event) names the operation in errors.
  std::shared_ptr<Event> WrapEvent(PJRT_Event* event, const char* context) const;
  // One event, ready with OK, shared by everything that is known to be done.
  const std::shared_ptr<Event>& ready_event() const { return ready_event_; }

  // The inner plugin's PJRT_Plugin_Attributes, converted.
  StatusOr<AttributeMap> PluginAttributes() const;

  // Converts inner named values (attributes, cost analysis) to an AttributeMap. A value whose
  // type this build's header does not name is left out (the others are kept); null arrays with
  // a nonzero size are an Internal error.
  static StatusOr<AttributeMap> ToAttributeMap(const PJRT_NamedValue* values, size_t count);
  // `options` as PJRT_NamedValues for the inner plugin (create options), pointing into `options`,
  // which must outlive them.
  static std::vector<PJRT_NamedValue> ToNamedValues(const AttributeMap& options);

  // Destroy helpers for inner handles; errors are dropped (nothing can be done about them).
  void DestroyClient(PJRT_Client* client) const;
  void DestroyBuffer(PJRT_Buffer* buffer) const;
  void DestroyEvent(PJRT_Event* event) const;
  void DestroyExecutable(PJRT_Executable* executable) const;
  void DestroyLoadedExecutable(PJRT_LoadedExecutable* executable) const;

 private:
  InnerApi(void* handle, const PJRT_Api* api, std::string path, InnerPluginName plugin);

  // PJRT_Plugin_Initialize, called once by Load.
  Status Initialize();

  void* handle_;          // dlopen handle (never closed; see the destructor).
  const PJRT_Api* api_;   // The inner function table, owned by the library.
  std::string path_;      // Where the library was loaded from.
  InnerPluginName plugin_;  // Its names.
  const std::shared_ptr<Event> ready_event_ = Event::CreateReady();  // See ready_event().
};

// Converts an element type the inner plugin reported to pjrtkit's (the numeric values are equal).
StatusOr<ElementType> FromInnerType(PJRT_Buffer_Type type);

}  // namespace plugin_wrapper
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_PLUGIN_WRAPPER_INNER_API_H_
