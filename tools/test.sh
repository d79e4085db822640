#!/usr/bin/env bash
# README command 2: set up exactly as tools/main.sh does, then run every test with Bazel.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel test //... "$@"
