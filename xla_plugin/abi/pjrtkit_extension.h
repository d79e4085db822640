// pjrtkit's own PJRT extension (not an OpenXLA one): per-executable FFI user data, and the host
// buffer pool's statistics and trim.
//
// Why: a framework that runs Python host callbacks needs to know, inside the FFI handler, which
// executable is running, because two live executables can hold the same program but call
// different Python functions (a persistent-cache hit with other callbacks). jaxlib attaches its
// callbacks as execute-context user data only for its own cpu/gpu platform ids, never for a
// plugin, so the plugin attaches them itself: executables loaded while a binding is set carry an
// FFI user-data entry that every execution of them passes to the FFI handlers (merged into the
// caller's PJRT_ExecuteContext, if any). jax_plugins.pjrtkit calls it with ctypes.
//
// Host buffer pool: the reference devices copy host data into blocks they keep for reuse (up to
// the create option host_buffer_cache_mib; plugin_wrapper/host_buffer_pool.h). The PJRT C API has
// no way to give that memory back or to report it by itself (PJRT_Device_MemoryStats has no
// slot for it), so host_buffer_pool reports it and, when asked, frees it. pjrtkit.
// host_buffer_pool_stats() and pjrtkit.trim_host_buffer_pool() call it with ctypes.
//
// Layout (x86-64 / aarch64 LP64):
//   PjrtkitExtension          base (24) | bind_executables | host_buffer_pool            = 40
//                             (32 before host_buffer_pool: check struct_size first)
//   BindExecutablesArgs       struct_size | extension_start | type_id | data |
//                             previous_type_id | previous_data | previous_bound         = 56
//   HostBufferPoolArgs        struct_size | extension_start | client | trim (8) |
//                             trimmed_bytes | held_bytes | held_blocks | in_use_bytes |
//                             in_use_blocks | limit_bytes | clients                      = 88
#ifndef PJRTKIT_XLA_PLUGIN_ABI_PJRTKIT_EXTENSION_H_
#define PJRTKIT_XLA_PLUGIN_ABI_PJRTKIT_EXTENSION_H_

// C and C++ standard library.
#include <cstddef>
#include <cstdint>

// PJRT C API (PJRT_Extension_Base, PJRT_Error).
#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace abi {

// The extension's PJRT_Extension_Base::type: "pjkt" in ASCII, far outside OpenXLA's
// PJRT_Extension_Type values (which count up from 0), so no framework mistakes it for one of its
// own extensions.
inline constexpr int kPjrtkitExtensionType = 0x706A6B74;

// Arguments of PjrtkitExtension::bind_executables.
struct BindExecutablesArgs {
  size_t struct_size;                    // kBindExecutablesArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  // In: the FFI type id of the entry to attach (a type registered through the PJRT FFI
  // extension); 0 ends the binding.
  int64_t type_id;
  void* data;                 // In: the entry's data (borrowed; the caller keeps it valid).
  int64_t previous_type_id;   // Out: the binding this call replaced (0: none).
  void* previous_data;        // Out.
  size_t previous_bound;      // Out: executables loaded under the replaced binding.
};

// Sets the calling thread's binding: until the next call on this thread, every executable this
// thread loads on any client of the plugin (PJRT_Client_Compile,
// PJRT_Executable_DeserializeAndLoad) passes {type_id, data} as FFI user data to every
// execution. Nothing else changes: executables loaded without a binding run as before.
using BindExecutablesFn = PJRT_Error* (*)(BindExecutablesArgs* args);

// Arguments of PjrtkitExtension::host_buffer_pool.
struct HostBufferPoolArgs {
  size_t struct_size;                    // kHostBufferPoolArgsSize or more.
  PJRT_Extension_Base* extension_start;  // Unused.
  // In: a client of this plugin, or null for every client of this plugin in the process that the
  // framework has not destroyed (Python cannot name the PJRT_Client behind a JAX backend; JAX
  // makes one per plugin).
  PJRT_Client* client;
  int64_t trim;           // In: nonzero frees the kept blocks before the counts are taken.
  size_t trimmed_bytes;   // Out: bytes the trim freed (0 without trim).
  size_t held_bytes;      // Out: bytes of released blocks kept for reuse.
  size_t held_blocks;     // Out: how many.
  size_t in_use_bytes;    // Out: bytes of pool blocks backing live buffers.
  size_t in_use_blocks;   // Out: how many.
  size_t limit_bytes;     // Out: the most the pools keep, summed (0: pool off).
  size_t clients;         // Out: clients counted.
};

// Reports (and with `trim`, first frees) what the host buffer pool of one client, or of every
// live client, holds. Sums over clients. Devices without a pool count zeros.
using HostBufferPoolFn = PJRT_Error* (*)(HostBufferPoolArgs* args);

// The extension struct, found in PJRT_Api's extension chain with type kPjrtkitExtensionType.
struct PjrtkitExtension {
  PJRT_Extension_Base base;            // type == kPjrtkitExtensionType.
  BindExecutablesFn bind_executables;  // See BindExecutablesFn.
  HostBufferPoolFn host_buffer_pool;   // See HostBufferPoolFn (struct_size >= 40).
};

inline constexpr size_t kBindExecutablesArgsSize =
    offsetof(BindExecutablesArgs, previous_bound) + sizeof(BindExecutablesArgs::previous_bound);
inline constexpr size_t kHostBufferPoolArgsSize =
    offsetof(HostBufferPoolArgs, clients) + sizeof(HostBufferPoolArgs::clients);
inline constexpr size_t kPjrtkitExtensionSize =
    offsetof(PjrtkitExtension, host_buffer_pool) + sizeof(PjrtkitExtension::host_buffer_pool);

#if defined(__LP64__)
static_assert(kBindExecutablesArgsSize == 56, "BindExecutablesArgs is 56 bytes");
static_assert(kHostBufferPoolArgsSize == 88, "HostBufferPoolArgs is 88 bytes");
static_assert(kPjrtkitExtensionSize == 40, "PjrtkitExtension is 40 bytes");
#endif

}  // namespace abi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_ABI_PJRTKIT_EXTENSION_H_
