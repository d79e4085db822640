#!/usr/bin/env bash
# The issue-8 check: JAX's tests on pjrtkit and on jaxlib's cpu, for jax 0.12.0.1 (.venv) and
# jax 0.11.2 (JAX0112_VENV). Usage: bash tools/jax_suite/run.sh OUT_DIR [0.12|0.11|all] [more run args]
# Needs the JAX git mirror (JAX_GIT_DIR) and a built plugin (bash tools/setup.sh). BACKENDS picks
# the backends (default cpu,pjrtkit; add xla-cpu-direct, pjrtkit-dut-pjrtkit).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${1:?OUT_DIR}; WHICH=${2:-all}; shift $(( $# >= 2 ? 2 : 1 ))
JAX_GIT_DIR=${JAX_GIT_DIR:-/work/.mirror/jax-ml+jax/repo}
JAX_REV=${JAX_REV:-cec06d116c05f0d52adfceee3d3b730fdbcb0ce5}
JAX0112_VENV=${JAX0112_VENV:-/work/venvs/jax0112}
PY=$ROOT/.venv/bin/python
mkdir -p "$OUT"
src=$OUT/src/jax-${JAX_REV:0:8}
[ -f "$src/JAX_COMMIT" ] || $PY -m tools.jax_suite extract --git-dir "$JAX_GIT_DIR" --rev "$JAX_REV" --dest "$src"
[ -f "$src-compat/JAX_COMMIT" ] || $PY -m tools.jax_suite extract --compat --git-dir "$JAX_GIT_DIR" --rev "$JAX_REV" --dest "$src-compat"
BACKENDS=${BACKENDS:-cpu,pjrtkit}
common=(--backends "$BACKENDS" --files-from tools/jax_suite/files.txt --cases 5 --file-cases linalg_test.py=2
        --file-cases lax_numpy_test.py=2 --timeout 1200 --resume)
if [ "$WHICH" = all ] || [ "$WHICH" = 0.12 ]; then
  $PY -m tools.jax_suite run --label jax-0.12.0.1 --python "$PY" --tests-dir "$src-compat/tests" \
    --out "$OUT/jax-0.12.0.1" "${common[@]}" "$@"
fi
if [ "$WHICH" = all ] || [ "$WHICH" = 0.11 ]; then
  # jax 0.11.2 has no pjrtkit installed: register it from this checkout.
  $PY -m tools.jax_suite run --label jax-0.11.2 --python "$JAX0112_VENV/bin/python" \
    --tests-dir "$src/tests" --out "$OUT/jax-0.11.2" "${common[@]}" \
    --env "PYTHONPATH=$ROOT/python" --env "PJRTKIT_PLUGIN_LIBRARY=$ROOT/bazel-bin/xla_plugin/pjrtkit_plugin.so" "$@"
fi
