#!/usr/bin/env bash
# The implementation=None sweep (tools/kernels_gpu/sweep.py) on the H200 machine, from a kit made
# by tools/gpu/make_kit.sh (bash tools/gpu/make_kit.sh build/kit; carry build/kit):
#   OUT=$OUT bash build/kit/tools/kernels_gpu/sweep.sh [platform ...]      (default: cuda)
# One process per platform (JAX_PLATFORMS=cuda: JAX's CUDA backend, as the comparison's cuda
# process; pjrtkit: pjrtkit's GPU device, found as the kit's pjrtkit_plugin.so), each under
# `timeout` (SWEEP_TIMEOUT, default 560 s) with --budget-s (BUDGET_S, default 480: points that
# would start later are recorded as skipped) and --check (CHECK=0 leaves it out). GRID picks the
# grid (default: the 8-point default grid, about 380 s on the H200, within the default limits),
# PART=K/N a part of it (for a grid that does not fit one call),
# SWEEP_ARGS adds arguments (e.g. "--iterations 20"). $OUT gets summary.txt,
# sweep_<platform>.log and sweep.py's sweep_<JAX platform>.{json,md} (JAX names the CUDA platform "gpu"), written after every point.
set -uo pipefail
cd "$(dirname "$0")/../.."
KIT=$PWD
OUT=${OUT:-/tmp/kernels_sweep_out}; mkdir -p "$OUT"
PY=${PYTHON:-python3}
PLATFORMS=${*:-cuda}
export PYTHONPATH="$KIT:$KIT/python${PYTHONPATH:+:$PYTHONPATH}" TF_CPP_MIN_LOG_LEVEL=3
export PYTHONUNBUFFERED=1
[ -f pjrtkit_plugin.so ] && export PJRTKIT_PLUGIN_LIBRARY="$KIT/pjrtkit_plugin.so"
[ -f pjrtkit_kernels.so ] && export PJRTKIT_KERNELS_LIBRARY="$KIT/pjrtkit_kernels.so"
S="$OUT/summary.txt"
: > "$S"
say() { echo "$*" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$S"
say "python: $($PY -c 'import sys, jax, jaxlib; print(sys.version.split()[0], "jax", jax.__version__, "jaxlib", jaxlib.__version__)' 2>&1 | tail -1)"
ARGS=(--out "$OUT" --budget-s "${BUDGET_S:-480}" ${GRID:+--grid "$GRID"} ${PART:+--part "$PART"}
      ${SWEEP_ARGS:-})
[ "${CHECK:-1}" != 0 ] && ARGS+=(--check)
for p in $PLATFORMS; do
  start=$SECONDS
  echo "=== JAX_PLATFORMS=$p sweep ${ARGS[*]}" > "$OUT/sweep_$p.log"
  JAX_PLATFORMS=$p timeout "${SWEEP_TIMEOUT:-560}" $PY -m tools.kernels_gpu.sweep "${ARGS[@]}" \
    >> "$OUT/sweep_$p.log" 2>&1
  rc=$?
  say "sweep JAX_PLATFORMS=$p: rc=$rc$([ $rc = 124 ] && echo " (time limit ${SWEEP_TIMEOUT:-560} s)")$([ $rc = 1 ] && echo " (--check: a point outside 5 %, or an error: see the log)") in $((SECONDS - start)) s"
  grep -a -- "--check:\|Traceback\|Error" "$OUT/sweep_$p.log" | tail -5 | tee -a "$S"
done
for t in "$OUT"/sweep_*.md; do [ -f "$t" ] && { echo; cat "$t"; } >> "$S"; done
say "total: $SECONDS s"
ls "$OUT" | tee -a "$S"
