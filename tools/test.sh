#!/usr/bin/env bash
# README command 2: set up as tools/main.sh does, plus .venv-jax-oldest (the oldest jax/jaxlib we
# support, for the second run of every JAX-facing test), then run every test with Bazel, then the
# device template end to end in a scratch copy (tools/new_device_check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh --oldest-jax
bazel test //... "$@"
bash tools/new_device_check.sh
