#!/usr/bin/env bash
# README command 1: set up (apt, .venv, Bazel build, development install), then run JAX on pjrtkit
# with the default 4 devices, with the create option device_count=1, and on the sim device (its own
# compiler and runtime, no other PJRT plugin loaded).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
echo "== JAX on pjrtkit (default options) =="
JAX_PLATFORMS=pjrtkit .venv/bin/python tools/demo.py
echo "== JAX on pjrtkit (device_count=1) =="
JAX_PLATFORMS=pjrtkit .venv/bin/python tools/demo.py --device-count 1
echo "== JAX on pjrtkit's sim device (PJRTKIT_DEVICE=sim) =="
PJRTKIT_DEVICE=sim JAX_PLATFORMS=pjrtkit .venv/bin/python tools/demo.py
