#!/bin/bash
# Runs abi_probe on OpenXLA's XLA:CPU plugin (xla-cpu-pjrt, PJRT C API 0.81) and on a plugin
# with wrong sizes on purpose, and checks exact lines and exit codes.
set -u
tool="$1"
xla_cpu="$2"
mismatch="$3"
failures=0

# expect REPORT LINE: fails unless LINE is a whole line of REPORT.
expect() {
  if ! grep -qxF -- "$2" <<<"$1"; then
    echo "FAIL: missing line: $2"
    failures=$((failures + 1))
  fi
}

report="$("$tool" "$xla_cpu")"
status=$?
if [[ $status -ne 0 ]]; then
  echo "FAIL: abi_probe exited $status on XLA:CPU"
  failures=$((failures + 1))
fi
expect "$report" "| PJRT_Api | 984 | ends after PJRT_LoadedExecutable_GetDeviceAssignment | = 984 |"
expect "$report" "| PJRT_Api_Version | 24 | ends after minor_version | = 24 |"
expect "$report" "| 11 | PJRT_Client_Create | PJRT_Client_Create_Args | 88 | ends after kv_try_get_user_arg | = 88 |  |"
expect "$report" "| 35 | PJRT_Device_MemoryStats | PJRT_Device_MemoryStats_Args | 185 | ends after peak_pool_bytes_is_set | = 185 |  |"
expect "$report" "| 56 | PJRT_LoadedExecutable_Execute | PJRT_LoadedExecutable_Execute_Args | 80 | ends after execute_device | = 80 |  |"
expect "$report" "| 57 | PJRT_Executable_DeserializeAndLoad | PJRT_Executable_DeserializeAndLoad_Args | 64 | ends after overridden_serialized_compile_options_size | = 64 |  |"
# OpenXLA's own messages: a misspelt name, and a check that names another slot's struct.
expect "$report" "| 14 | PJRT_Client_ProcessIndex | PJRT_Client_ProcessIndex_Args | 28 | ends after process_index | = 28 | the plugin named PJRT_CLient_ProcessIndex_Args |"
expect "$report" "| 97 | PJRT_Executable_GetCompiledMemoryStats | PJRT_Executable_Serialize_Args | 56 | ends after serialized_executable_deleter | = 56 |  |"
expect "$report" "| 94 | PJRT_Client_CreateViewOfDeviceBuffer | crashed | | | | |"
expect "$report" "Slots: 115 probed, 3 PJRT_Error_* not called, 0 NULL, 20 beyond the plugin's table."
expect "$report" "Answers: 112 sizes learned, 2 errors without a size, 0 accepted struct_size 1, 1 crashed."
expect "$report" "Sizes: 112 of 112 end after a field of the pinned header's struct, 0 beyond it (newer plugin), 0 of structs it lacks; 112 of 112 equal the same-version _STRUCT_SIZE; 3 answers name another struct than the slot's Args."
expect "$report" "| 4 | PJRT_Extension_Type_Layouts (4) | 72 | PJRT_Layouts_Extension | ends after PJRT_Layouts_PJRT_Executable_GetOutputLayouts | no _STRUCT_SIZE |"
expect "$report" "Extensions: 4 in the chain, 4 of a type whose struct the pinned header declares, 4 ending after one of its fields, 0 mismatched."
expect "$report" "abi_probe: OK, no mismatch"

report="$("$tool" "$mismatch")"
status=$?
if [[ $status -ne 1 ]]; then
  echo "FAIL: abi_probe exited $status on the mismatching plugin, expected 1"
  failures=$((failures + 1))
fi
expect "$report" "| 11 | PJRT_Client_Create | PJRT_Client_Create_Args | 33 | MISMATCH: no field ends at 33 (sizeof 88) | MISMATCH: _STRUCT_SIZE is 88 |  |"
expect "$report" "| 13 | PJRT_Client_PlatformName | PJRT_Client_PlatformName_Args | 32 | ends after platform_name | MISMATCH: _STRUCT_SIZE is 40 |  |"
expect "$report" "| 59 | PJRT_Buffer_Destroy | accepted struct_size 1 | | | | |"
expect "$report" "| 1 | PJRT_Extension_Type_Layouts (4) | 30 | PJRT_Layouts_Extension | MISMATCH: no field ends at 30 (sizeof 80) | MISMATCH: _STRUCT_SIZE is 80 |"
expect "$report" "| 2 | (unknown to the pinned header) (999) | 24 | - | not checked | - |"
expect "$report" "abi_probe: 3 MISMATCH(ES)"

if "$tool" /nonexistent.so >/dev/null 2>&1; [[ $? -ne 2 ]]; then
  echo "FAIL: a missing plugin must exit 2"
  failures=$((failures + 1))
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "abi_probe_test: all checks passed"
