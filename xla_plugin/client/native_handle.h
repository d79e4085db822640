// NativeHandle: the object of another PJRT plugin that a device's object stands for.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_NATIVE_HANDLE_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_NATIVE_HANDLE_H_

namespace pjrtkit {

// A device built on another PJRT plugin (the reference devices wrap OpenXLA's) names, for each of
// its clients, devices, memories, buffers, executables and topologies, the object of that plugin
// behind it: the C-API layer forwards that plugin's extensions (Stream, Shardings, ...) with
// pjrtkit's handles translated through these. Opaque here (the client layer has no PJRT types):
// `api` is the other plugin's `const PJRT_Api*`, `handle` its PJRT_Client*, PJRT_Device*, ...
// Both null: the object has none (a device that wraps no plugin, an error buffer).
struct NativeHandle {
  const void* api = nullptr;  // The other plugin's PJRT_Api.
  void* handle = nullptr;     // The object there.
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_NATIVE_HANDLE_H_
