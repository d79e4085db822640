#!/usr/bin/env bash
# README command 1: set up (apt, .venv, Bazel build, development install), then run JAX on pjrtkit
# with the default 4 devices and with the create option device_count=1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
echo "== JAX on pjrtkit (default options) =="
JAX_PLATFORMS=pjrtkit .venv/bin/python tools/demo.py
echo "== JAX on pjrtkit (device_count=1) =="
JAX_PLATFORMS=pjrtkit .venv/bin/python tools/demo.py --device-count 1
