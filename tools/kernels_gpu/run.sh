#!/usr/bin/env bash
# GPU checks of pjrtkit.kernels on the H200 machine (Python 3.12, jax/jaxlib 0.11.2,
# jax-cuda13-plugin, no internet). Runs the kernel tests with real Triton / Mosaic GPU kernels and
# the kernel benchmark, on JAX's own CUDA backend and, when pjrtkit's plugin runs on a GPU there,
# on platform "pjrtkit"; writes logs, JSON and PNGs into $OUT.
#   PYTHONPATH=$PWD:$PWD/python:$PWD/gpu_carry bash tools/kernels_gpu/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/kernels_gpu_out}; mkdir -p "$OUT"
PY=${PYTHON:-python3.12}
export PYTHONPATH="$PWD:$PWD/python${PYTHONPATH:+:$PYTHONPATH}" TF_CPP_MIN_LOG_LEVEL=3
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
for platform in cuda pjrtkit; do
  kind=$(JAX_PLATFORMS=$platform timeout 120 $PY -c 'import jax; d=jax.devices()[0]; print(d.platform, "|", d.device_kind)' 2>"$OUT/$platform.detect.err" | tail -1)
  echo "$platform: ${kind:-unavailable}" | tee -a "$OUT/summary.txt"
  case "$kind" in *NVIDIA*) ;; *) echo "  skipped: no GPU device on platform $platform" | tee -a "$OUT/summary.txt"; continue ;; esac
  JAX_PLATFORMS=$platform timeout 240 $PY - > "$OUT/$platform.snippet.log" 2>&1 <<'PY'
import jax, jax.numpy as jnp
from pjrtkit import kernels as pk
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
result = pk.autotune(f_grad, x, scale)
with result: out = f_grad(x, scale)
result = pk.AutotuningResult.loads(result.dumps())
exported = jax.export.export(f_grad, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
    jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(scale.shape, scale.dtype))
f_std, args = pk.benchmarking.standardize_function(loss, kwargs={"x": x, "scale": scale})
run = pk.benchmarking.compile_benchmark(f_std, args)
bench = run(args)
print("snippet OK", bench.method, bench.median_evaluation_time_ms, "ms")
print(result.dumps())
PY
  echo "  snippet rc=$?" | tee -a "$OUT/summary.txt"
  for t in kernels/layer_norm/layer_norm_test.py kernels/dot_product_attention/dot_product_attention_test.py; do
    JAX_PLATFORMS=$platform timeout 300 $PY -m pytest -q -p no:cacheprovider "$t" > "$OUT/$platform.$(basename $t .py).log" 2>&1
    echo "  $t rc=$? $(tail -1 "$OUT/$platform.$(basename $t .py).log")" | tee -a "$OUT/summary.txt"
  done
  JAX_PLATFORMS=$platform timeout 300 $PY -m tools.bench.kernels --size gpu --out "$OUT" > "$OUT/$platform.bench.log" 2>&1
  echo "  bench rc=$?" | tee -a "$OUT/summary.txt"
done
