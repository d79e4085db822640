#!/usr/bin/env bash
# The GPU kernel comparison (issue 13) on the H200 machine, from a kit made by
# tools/gpu/make_kit.sh (bash tools/gpu/make_kit.sh build/kit; carry build/kit):
#   OUT=... bash build/kit/tools/kernels_gpu/speed.sh
#   0. installs the kit's wheels (Tokamax 0.0.17 and what the image lacks for it) into
#      KIT/.pydeps with pip --no-index --no-deps, and puts it and tokamax_shims on PYTHONPATH;
#   1. MODE=two (default): JAX_PLATFORMS=cuda (every contender), then JAX_PLATFORMS=pjrtkit
#      (pjrtkit.kernels only), each under `timeout`. MODE=dual: one process measures both
#      platforms (JAX_PLATFORMS=pjrtkit,cuda, no preallocation; cuda: every contender, pjrtkit:
#      ours). MODE=auto: a ~1 min probe whether both work in one process, then dual if so.
#      MODE=cuda: the JAX_PLATFORMS=cuda process only (every contender at every case, so the
#      whole table from one run; no pjrtkit column and no merge): 470 s for every case with one
#      timing burst per contender (before --rounds); with the default 3 rounds, use the
#      --contenders list below to stay within one 10-minute command (311 s, CUDA_TIMEOUT=570).
#      Dual is not the default: in the tenth session's full run (2026-12-01) every case from A5
#      on ran out of GPU memory in one process (each platform's client keeps its own pool), while
#      two processes measured every case;
#   2. merges: pjrtkit time / cuda time per case and implementation of ours (goal: within 2 %).
# $OUT gets at most 8 files: summary.txt, speed.log, kernel_compare_<platforms>.{md,json,png}
# (cuda; pjrtkit without the PNG), kernel_compare_platforms.json.
# Cases: every case of the op folders (kernels/*/arg_specs.py), extra rows included (kernel_compare's default
# list): A1-A4 and L1-L4, then the extra rows A5-A10 (A8, A10 grouped-query) and the held-out
# H1-H5 (shapes nobody tuned); CASES=A1,A2,L1 runs only those. What a case costs is mostly
# compiling: per contender its lowering and compile (Pallas kernels, cuDNN, Tokamax's) takes 1-4 s,
# its 10 timed calls plus warm-up at these shapes (tens of ms each for the XLA contenders, a few ms
# for the fused kernels) under 1 s. For A1-A6 and L1-L4, docs/results/kernels/
# kernel_compare_{cuda,pjrtkit}.json record per case (compile + timed calls; cuda: 10 contenders,
# pjrtkit: our 5) fwd attention 12-21 s / 7-13 s, fwd+bwd 30-43 s / 17-27 s, layer norm
# 2-5 s / 1-3 s: 167 s / 108 s, about 4.5 minutes with the starts, checks and the merge. A7-A10 and
# H1-H5 (7 fwd+bwd cases, 2 fwd; docs/results/kernels/kernel_compare_a7_to_h5_*.json): per case
# 12-43 s / 6-24 s, 255 s / 146 s; that run took 284 s (cuda) + 169 s (pjrtkit), 465 s in all.
# The default list, every case: about 12.5 minutes (cuda ~8, pjrtkit ~4.5).
# Limits (seconds, ~1.4x those): PROBE_TIMEOUT 90, CUDA_TIMEOUT 660, PJRTKIT_TIMEOUT 420,
# DUAL_TIMEOUT 1080. Where one command may run 10 minutes at most, run it in two calls:
# CASES=A1,A2,A3,A4,L1,L2,L3,L4,A5,A6 (about 4.5 minutes; CUDA_TIMEOUT=300 PJRTKIT_TIMEOUT=180
# keep it under 10) and CASES=A7,A8,A9,A10,H1,H2,H3,H4,H5 (465 s; CUDA_TIMEOUT=330
# PJRTKIT_TIMEOUT=230).
# Every run writes its files after each case, so one cut by its time limit keeps what it measured.
set -uo pipefail
cd "$(dirname "$0")/../.."
KIT=$PWD
OUT=${OUT:-/tmp/kernels_speed_out}; mkdir -p "$OUT"
PY=${PYTHON:-python3}
MODE=${MODE:-two}
case "$MODE" in
  two|dual|auto|cuda) ;;
  *) echo "speed.sh: MODE must be two, dual, auto or cuda, got '$MODE'" >&2; exit 2 ;;
esac
# ITERATIONS, CASES (e.g. A1,A2,L1) and COMPARE_ARGS (e.g. --quick: a smoke test; --rounds 3, the
# default: interleaved timing rounds per case; --contenders pk_None,pk_mosaic,pk_triton,cuDNN,
# tokamax_mosaic,tokamax_triton,XLA_jnp: every contender but the XLA attention ones, whose
# compiles took 166 of 387 s of compiling in the last run with them, every case in 311 s with 3
# rounds: docs/results/kernels/kernel_compare_cuda_speed_h200.log) reach every run.
ARGS=(--iterations "${ITERATIONS:-10}" ${CASES:+--cases "$CASES"} ${COMPARE_ARGS:-})
S="$OUT/summary.txt" LOG="$OUT/speed.log"
: > "$S"; : > "$LOG"
say() { echo "$*" | tee -a "$S"; }
export TF_CPP_MIN_LOG_LEVEL=3 PYTHONUNBUFFERED=1
[ -f pjrtkit_plugin.so ] && export PJRTKIT_PLUGIN_LIBRARY="$KIT/pjrtkit_plugin.so"
[ -f pjrtkit_kernels.so ] && export PJRTKIT_KERNELS_LIBRARY="$KIT/pjrtkit_kernels.so"

