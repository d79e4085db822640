#!/bin/bash
# Runs api_coverage on the fake pjrtkit plugin and on a deliberately partial plugin, and checks
# exact lines of the reports.
set -u
tool="$1"
fake="$2"
partial="$3"
failures=0

# expect REPORT LINE: fails unless LINE is a whole line of REPORT.
expect() {
  if ! grep -qxF -- "$2" <<<"$1"; then
    echo "FAIL: missing line: $2"
    failures=$((failures + 1))
  fi
}

report="$("$tool" "$fake")" || { echo "FAIL: api_coverage exited $? on the fake plugin"; exit 1; }
expect "$report" "| 1 | PJRT_Error_Destroy | implemented | ok |"
expect "$report" "| 11 | PJRT_Client_Create | implemented | ok |"
expect "$report" "| 71 | PJRT_Buffer_ToHostBuffer | implemented | ok |"
expect "$report" "| 78 | PJRT_CopyToDeviceStream_Destroy | UNIMPLEMENTED | not exercised |"
expect "$report" "| 90 | PJRT_Compile | implemented | error: INVALID_ARGUMENT |"
expect "$report" "| 94 | PJRT_Client_CreateViewOfDeviceBuffer | implemented | not exercised |"
expect "$report" "| 99 | PJRT_ExecuteContext_Create | implemented | not exercised |"
expect "$report" "| 104 | PJRT_Client_CreateBuffersForAsyncHostToDevice | implemented | not exercised |"
expect "$report" "| 110 | PJRT_AsyncHostToDeviceTransferManager_AddMetadata | implemented | not exercised |"
expect "$report" "| 111 | PJRT_Client_DmaMap | UNIMPLEMENTED | not exercised |"
expect "$report" "| 115 | PJRT_TopologyDescription_Deserialize | implemented | ok |"
expect "$report" "| 118 | PJRT_LoadedExecutable_GetDeviceAssignment | implemented | not exercised |"
expect "$report" "Summary: 129 implemented, 9 UNIMPLEMENTED, 0 NULL, 0 absent."
# The fake device compiles only its own compile-options format: the probe reports the refusal.
expect "$report" "Functional (valid arguments on a client): 70 ok, 0 UNIMPLEMENTED, 2 failed, 66 not exercised."
expect "$report" "| 127 | PJRT_Event_Create | implemented | not exercised |"
expect "$report" "| 133 | PJRT_Error_ForEachPayload | implemented | not exercised |"
expect "$report" "| 3 | pjrtkit (0x706A6B74) | 40 |"
expect "$report" "| 14 | PJRT_Client_ProcessIndex | implemented | ok |"
expect "$report" "| 1 | PJRT_Extension_Type_FFI (5) | 48 |"

report="$("$tool" "$partial")" || { echo "FAIL: api_coverage exited $? on the partial plugin"; exit 1; }
expect "$report" "| 3 | PJRT_Error_GetCode | implemented | not exercised |"
expect "$report" "| 4 | PJRT_Plugin_Initialize | implemented | ok |"
expect "$report" "| 5 | PJRT_Plugin_Attributes | NULL | not exercised |"
expect "$report" "| 13 | PJRT_Client_PlatformName | implemented (crashed on zeroed args) | not exercised |"
expect "$report" "| 14 | PJRT_Client_ProcessIndex | implemented (accepted zeroed args) | not exercised |"
expect "$report" "| 111 | PJRT_Client_DmaMap | UNIMPLEMENTED | not exercised |"
expect "$report" "Summary: 5 implemented, 1 UNIMPLEMENTED, 132 NULL, 0 absent."
expect "$report" "Functional (valid arguments on a client): 1 ok, 0 UNIMPLEMENTED, 0 failed, 137 not exercised."
expect "$report" "| 1 | PJRT_Extension_Type_Layouts (4) | 24 |"
# Type names come from the pinned header (all 25 of 0.117).
expect "$report" "| 2 | PJRT_Extension_Type_XlaTransform (24) | 24 |"

# --inner lists the chain of a wrapped plugin beside the plugin's own.
report="$("$tool" "$fake" "--inner=$partial")" || { echo "FAIL: api_coverage --inner exited $?"; exit 1; }
expect "$report" "| # | type | fake_plugin.so | inner: partial_plugin.so |"
expect "$report" "| 1 | PJRT_Extension_Type_FFI (5) | 48 | absent |"
expect "$report" "| 2 | PJRT_Extension_Type_Layouts (4) | 80 | 24 |"
expect "$report" "| 4 | PJRT_Extension_Type_Shardings (19) | 40 | absent |"
expect "$report" "| 5 | PJRT_Extension_Type_XlaTransform (24) | absent | 24 |"

if "$tool" "$fake" --option=bad 2>/dev/null; then
  echo "FAIL: a malformed --option must be an error"
  failures=$((failures + 1))
fi

if "$tool" "$fake" --inner=/nonexistent.so >/dev/null 2>&1; then
  echo "FAIL: a missing inner plugin must be an error"
  failures=$((failures + 1))
fi

if "$tool" /nonexistent.so 2>/dev/null; then
  echo "FAIL: a missing plugin must be an error"
  failures=$((failures + 1))
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "api_coverage_test: all checks passed"
