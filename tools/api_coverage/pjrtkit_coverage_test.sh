#!/bin/bash
# Runs api_coverage on pjrtkit's plugin (4 devices on XLA:CPU) and checks exact lines: the probe
# and the functional status of a slot are reported separately.
set -u
tool="$1"
plugin="$2"
xla_cpu="$3"
failures=0

expect() {
  if ! grep -qxF -- "$2" <<<"$1"; then
    echo "FAIL: missing line: $2"
    failures=$((failures + 1))
  fi
}

report="$("$tool" "$plugin" "--option=xla_cpu_plugin_path=path:$xla_cpu" \
          --option=device_count=int:4 2>/dev/null)" || { echo "FAIL: api_coverage exited $?"; exit 1; }
expect "$report" "Summary: 109 implemented, 9 UNIMPLEMENTED, 0 NULL, 0 absent."
expect "$report" "Functional (valid arguments on a client): 96 ok, 1 UNIMPLEMENTED, 0 failed, 21 not exercised."
expect "$report" "| 48 | PJRT_Executable_OutputMemoryKinds | implemented | UNIMPLEMENTED |"
expect "$report" "| 71 | PJRT_Buffer_ToHostBuffer | implemented | ok |"
expect "$report" "| 90 | PJRT_Compile | implemented | ok |"
expect "$report" "| PJRT_LoadedExecutable_Execute (execute context with FFI user data) | ok |  |"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  echo "$report"
  exit 1
fi
echo "pjrtkit_coverage_test: all checks passed"
