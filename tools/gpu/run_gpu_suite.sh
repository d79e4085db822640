#!/bin/bash
# The GPU suite of pjrtkit's xla_gpu device, on a machine with an NVIDIA GPU and jax-cuda13-pjrt
# (or -cuda12-) installed. CI has no GPU; run this on a GPU machine.
#
#   bash tools/gpu/run_gpu_suite.sh [--kit DIR] [--out DIR] [--rounds N] [--no-bench]
#
# --kit: a folder holding pjrtkit_plugin.so, build_info.json, the conformance runner (runner),
#   xla_gpu_device_test, and the repository's python/, tests/ and tools/ (tools/gpu/make_kit.sh
#   makes one from a Bazel build; it is what travels to a remote GPU machine). Default: this
#   repository, with Bazel's outputs under bazel-bin/.
# --out: where logs and results go (default: ./gpu_suite_out).
#
# Steps (each one's output is in suite.log; the summary at the end says which passed):
#   1. the machine: GPUs, driver, jax/jaxlib, where the CUDA plugin is;
#   2. //xla_plugin/devices/xla_gpu:xla_gpu_device_test on the GPU (C++ client layer);
#   3. the PJRT C-API conformance suite on pjrtkit's xla_gpu device, and on the CUDA plugin
#      loaded directly for comparison (its known deviations are XLA:GPU's);
#   3c. abi_probe on the CUDA plugin: the Args sizes it was built with against pjrtkit's header;
#   3d. the CUDA plugin's extensions forwarded through pjrtkit (tests/extensions);
#   3e. api_coverage of pjrtkit over the CUDA plugin, extension chains side by side;
#   4. a client created with no options at all (the device and the CUDA plugin are found);
#   5. JAX end to end on the GPU: tests/jax/gpu_device_test.py, gpu_features_test.py and
#      gpu_extensions_test.py (and all three on JAX's CUDA backend for reference; the extensions'
#      file as 5d/5e), and JAX_PLATFORMS=pjrtkit with no pjrtkit
#      options choosing the GPU by itself;
#   6. the GPU benchmark (tools/bench/gpu.py): pjrtkit's xla_gpu device vs the CUDA plugin used
#      directly by JAX, in one run.
set -u -o pipefail

KIT=""
OUT="$PWD/gpu_suite_out"
ROUNDS=3
BENCH=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kit) KIT="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --no-bench) BENCH=0; shift ;;
    *) echo "run_gpu_suite.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ -n "$KIT" ]]; then
  KIT="$(cd "$KIT" && pwd)"
  SO="$KIT/pjrtkit_plugin.so"; RUNNER="$KIT/runner"; DEVICE_TEST="$KIT/xla_gpu_device_test"
  TOOLS="$KIT"; EXTENSIONS_TEST="$KIT/forwarded_extensions_test"
  SRC="$KIT"
else
  SO="$REPO/bazel-bin/xla_plugin/pjrtkit_plugin.so"; RUNNER="$REPO/bazel-bin/tests/conformance/runner"
  DEVICE_TEST="$REPO/bazel-bin/xla_plugin/devices/xla_gpu/xla_gpu_device_test"
  TOOLS="$REPO/bazel-bin/tools/api_coverage"
  EXTENSIONS_TEST="$REPO/bazel-bin/tests/extensions/forwarded_extensions_test_bin"
  SRC="$REPO"
fi
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1 TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-3}"
export PJRTKIT_PLUGIN_LIBRARY="$SO"
export PYTHONPATH="$SRC/python:$SRC${PYTHONPATH:+:$PYTHONPATH}"
LOG="$OUT/suite.log"
: > "$LOG"
declare -a SUMMARY=()

# step NAME COMMAND...: runs COMMAND, appending its output to suite.log; records pass/fail.
step() {
  local name="$1"; shift
  local start=$SECONDS
  echo "=== $name" | tee -a "$LOG"
  "$@" >> "$LOG" 2>&1
  local rc=$?
  local line="$name: $([[ $rc -eq 0 ]] && echo PASS || echo "FAIL (exit $rc)") in $((SECONDS - start)) s"
  SUMMARY+=("$line")
  echo "$line" | tee -a "$LOG"
  return 0
}

CUDA_PLUGIN="$("$PY" -c 'import sys; sys.path.insert(0, "'"$SRC"'/python")
from jax_plugins.pjrtkit import _device
p = _device.cuda_plugin_path(); print(p or "")')"
GPUS=$(ls /proc/driver/nvidia/gpus 2>/dev/null | wc -l)
# The plugin decides its device and finds its inner plugin when it is loaded, from these (the
# Python package sets them for JAX; the C++ tools here load the plugin themselves).
export PJRTKIT_DEVICE=xla_gpu PJRTKIT_XLA_GPU_PLUGIN="$CUDA_PLUGIN"

facts() {
  nvidia-smi -L || true
  echo "GPUs: $GPUS; CUDA plugin: ${CUDA_PLUGIN:-none}; CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}"
  "$PY" -c 'import jax, jaxlib, sys; print("python", sys.version.split()[0], "jax", jax.__version__, "jaxlib", jaxlib.__version__)'
  cat "$(dirname "$SO")/build_info.json" 2>/dev/null || true
  [[ -n "$CUDA_PLUGIN" && "$GPUS" -gt 0 ]]
}
step "1 machine" facts

