#!/usr/bin/env bash
# Builds the paired wheels into dist/: pjrtkit-<version>-*.whl (the plugin, built by Bazel) and the
# exact jaxlib wheel it is tested with (pinned in requirements.lock), downloaded beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
mkdir -p dist
.venv/bin/python tools/build_wheel.py --plugin bazel-bin/xla_plugin/pjrtkit_plugin.so \
  --build-info bazel-bin/xla_plugin/build_info.json --out dist
jaxlib=$(grep -E '^jaxlib==' requirements.lock)
.venv/bin/python -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  -d dist "$jaxlib"
ls -l dist
