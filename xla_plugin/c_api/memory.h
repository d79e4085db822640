// PJRT_Memory_* entry points.
#ifndef PJRTKIT_XLA_PLUGIN_C_API_MEMORY_H_
#define PJRTKIT_XLA_PLUGIN_C_API_MEMORY_H_

#include "xla/pjrt/c/pjrt_c_api.h"

namespace pjrtkit {
namespace capi {

// PJRT_Memory_Id: the memory's id.
PJRT_Error* MemoryId(PJRT_Memory_Id_Args* args);
// PJRT_Memory_Kind: the kind string ("device", "pinned_host", ...).
PJRT_Error* MemoryKind(PJRT_Memory_Kind_Args* args);
// PJRT_Memory_Kind_Id: the numeric kind id.
PJRT_Error* MemoryKindId(PJRT_Memory_Kind_Id_Args* args);
// PJRT_Memory_DebugString: the short name.
PJRT_Error* MemoryDebugString(PJRT_Memory_DebugString_Args* args);
// PJRT_Memory_ToString: the verbose name.
PJRT_Error* MemoryToString(PJRT_Memory_ToString_Args* args);
// PJRT_Memory_AddressableByDevices: the devices that can address the memory.
PJRT_Error* MemoryAddressableByDevices(PJRT_Memory_AddressableByDevices_Args* args);

// The function table at the start of every pjrtkit PJRT_Memory (PJRT C API 0.117's
// PJRT_Memory::vtable): user data a framework attaches to a memory, kept until the client is
// destroyed (MemoryImpl). set_user_data replaces an earlier entry of the same key, calling its
// destructor; get_user_data of an unknown key is nullptr.
const PJRT_Memory_FunctionTable* MemoryFunctionTable();

}  // namespace capi
}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_C_API_MEMORY_H_
