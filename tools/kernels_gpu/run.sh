#!/usr/bin/env bash
# GPU checks of pjrtkit.kernels on the H200 machine (Python 3.12, jax/jaxlib 0.11.2,
# jax-cuda13-plugin, Triton, pytest-xdist, no internet), from a kit made by tools/gpu/make_kit.sh
# (or a checkout). On JAX's own CUDA backend ("cuda") and on pjrtkit's GPU device ("pjrtkit"):
#   1. (both platforms at once, 4 pytest workers each, no preallocation) the issue's snippet as
#      written, then the kernel tests with the compiled Triton / Mosaic GPU kernels;
#   2. (one platform at a time) the kernel benchmark, tools/bench/kernels.py --size gpu.
# Writes summary.txt, <platform>.log, and the benchmark's JSON and PNG into $OUT (8 files at
# most come back from the device machine). Steps have time limits (SNIPPET_TIMEOUT 240,
# TESTS_TIMEOUT 400, BENCH_TIMEOUT 150 s; TEST_TIMEOUT 200 s per test: a float32 Triton compile
# at head_dim 128 took over 90 s with 8 workers on 16 cores). On 2026-12-01 the snippet took
# ~100 s and both platforms' tests did not finish in 250 s, so a full run needs more than one
# 600 s device call: SNIPPET=0 skips the snippet, PYTEST_K picks tests by pytest -k, TEST_FILES
# the test files, DEADLINE=0 skips the benchmark.
#   bash tools/kernels_gpu/run.sh [platform ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/kernels_gpu_out}; mkdir -p "$OUT"
PY=${PYTHON:-python3}
PLATFORMS=${*:-cuda pjrtkit}
export PYTHONPATH="$PWD:$PWD/python${PYTHONPATH:+:$PYTHONPATH}" TF_CPP_MIN_LOG_LEVEL=3
export PYTHONUNBUFFERED=1
[ -f pjrtkit_plugin.so ] && export PJRTKIT_PLUGIN_LIBRARY="$PWD/pjrtkit_plugin.so"
[ -f pjrtkit_kernels.so ] && export PJRTKIT_KERNELS_LIBRARY="$PWD/pjrtkit_kernels.so"
S="$OUT/summary.txt"
say() { echo "$*" | tee -a "$S"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$S"
say "jax: $($PY -c 'import jax, jaxlib; print(jax.__version__, jaxlib.__version__)' 2>&1 | tail -1)"

snippet() {
  JAX_PLATFORMS=$1 timeout ${SNIPPET_TIMEOUT:-240} $PY - <<'PY'
import time
import jax, jax.numpy as jnp
from pjrtkit import kernels as pk
print("device:", jax.devices()[0], jax.devices()[0].device_kind)
def loss(x, scale):
  x = pk.layer_norm(x, scale=scale, offset=None, implementation="triton")
  x = pk.dot_product_attention(x, x, x, implementation="xla_chunked")
  x = pk.layer_norm(x, scale=scale, offset=None, implementation=None)
  x = pk.dot_product_attention(x, x, x, implementation="mosaic")
  return jnp.sum(x)
f_grad = jax.jit(jax.grad(loss))
channels, seq_len, batch_size, num_heads = (64, 2048, 32, 16)
key = jax.random.key(0)
x = jax.random.normal(key, (batch_size, seq_len, num_heads, channels), jnp.bfloat16)
scale = jax.random.normal(key, (channels,), jnp.bfloat16)
t0 = time.time()
result = pk.autotune(f_grad, x, scale)       # -> pk.AutotuningResult
print(f"autotune {time.time() - t0:.1f} s")
with result: out = f_grad(x, scale)
result = pk.AutotuningResult.loads(result.dumps())
exported = jax.export.export(f_grad, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
    jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(scale.shape, scale.dtype))
back = jax.export.deserialize(exported.serialize())
again = back.call(x, scale)
with result: out2 = f_grad(x, scale)
f_std, args = pk.benchmarking.standardize_function(loss, kwargs={"x": x, "scale": scale})
run = pk.benchmarking.compile_benchmark(f_std, args)
bench = run(args)                            # pk.benchmarking.BenchmarkData
finite = bool(jnp.all(jnp.isfinite(out.astype(jnp.float32))))
# Replays agree to rounding, not bitwise: the fused Mosaic backward adds dQ by atomic reduce-adds.
replay_diff = float(jnp.max(jnp.abs(out2.astype(jnp.float32) - out.astype(jnp.float32))))
print("exported platforms", exported.platforms, "replay equal", bool((out2 == out).all()),
      f"replay max|diff| {replay_diff:.3g} of max|out| {float(jnp.max(jnp.abs(out.astype(jnp.float32)))):.3g}",
      "deserialized finite", bool(jnp.all(jnp.isfinite(again.astype(jnp.float32)))))
print(f"snippet OK finite={finite} method={bench.method} median={bench.median_evaluation_time_ms:.3f} ms "
      f"compile={bench.compile_time_ms:.0f} ms peak_memory={bench.peak_memory_mb} MB")
for c in result.choices:
  print("tuned", c.op, c.phase, c.requested, "->", c.implementation, dict(c.config),
        f"{c.time_ms:.3f} ms")
PY
}

tests() {
  JAX_PLATFORMS=$1 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout $2 $PY -m pytest -n ${WORKERS:-4} \
    -p no:cacheprovider -v --timeout=${TEST_TIMEOUT:-200} --tb=line -rfE ${PYTEST_K:+-k "$PYTEST_K"} \
    ${TEST_FILES:-kernels/layer_norm/layer_norm_test.py \
      kernels/dot_product_attention/dot_product_attention_test.py \
      kernels/dot_product_attention/options_test.py kernels/benchmarking_test.py}
}

platform_checks() {
  local p=$1 log="$OUT/$1.log"
  kind=$(JAX_PLATFORMS=$p timeout 120 $PY -c 'import jax; d=jax.devices()[0]; print(d.platform, "|", d.device_kind)' 2>>"$log" | tail -1)
  echo "$p: ${kind:-unavailable}" > "$OUT/.$p.summary"
  case "$kind" in *NVIDIA*) ;; *) echo "  skipped: no GPU device on platform $p" >> "$OUT/.$p.summary"; return ;; esac
  if [ "${SNIPPET:-1}" != 0 ]; then
    XLA_PYTHON_CLIENT_PREALLOCATE=false snippet "$p" >> "$log" 2>&1
    rc=$?
    echo "  snippet rc=$rc: $(grep -a '^snippet OK' "$log" | tail -1)" >> "$OUT/.$p.summary"
  fi
  tests "$p" ${TESTS_TIMEOUT:-400} >> "$log" 2>&1
  echo "  tests rc=$?: $(grep -aE '^=+ .*[0-9]+ (passed|failed)' "$log" | tail -1)" >> "$OUT/.$p.summary"
}

for p in $PLATFORMS; do platform_checks "$p" & done
wait
for p in $PLATFORMS; do cat "$OUT/.$p.summary" | tee -a "$S"; rm -f "$OUT/.$p.summary"; done

# The benchmark, pjrtkit first, each only while it still fits before $DEADLINE seconds.
for p in $(echo $PLATFORMS | tr ' ' '\n' | sort -r); do
  grep -aq "^$p: .*NVIDIA" "$S" || continue
  if (( SECONDS + ${BENCH_TIMEOUT:-150} > ${DEADLINE:-560} )); then
    say "$p bench skipped: would pass the ${DEADLINE:-560} s deadline"; continue
  fi
  JAX_PLATFORMS=$p timeout ${BENCH_TIMEOUT:-150} $PY -m tools.bench.kernels --size gpu --iterations ${ITERATIONS:-5} --out "$OUT" \
    >> "$OUT/$p.log" 2>&1
  rc=$?
  say "$p bench rc=$rc"
  sed -n '/^device: /,$p' "$OUT/$p.log" | grep -a '^|\|^device' | tee -a "$S"
done
