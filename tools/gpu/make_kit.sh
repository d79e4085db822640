#!/bin/bash
# Builds what the GPU suites need and copies it into one folder that can travel to a GPU machine:
#   bash tools/gpu/make_kit.sh DIR
# DIR then holds pjrtkit_plugin.so, build_info.json, runner (the conformance suite),
# xla_gpu_device_test, abi_probe and api_coverage (tools/api_coverage), forwarded_extensions_test
# (tests/extensions), pjrtkit_kernels.so (the native kernels' library; the CPU device's only),
# xla_plugin/ (the plugin and build_info.json again, where tests/testing/plugin_env.py looks for
# them), and python/, kernels/, tests/{jax,testing,distributed}, tools/{bench,gpu,kernels_gpu} of
# this repository (a few MB), and wheels/: Tokamax 0.0.17 and the wheels the H200 image lacks for
# it (~9 MB; see tools/kernels_gpu/tokamax_wheels.txt; KIT_WHEELS=0 leaves them out). On the GPU
# machine:
# bash DIR/tools/gpu/run_gpu_suite.sh --kit DIR --out OUTDIR,
# bash DIR/tools/gpu/run_multi_gpu.sh --kit DIR --out OUTDIR (a machine with 2 GPUs),
# bash DIR/tools/kernels_gpu/run.sh (pjrtkit.kernels; it finds DIR/pjrtkit_plugin.so), and
# bash DIR/tools/kernels_gpu/speed.sh (the kernel comparison against cuDNN, XLA and Tokamax).
set -euo pipefail
DIR="${1:?usage: make_kit.sh DIR}"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$REPO"
bazel build //xla_plugin:pjrtkit_plugin.so //xla_plugin:build_info //tests/conformance:runner \
  //xla_plugin/devices/xla_gpu:xla_gpu_device_test //kernels/native:pjrtkit_kernels.so \
  //tools/api_coverage:abi_probe //tools/api_coverage:api_coverage \
  //tests/extensions:forwarded_extensions_test_bin
mkdir -p "$DIR"
rm -rf "$DIR/python" "$DIR/kernels" "$DIR/tests" "$DIR/tools" "$DIR/xla_plugin"
cp -f bazel-bin/xla_plugin/pjrtkit_plugin.so bazel-bin/xla_plugin/build_info.json \
  bazel-bin/tests/conformance/runner bazel-bin/xla_plugin/devices/xla_gpu/xla_gpu_device_test \
  bazel-bin/kernels/native/pjrtkit_kernels.so bazel-bin/tools/api_coverage/abi_probe \
  bazel-bin/tools/api_coverage/api_coverage "$DIR/"
cp -f bazel-bin/tests/extensions/forwarded_extensions_test_bin "$DIR/forwarded_extensions_test"
chmod u+w "$DIR"/*
mkdir -p "$DIR/tests" "$DIR/tools" "$DIR/xla_plugin"
cp -f "$DIR/pjrtkit_plugin.so" "$DIR/build_info.json" "$DIR/xla_plugin/"
cp -r python kernels "$DIR/"
cp -r tests/jax tests/testing tests/distributed tests/__init__.py "$DIR/tests/"
cp -r tools/bench tools/gpu tools/jax_suite tools/kernels_gpu "$DIR/tools/"
# Without caches, results, and the built .so copies setup.sh leaves in python/ and kernels/ (the
# suites point PJRTKIT_PLUGIN_LIBRARY / PJRTKIT_KERNELS_LIBRARY at the kit's).
find "$DIR/python" "$DIR/kernels" "$DIR/tests" "$DIR/tools" \( -name __pycache__ -o -name results \) \
  -prune -exec rm -rf {} +
find "$DIR/python" "$DIR/kernels" \( -name '*.so' -o -name build_info.json \) -delete
# No Bazel files: the kit may sit inside a checkout whose `bazel test //...` must not see it.
find "$DIR" \( -name BUILD -o -name "*.bzl" \) -delete
if [ "${KIT_WHEELS:-1}" != 0 ]; then
  bash tools/kernels_gpu/download_wheels.sh "$DIR/wheels"
fi
du -sh "$DIR"