step "2 xla_gpu_device_test (C++)" env PJRTKIT_XLA_GPU_PLUGIN="$CUDA_PLUGIN" "$DEVICE_TEST"

conformance_pjrtkit() {
  "$RUNNER" --plugin="$SO" --option=device=str:xla_gpu --option=xla_gpu_plugin_path=path:"$CUDA_PLUGIN" \
    --option=preallocate=bool:false --expect_platform=pjrtkit --expect_all_api_slots \
    --expect_devices="$GPUS" > "$OUT/conformance_pjrtkit.log" 2>&1
  local rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" "$OUT/conformance_pjrtkit.log"
  return $rc
}
step "3a conformance suite on pjrtkit's xla_gpu device" conformance_pjrtkit

conformance_direct() {
  "$RUNNER" --plugin="$CUDA_PLUGIN" --option=platform_name=str:cuda --option=preallocate=bool:false \
    > "$OUT/conformance_cuda_direct.log" 2>&1
  local rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |test suites? ran" "$OUT/conformance_cuda_direct.log"
  if ! grep -qE "test suites? ran" "$OUT/conformance_cuda_direct.log"; then
    # The plugin ended the process before the suite finished: name the case it was in.
    echo "the CUDA plugin ended the process (exit $rc) in:" \
      "$(grep -E '^\[ RUN' "$OUT/conformance_cuda_direct.log" | tail -1 | sed 's/^\[ RUN *\] //')"
  fi
  return 0  # For comparison: XLA:GPU's own deviations are expected here.
}
step "3b conformance suite on the CUDA plugin directly (reference, deviations expected)" conformance_direct

step "3c abi_probe: the CUDA plugin's struct sizes against pjrtkit's header" \
  "$TOOLS/abi_probe" "$CUDA_PLUGIN"

step "3d the CUDA plugin's extensions through pjrtkit" "$EXTENSIONS_TEST" "$SO" "$CUDA_PLUGIN"

coverage_gpu() {
  "$TOOLS/api_coverage" "$SO" --option=device=str:xla_gpu --option=preallocate=bool:false \
    --inner="$CUDA_PLUGIN" > "$OUT/api_coverage_xla_gpu.md" 2>/dev/null
  local rc=$?
  grep -E "^Summary|^Functional|Extension_Type|pjrtkit \(0x" "$OUT/api_coverage_xla_gpu.md"
  return $rc
}
step "3e api_coverage of pjrtkit over the CUDA plugin" coverage_gpu

step "4 a client with no create options finds the GPU" env -u PJRTKIT_DEVICE \
  "$RUNNER" --plugin="$SO" --expect_platform=pjrtkit --gtest_filter='PluginTest.*:ClientTest.*:DeviceTest.*:ExecuteTest.*'

step "5a JAX end to end (tests/jax/gpu_device_test.py, gpu_features_test.py)" \
  env JAX_PLATFORMS=pjrtkit,cpu "$PY" -m pytest -v -p no:cacheprovider \
  "$SRC/tests/jax/gpu_device_test.py" "$SRC/tests/jax/gpu_features_test.py" -rs

# The same checks on JAX's own CUDA backend: the reference (a failure there too is JAX's or the
# test's, not pjrtkit's); not counted in the summary's verdict.
reference() {
  env GPU_TEST_PLATFORM=cuda JAX_PLATFORMS=cuda,cpu "$PY" -m pytest -q -p no:cacheprovider \
    "$SRC/tests/jax/gpu_device_test.py" "$SRC/tests/jax/gpu_features_test.py" -rs
  return 0
}
step "5c reference: the same checks on JAX's CUDA backend" reference

step "5d the CUDA plugin's extensions through JAX (tests/jax/gpu_extensions_test.py)" \
  env JAX_PLATFORMS=pjrtkit,cpu "$PY" -m pytest -v -p no:cacheprovider \
  "$SRC/tests/jax/gpu_extensions_test.py" -rs

extensions_reference() {
  env GPU_TEST_PLATFORM=cuda JAX_PLATFORMS=cuda,cpu "$PY" -m pytest -q -p no:cacheprovider \
    "$SRC/tests/jax/gpu_extensions_test.py" -rs
  return 0
}
step "5e reference: gpu_extensions_test.py on JAX's CUDA backend" extensions_reference

auto_choice() {
  JAX_PLATFORMS=pjrtkit "$PY" -c '
import jax, numpy as np
d = jax.devices()[0]
import jax_plugins.pjrtkit as pjrtkit
print(jax.devices(), d.device_kind, d.compute_capability, d.client.platform_version)
print(pjrtkit.integration_status())
assert d.platform == "pjrtkit" and d.device_kind.startswith("NVIDIA"), d
np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: x * 2)(np.arange(4.0))), [0, 2, 4, 6])'
}
step "5b JAX_PLATFORMS=pjrtkit without options runs on the GPU" auto_choice

if [[ $BENCH -eq 1 ]]; then
  step "6 GPU benchmark ($ROUNDS rounds)" bash -c "cd '$SRC' && '$PY' -m tools.bench.gpu --rounds $ROUNDS --out '$OUT'"
fi

echo "=== summary" | tee -a "$LOG"
printf '%s\n' "${SUMMARY[@]}" | tee -a "$LOG" | tee "$OUT/summary.txt"
! grep -q FAIL "$OUT/summary.txt"
