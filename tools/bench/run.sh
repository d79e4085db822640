#!/usr/bin/env bash
# Runs pjrtkit's benchmark (tools/bench, see README.md there) with the project virtualenv.
# Extra arguments go to `python -m tools.bench` (--rounds N, --quick, --only W1,W2, --out DIR).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec .venv/bin/python -m tools.bench "$@"
