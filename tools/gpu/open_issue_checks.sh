#!/usr/bin/env bash
# The GPU checks the open issues' done-criteria name, in parts that each fit one 10-minute call
# on the H200 machine, from a kit made by tools/gpu/make_kit.sh with JAX's test sources beside it:
#
#   bash tools/gpu/make_kit.sh .gpu/kit
#   .venv/bin/python -m tools.jax_suite extract --compat --git-dir JAX_GIT_DIR --rev cec06d116c \
#       --dest /tmp/jaxsrc
#   mkdir -p .gpu/kit/jaxsrc/tests && cp /tmp/jaxsrc/{conftest.py,pyproject.toml} .gpu/kit/jaxsrc/ &&
#   cp /tmp/jaxsrc/tests/{aot,array_interoperability,buffer_callback,pytorch_interoperability}_test.py \
#       .gpu/kit/jaxsrc/tests/            # the 8.5 MB of tests/ trimmed to part j's files
#   (device machine, carry .gpu)  OUT=$OUT PART=j bash .gpu/kit/tools/gpu/open_issue_checks.sh
#
# PART (letters, run in the order given; default "j"; each part alone fits one 10-minute call
# with the default limits, T and TT below; several parts in one call add up):
#   j  JAX's test files of issue 52 (aot, array_interoperability, buffer_callback,
#      pytorch_interoperability) on JAX's CUDA backend and pjrtkit's GPU device side by side
#      (tools/gpu/jax_files_vs_cuda.py; JAX_FILES picks others).
#   g  tests/jax/gpu_features_test.py on pjrtkit and on cuda (DLPack float8 and zero-size,
#      CuPy/__cuda_array_interface__, buffer_callback, AOT for a topology).
#   t  the kernel tests of ragged_dot, gated_linear_unit, the cross-entropy and
#      triangle_multiplication on both platforms (compiled Triton kernels; issue 51).
#   m  the cross-entropy's largest temporaries as the vocabulary grows, ours and Tokamax's
#      (pjrtkit.kernels.linear_softmax_cross_entropy_loss.memory; issue 51).
#   k  the kernel comparison at ragged_dot's and gated_linear_unit's cases (RD*, GL*) against
#      Tokamax and XLA in one process (tools/kernels_gpu/speed.sh MODE=cuda; issue 51).
#   s  the kernel comparison at attention's shape classes (S1-S13; CASES_S picks some) against
#      cuDNN and Tokamax in one process (speed.sh MODE=cuda; issue 50; with TT=520 for all 13).
#   v  the gated linear unit's forward+backward at GL4/GL5's shapes: pjrtkit "xla", its gradient's
#      products in the inputs' dtype, JAX's autodiff of one einsum, Tokamax's xla and mosaic
#      (tools/kernels_gpu/glu_grad_bench.py; issue 51).
#   a  Mosaic attention's padded head dims (80, 96) and folded query groups (decode, short
#      chunks), compiled, against the reference (dot_product_attention_test; issue 50).
#   c  the implementation=None sweep over the shape classes (S1-S13: head dims 80-256, ragged
#      lengths, group ratios 4-32, float16, decode), first half (tools/kernels_gpu/sweep.sh
#      GRID=classes PART=1/2, --check against cuDNN and Tokamax; issue 50).
#   x  the sweep's second half and the deterministic gradient's cost (issue 50), then the same
#      cost with --xla_gpu_deterministic_ops=true set from the process's start.
#   d  the fused Mosaic backward with dQ summed in int32 fixed point: its GPU tests (bitwise
#      repeatable, against the split kernels) beside the fused backward's, then its cost beside
#      the float32 and split backwards at five shapes (determinism_bench; issue 50).
# Each part appends to $OUT/summary.txt and writes its own logs under $OUT. Time limits per
# step: T (default 120 s) for test steps, TT (270 s) for benchmarks. Exits 1 when a step failed
# or ran out of time.
set -uo pipefail
cd "$(dirname "$0")/../.."
KIT=$PWD
OUT=${OUT:-/tmp/open_issue_checks}; mkdir -p "$OUT"
PY=${PYTHON:-python3}
T=${T:-120}; TT=${TT:-270}
fail=0
S="$OUT/summary.txt"
say() { echo "$*" | tee -a "$S"; }
export TF_CPP_MIN_LOG_LEVEL=3 PYTHONUNBUFFERED=1
[ -f pjrtkit_plugin.so ] && export PJRTKIT_PLUGIN_LIBRARY="$KIT/pjrtkit_plugin.so"
[ -f pjrtkit_kernels.so ] && export PJRTKIT_KERNELS_LIBRARY="$KIT/pjrtkit_kernels.so"
if ls wheels/*.whl > /dev/null 2>&1 && [ ! -d "$KIT/.pydeps/tokamax" ]; then
  $PY -m pip install --quiet --upgrade --no-index --no-deps --target "$KIT/.pydeps" wheels/*.whl \
    > "$OUT/pip.log" 2>&1
fi
export PYTHONPATH="$KIT:$KIT/python:$KIT/.pydeps:$KIT/tools/kernels_gpu/tokamax_shims${PYTHONPATH:+:$PYTHONPATH}"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
say "jax: $($PY -c 'import jax, jaxlib; print(jax.__version__, jaxlib.__version__)' 2>&1 | tail -1)"

# timed NAME LIMIT LOG COMMAND...: runs COMMAND under `timeout`, output into LOG, one summary line.
timed() {
  local name=$1 limit=$2 log=$3 start=$SECONDS; shift 3
  timeout "$limit" "$@" >> "$log" 2>&1
  local rc=$?
  say "$name: rc=$rc$([ $rc = 124 ] && echo " (time limit $limit s)") in $((SECONDS - start)) s"
  [ $rc = 0 ] || fail=1
  return $rc
}

# pytest's last line ("3 failed, 40 passed in 12.3s", with or without ===).
pytest_line() { grep -aE '[0-9]+ (passed|failed|skipped|errors?)\b.* in [0-9.]+s' "$1" | tail -1; }

part_j() {
  local f
  if [ -d jaxsrc/tests ]; then
    for f in ${JAX_FILES:-aot_test.py array_interoperability_test.py buffer_callback_test.py \
               pytorch_interoperability_test.py}; do
      timed "j: $f, cuda vs pjrtkit" "$T" "$OUT/jax_files.log" \
        $PY -m tools.gpu.jax_files_vs_cuda --tests-dir jaxsrc/tests --out "$OUT/jax_${f%.py}" \
        --workers 4 "$f"
      sed -n '3,$p' "$OUT/jax_${f%.py}/summary.md" 2>/dev/null | grep -v '^$' >> "$S"
    done
  else
    say "j: no jaxsrc/tests in the kit (this script's header says how to add JAX's tests)"
    fail=1
  fi
}

part_g() {
  for p in pjrtkit cuda; do
    GPU_TEST_PLATFORM=$p timed "g: gpu_features_test on $p" "$T" "$OUT/gpu_features_$p.log" \
      $PY -m pytest -p no:cacheprovider -p no:benchmark -q -rfEs --tb=short \
      tests/jax/gpu_features_test.py
    say "   $(pytest_line "$OUT/gpu_features_$p.log")"
    grep -a "^FAILED\|^ERROR" "$OUT/gpu_features_$p.log" | head -20 >> "$S"
  done
}

part_t() {
  local p line files="kernels/ragged_dot/ragged_dot_test.py kernels/ragged_dot/triton_test.py
    kernels/ragged_dot/mosaic_test.py
    kernels/gated_linear_unit/gated_linear_unit_test.py kernels/gated_linear_unit/triton_test.py
    kernels/gated_linear_unit/mosaic_test.py
    kernels/linear_softmax_cross_entropy_loss/linear_softmax_cross_entropy_loss_test.py
    kernels/triangle_multiplication/triangle_multiplication_test.py"
  for p in pjrtkit cuda; do
    JAX_PLATFORMS=$p,cpu XLA_PYTHON_CLIENT_PREALLOCATE=false timed "t: kernel tests on $p" "$TT" \
      "$OUT/kernel_tests_$p.log" $PY -m pytest -n 6 -p no:cacheprovider -p no:benchmark -q \
      -rfE --tb=short --timeout=150 $files &
  done
  wait  # (the background steps' `fail` stays in their subshells: read the logs instead)
  for p in pjrtkit cuda; do
    line=$(pytest_line "$OUT/kernel_tests_$p.log")
    [[ "$line" == *passed* && "$line" != *failed* && "$line" != *error* ]] || fail=1
    say "   $p: $(pytest_line "$OUT/kernel_tests_$p.log")"
    grep -a "^FAILED\|^ERROR" "$OUT/kernel_tests_$p.log" | head -20 >> "$S"
  done
}

part_m() {
  for p in pjrtkit cuda; do
    JAX_PLATFORMS=$p timed "m: cross-entropy temporaries on $p" "$T" "$OUT/ce_memory_$p.log" \
      $PY -m pjrtkit.kernels.linear_softmax_cross_entropy_loss.memory --b 8192 --h 4096 \
      --vocab 32768,65536,131072,262144
    grep -av "^WARNING\|^I0000\|^W0000" "$OUT/ce_memory_$p.log" | tail -14 >> "$S"
  done
}

speed() {  # speed NAME CASES: the comparison's cuda process at CASES
  local dir="$OUT/speed_$1"
  OUT=$dir MODE=cuda CASES=$2 CUDA_TIMEOUT=$TT COMPARE_ARGS="${COMPARE_ARGS:---rounds 3}" \
    timed "$1: kernel comparison $2" $((TT + 60)) "$OUT/speed_$1.log" \
    bash tools/kernels_gpu/speed.sh
  [ -f "$dir/summary.txt" ] && cat "$dir/summary.txt" >> "$S"
}

part_k() { speed k "${CASES_K:-RD1,RD2,RD3,RD4,RD5,RD6,RD7,RD8,RD9,GL1,GL2,GL3,GL4,GL5}"; }

part_s() {  # the fused-kernel contenders of the comparison's last full run (no XLA ones)
  COMPARE_ARGS="${COMPARE_ARGS:---rounds 3 --contenders pk_None,pk_mosaic,pk_triton,cuDNN,tokamax_mosaic,tokamax_triton}" \
    speed s "${CASES_S:-S1,S2,S3,S4,S5,S6,S7,S8,S9,S10,S11,S12,S13}"
}

part_v() {  # the gated linear unit's gradient written three ways, against Tokamax's
  JAX_PLATFORMS=cuda timed "v: GLU gradient variants (cuda)" "$TT" "$OUT/glu_grad.log" \
    $PY -m tools.kernels_gpu.glu_grad_bench --out "$OUT/glu_grad"
  grep -a "^|" "$OUT/glu_grad.log" | tail -16 >> "$S"
}
sweep() {  # sweep NAME K/N: part K of N of the sweep's grid (GRID, default "classes") on cuda
  local dir="$OUT/sweep_$1"
  OUT=$dir PART=$2 GRID=${GRID:-classes} SWEEP_TIMEOUT=$TT BUDGET_S=$((TT - 40)) \
    timed "$1: sweep ${GRID:-classes} part $2 (cuda)" $((TT + 30)) "$OUT/sweep_$1.log" \
    bash tools/kernels_gpu/sweep.sh cuda
  [ -f "$dir/summary.txt" ] && cat "$dir/summary.txt" >> "$S"
}

attention_tests() {  # attention_tests TITLE LOG -k-EXPR [LIMIT]: dot_product_attention_test
  JAX_PLATFORMS=pjrtkit,cpu timed "$1" "${4:-$T}" "$OUT/$2" $PY -m pytest -p no:cacheprovider \
    -p no:benchmark -q -rfE --tb=short kernels/dot_product_attention/dot_product_attention_test.py \
    -k "$3"
  say "   $(pytest_line "$OUT/$2")"
  grep -a "^FAILED\|^ERROR" "$OUT/$2" | head -8 >> "$S"
}

part_a() {
  # Mosaic attention at head dims its kernels are not built for (80, 96: zero-padded to 128)
  # and with query groups folded into rows (decode, short chunks), compiled, forward and
  # gradients against the reference.
  attention_tests "a: mosaic attention, padded and folded (pjrtkit)" attention_padded.log \
    "pallas_on_gpu and mosaic and (gqa_80 or mha_96 or decode_gqa)"
}

part_c() { sweep c 1/2; }

part_x() {
  sweep x 2/2
  JAX_PLATFORMS=cuda timed "x: determinism (cuda)" "$TT" "$OUT/determinism.log" \
    $PY -m tools.kernels_gpu.determinism_bench --out "$OUT/determinism"
  grep -a "^|" "$OUT/determinism.log" | tail -12 >> "$S"
  # The flag from the process's start, as XLA reads it (cuDNN's backward then deterministic too).
  XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_gpu_deterministic_ops=true" JAX_PLATFORMS=cuda \
    timed "x: determinism, XLA flag from the start (cuda)" "$TT" "$OUT/determinism_flag.log" \
    $PY -m tools.kernels_gpu.determinism_bench --out "$OUT/determinism_flag"
  grep -a "^|" "$OUT/determinism_flag.log" | tail -12 >> "$S"
}

part_d() {
  # 14 tests, the 4 fixed-point ones compiling 4 gradients each: the benchmarks' limit.
  attention_tests "d: mosaic backward, fixed-point dQ (pjrtkit)" attention_fixed_point.log \
    "fixed_point or fused_backward" "$TT"
  local shapes=32x2048x16x64,16x1024x32x128,16x1024x32x128:causal,1x16384x16x128
  JAX_PLATFORMS=cuda timed "d: determinism, fixed point (cuda)" "$TT" "$OUT/determinism_d.log" \
    $PY -m tools.kernels_gpu.determinism_bench --implementations mosaic \
    --out "$OUT/determinism_d" --shapes "${SHAPES_D:-$shapes,4x4096x32x8x128:causal}"
  grep -a "^|" "$OUT/determinism_d.log" | tail -8 >> "$S"
}

PARTS=${PART:-j}
unset PART  # sweep.sh reads PART as its own (K/N)
for part in $(echo "$PARTS" | grep -o '[[:alnum:]]'); do  # "gt", "g t" and "g,t" alike
  case "$part" in
    j|g|t|m|k|s|v|a|c|x|d) say "=== part $part"; "part_$part" ;;
    *) say "unknown part '$part' (accepted: j g t m k s v a c x d)"; fail=1 ;;
  esac
done
say "total: $SECONDS s"
exit $fail
