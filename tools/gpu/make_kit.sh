#!/bin/bash
# Builds what the GPU suite needs and copies it into one folder that can travel to a GPU machine:
#   bash tools/gpu/make_kit.sh DIR
# DIR then holds pjrtkit_plugin.so, build_info.json, runner (the conformance suite),
# xla_gpu_device_test, and python/, tests/{jax,testing}, tools/{bench,gpu} of this repository
# (a few MB). On the GPU machine: bash DIR/tools/gpu/run_gpu_suite.sh --kit DIR --out OUTDIR.
set -euo pipefail
DIR="${1:?usage: make_kit.sh DIR}"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$REPO"
bazel build //xla_plugin:pjrtkit_plugin.so //xla_plugin:build_info //tests/conformance:runner \
  //xla_plugin/devices/xla_gpu:xla_gpu_device_test
mkdir -p "$DIR"
rm -rf "$DIR/python" "$DIR/tests" "$DIR/tools"
cp -f bazel-bin/xla_plugin/pjrtkit_plugin.so bazel-bin/xla_plugin/build_info.json \
  bazel-bin/tests/conformance/runner bazel-bin/xla_plugin/devices/xla_gpu/xla_gpu_device_test "$DIR/"
chmod u+w "$DIR"/*
mkdir -p "$DIR/tests" "$DIR/tools"
cp -r python "$DIR/"
cp -r tests/jax tests/testing tests/__init__.py "$DIR/tests/"
cp -r tools/bench tools/gpu "$DIR/tools/"
# Without caches, results, and the built .so copies setup.sh leaves in python/ (the suite points
# PJRTKIT_PLUGIN_LIBRARY at the kit's).
find "$DIR/python" "$DIR/tests" "$DIR/tools" \( -name __pycache__ -o -name results \) -prune \
  -exec rm -rf {} +
find "$DIR/python" \( -name '*.so' -o -name build_info.json \) -delete
du -sh "$DIR"
