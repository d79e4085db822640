// What a device receives when someone registers an XLA FFI handler or FFI type with the plugin
// (through the PJRT FFI extension; see xla_plugin/c_api/ffi_registry.h). Plain data, no PJRT types.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_FFI_REGISTRATION_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_FFI_REGISTRATION_H_

#include <cstdint>
#include <string>

namespace pjrtkit {

// A typed XLA FFI handler for custom calls named `target_name`.
struct FfiHandlerRegistration {
  std::string target_name;    // Custom-call target name.
  std::string platform_name;  // As given by the caller (JAX passes the plugin's platform name).
  void* handler = nullptr;    // XLA_FFI_Handler* (the execute stage); never null.
  uint32_t traits = 0;        // XLA_FFI_Handler_TraitsBits.
};

// An FFI type (user data / state objects passed to handlers), with its id already fixed.
struct FfiTypeRegistration {
  std::string type_name;                   // Unique type name.
  int64_t type_id = 0;                     // Nonzero: the id every client must use for it.
  void (*deleter)(void* object) = nullptr;  // Optional.
  void* serialize = nullptr;               // Optional; passed through.
  void* deserialize = nullptr;             // Optional; passed through.
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_FFI_REGISTRATION_H_
