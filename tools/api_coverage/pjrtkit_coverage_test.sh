#!/bin/bash
# Runs api_coverage on pjrtkit's plugin (4 devices on XLA:CPU, whose extensions are listed beside
# pjrtkit's) and checks exact lines: the probe and the functional status of a slot are reported
# separately.
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

# pjrtkit finds its inner plugin from the environment when it loads (and forwards its extensions).
report="$(PJRTKIT_DEVICE=xla_cpu PJRTKIT_XLA_CPU_PLUGIN="$(realpath "$xla_cpu")" "$tool" "$plugin" "--option=xla_cpu_plugin_path=path:$xla_cpu" \
          --option=device_count=int:4 "--inner=$xla_cpu" 2>/dev/null)" || { echo "FAIL: api_coverage exited $?"; exit 1; }
expect "$report" "Summary: 129 implemented, 9 UNIMPLEMENTED, 0 NULL, 0 absent."
expect "$report" "Functional (valid arguments on a client): 96 ok, 1 UNIMPLEMENTED, 0 failed, 41 not exercised."
expect "$report" "| 48 | PJRT_Executable_OutputMemoryKinds | implemented | UNIMPLEMENTED |"
expect "$report" "| 71 | PJRT_Buffer_ToHostBuffer | implemented | ok |"
expect "$report" "| 90 | PJRT_Compile | implemented | ok |"
expect "$report" "| PJRT_LoadedExecutable_Execute (execute context with FFI user data) | ok |  |"
# The extension chains of pjrtkit and of the XLA:CPU plugin inside it, side by side.
expect "$report" "| # | type | pjrtkit_plugin.so | inner: xla_cpu_pjrt.so |"
expect "$report" "| 1 | PJRT_Extension_Type_FFI (5) | 48 | 48 |"
# pjrtkit's own Layouts (version 4) over XLA:CPU 0.81's; the inner plugin's extensions forwarded.
expect "$report" "| 2 | PJRT_Extension_Type_Layouts (4) | 80 | 72 |"
expect "$report" "| 3 | pjrtkit (0x706A6B74) | 40 | absent |"
expect "$report" "| 4 | PJRT_Extension_Type_MemoryDescriptions (6) | 40 | 40 |"
expect "$report" "| 5 | PJRT_Extension_Type_PhaseCompile (9) | 64 | 64 |"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  echo "$report"
  exit 1
fi
echo "pjrtkit_coverage_test: all checks passed"
