#!/usr/bin/env bash
# Runs forwarded_extensions_test on the xla_cpu device with absolute paths (the plugin locates
# its inner plugin from the environment, which needs one), and checks that exactly the cases for
# extensions XLA:CPU 0.0.1 lacks (or whose entry points it leaves null) skipped.
set -euo pipefail
binary=$1
plugin=$(realpath "$2")
inner=$(realpath "$3")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
PJRTKIT_DEVICE=xla_cpu PJRTKIT_XLA_CPU_PLUGIN="$inner" "$binary" "$plugin" "$inner" | tee "$log"
skipped=$(grep -E '^\[  SKIPPED \] ForwardedExtensionsTest\.[A-Za-z]+$' "$log" | sort -u | sed 's/.*\.//' |
          tr '\n' ' ')
expected="CustomPartitionersRegisterWithTheInnerPlugin GpuCustomCallTargetsRegisterWithTheInnerPlugin PhaseCompileNamesTheInnerPluginsPhases ShardingsOfACompiledExecutable StreamOfADeviceAndWaitingForABuffer TheProfilerIsTheInnerPluginsOwn TheRuntimeAbiVersionIsTheInnerPluginsOwn "
if [ "$skipped" != "$expected" ]; then
  echo "FAIL: skipped [$skipped], expected [$expected]" >&2
  exit 1
fi