if ls wheels/*.whl > /dev/null 2>&1; then
  # --upgrade: on a machine kept warm between calls, .pydeps may hold directories of an earlier
  # install that the tree copy emptied; pip would skip them ("Target directory ... already
  # exists"), leaving an empty tokamax/ that imports as a namespace package (twelfth session).
  $PY -m pip install --quiet --upgrade --no-index --no-deps --target "$KIT/.pydeps" wheels/*.whl \
    >> "$LOG" 2>&1
  say "wheels: pip install rc=$? ($(ls wheels/*.whl | wc -l) wheels into .pydeps)"
else
  say "wheels: none in the kit (Tokamax will skip with its import error)"
fi
export PYTHONPATH="$KIT:$KIT/python:$KIT/.pydeps:$KIT/tools/kernels_gpu/tokamax_shims${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$S"
say "python: $($PY -c 'import sys, jax, jaxlib; print(sys.version.split()[0], "jax", jax.__version__, "jaxlib", jaxlib.__version__)' 2>&1 | tail -1)"
say "tokamax: $($PY -c 'import tokamax; print(tokamax.__version__, tokamax.__file__)' 2>&1 | tail -1)"

compare() {  # compare <timeout> <JAX_PLATFORMS> <args...>: one kernel_compare process
  local limit=$1 platforms=$2 start=$SECONDS; shift 2
  echo "=== JAX_PLATFORMS=$platforms kernel_compare $*" >> "$LOG"
  JAX_PLATFORMS=$platforms timeout "$limit" $PY -m tools.bench.kernel_compare --out "$OUT" "$@" \
    >> "$LOG" 2>&1
  local rc=$?
  say "run JAX_PLATFORMS=$platforms $*: rc=$rc$([ $rc = 124 ] && echo " (time limit $limit s)") in $((SECONDS - start)) s"
  return $rc
}

if [ "$MODE" = auto ]; then
  probe=$(mktemp -d)
  echo "=== probe: one process, pjrtkit and cuda" >> "$LOG"
  XLA_PYTHON_CLIENT_PREALLOCATE=false JAX_PLATFORMS=pjrtkit,cuda timeout "${PROBE_TIMEOUT:-90}" \
    $PY -m tools.bench.kernel_compare --out "$probe" --quick --cases A3,L1 --contenders ours \
    --platforms cuda,pjrtkit --iterations 2 --no-png >> "$LOG" 2>&1
  rc=$?
  verdict=$($PY - "$probe/kernel_compare_cuda-pjrtkit.json" <<'PY' 2>&1
import json, sys
try:
  doc = json.load(open(sys.argv[1]))
except Exception as e:
  print(f"no probe output ({e})"); sys.exit(1)
ok = {r["platform"]: sum(x["status"] == "ok" for x in r["rows"]) for r in doc["runs"]}
print("ran on both:", ok if all(ok.values()) and len(ok) == 2 else f"NOT both: {ok}")
sys.exit(0 if all(ok.values()) and len(ok) == 2 else 1)
PY
)
  vrc=$?
  rm -rf "$probe"
  say "one-process probe (pjrtkit + cuda): rc=$rc; $verdict"
  MODE=$([ $rc = 0 ] && [ $vrc = 0 ] && echo dual || echo two)
fi

if [ "$MODE" = dual ]; then
  XLA_PYTHON_CLIENT_PREALLOCATE=false compare "${DUAL_TIMEOUT:-1080}" pjrtkit,cuda \
    --platforms cuda,pjrtkit --ours-only pjrtkit "${ARGS[@]}"
  results=("$OUT/kernel_compare_cuda-pjrtkit.json")
  tables=("$OUT/kernel_compare_cuda-pjrtkit.md")
elif [ "$MODE" = cuda ]; then
  compare "${CUDA_TIMEOUT:-660}" cuda "${ARGS[@]}"
  results=()
  tables=("$OUT/kernel_compare_cuda.md")
else
  compare "${CUDA_TIMEOUT:-660}" cuda "${ARGS[@]}"
  compare "${PJRTKIT_TIMEOUT:-420}" pjrtkit --contenders ours --no-png "${ARGS[@]}"
  results=("$OUT/kernel_compare_cuda.json" "$OUT/kernel_compare_pjrtkit.json")
  tables=("$OUT/kernel_compare_cuda.md")
fi
say "mode: $MODE (dual = one process for both platforms)"

merge_out=$(mktemp -d)
if [ ${#results[@]} -gt 0 ]; then
  $PY -m tools.bench.kernel_compare merge "${results[@]}" --out "$merge_out" >> "$LOG" 2>&1
  say "merge rc=$?"
  cp "$merge_out/kernel_compare_platforms.json" "$OUT/" 2> /dev/null
fi
for t in "${tables[@]}" "$merge_out/kernel_compare_platforms.md"; do
  [ -f "$t" ] && { echo; cat "$t"; } >> "$S"
done
rm -rf "$merge_out"
say "total: $SECONDS s"
ls "$OUT" | tee -a "$S"
