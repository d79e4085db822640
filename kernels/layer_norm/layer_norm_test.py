"""layer_norm: every implementation against the reference, forward and gradient.

"triton" and "mosaic" run in Pallas interpret mode without a GPU (CI) and compiled on an NVIDIA
GPU (tools/kernels_gpu: the same tests, plus `test_pallas_on_gpu`; "native" is skipped there).
Tolerances: `pjrtkit.kernels.testing.TOLERANCES`.
"""

from __future__ import annotations

import contextlib
import os
import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.layer_norm.base import reference  # noqa: E402

CASES = [  # (shape, axis, subtract_mean, with scale/offset)
    ((3, 5, 37), -1, True, True),     # odd channels, rows not a multiple of any block
    ((4, 64), -1, False, True),       # RMS norm, even shape
    ((6, 33), 0, True, False),        # another axis, no scale/offset
]


def _loss(fn, x, scale, offset):
  return jnp.sum(jnp.sin(fn(x, scale, offset).astype(jnp.float32)))


def _check(impl: str, dtype: str, shape, axis, subtract_mean, affine) -> None:
  k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
  x = jax.random.normal(k1, shape, dtype)
  c = shape[axis]
  scale = jax.random.normal(k2, (c,), jnp.float32) if affine else None
  offset = jax.random.normal(k3, (c,), jnp.float32) if affine else None
  ours = lambda x, s, o: pk.layer_norm(x, s, o, axis=axis, subtract_mean=subtract_mean,
                                       implementation=impl)
  ref = lambda x, s, o: reference(x, s, o, axis=axis, subtract_mean=subtract_mean)
  argnums = (0, 1, 2) if affine else (0,)
  testing.skip_unless_runnable(impl)
  with pk.pallas_interpret(testing.interpret(impl)):
    y = jax.jit(ours)(x, scale, offset)
    grads = jax.jit(jax.grad(lambda *a: _loss(ours, *a), argnums=argnums))(x, scale, offset)
  testing.assert_close(y, ref(x, scale, offset), dtype, "fwd")
  want = jax.grad(lambda *a: _loss(ref, *a), argnums=argnums)(x, scale, offset)
  for g, w in zip(grads, want):
    testing.assert_close(g, w, dtype, "grad")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("impl", ["xla", "native"])
def test_numerics(impl, case, dtype):
  _check(impl, dtype, *case)


# The native backward cuts rows into at most 64 chunks fixed by the shape (each sums its own
# dscale/doffset partials) and recomputes the statistics from x: one row, rows not divisible by
# the thread count or the chunk size, more rows than channels, many channels.
NATIVE_CASES = [
    ((1, 5000), -1, True, True),      # one row, channels not a multiple of any vector width
    ((203, 2048), -1, True, True),    # 13 chunks of 16 rows, the last one of 11
    ((4099, 8), -1, False, True),     # 2 chunks of 4096 and 3 rows
    ((1000, 4096), -1, True, True),   # 63 chunks of 16 rows, the last one of 8
    ((7, 3, 129), 1, True, True),     # the normalised axis in the middle (a transposed dy)
]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", NATIVE_CASES)
def test_native_reduction_shapes(case, dtype):
  _check("native", dtype, *case)


@contextlib.contextmanager
def _all_threads_on(cpus: set[int]):
  """Pins every thread of this process to `cpus` (threads started meanwhile inherit it)."""
  tids = [int(t) for t in os.listdir("/proc/self/task")]
  saved = {t: os.sched_getaffinity(t) for t in tids}
  try:
    for t in tids:
      os.sched_setaffinity(t, cpus)
    yield
  finally:
    for t, mask in saved.items():
      with contextlib.suppress(OSError):  # A thread that has ended meanwhile.
        os.sched_setaffinity(t, mask)


def test_native_gradient_does_not_depend_on_the_thread_count():
  """dx, dscale and doffset are the same bits on one CPU and on all of them, in every repeat.

  (The partials are per chunk, not per thread. On a busy machine the second thread sometimes
  starts too late to claim a chunk, so a per-thread version would fail only some runs.)"""
  testing.skip_unless_runnable("native")
  k1, k2, k3 = jax.random.split(jax.random.key(1), 3)
  x = jax.random.normal(k1, (4096, 512), jnp.float32)
  scale = jax.random.normal(k2, (512,), jnp.float32)
  offset = jax.random.normal(k3, (512,), jnp.float32)
  f = jax.jit(jax.grad(lambda *a: _loss(
      lambda x, s, o: pk.layer_norm(x, s, o, implementation="native"), *a), argnums=(0, 1, 2)))
  many = [jax.block_until_ready(f(x, scale, offset)) for _ in range(4)]
  with _all_threads_on({min(os.sched_getaffinity(0))}):
    one = jax.block_until_ready(f(x, scale, offset))
  for got in many:
    for a, b in zip(got, one):
      assert bool((a == b).all())


@pytest.mark.parametrize("impl,dtype,case", [
    ("triton", "float32", CASES[0]), ("triton", "bfloat16", CASES[1]),
    ("mosaic", "float32", CASES[0]), ("mosaic", "bfloat16", CASES[1]),
])
def test_pallas_numerics_in_interpret_mode(impl, dtype, case):
  if impl == "mosaic" and testing.on_gpu():
    pytest.skip("the compiled Mosaic GPU layer_norm is refused on GPUs (test_pallas_on_gpu)")
  _check(impl, dtype, *case)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", CASES + [((1000, 4096), -1, True, True), ((4, 300, 96), 1, False,
                                                                           True)])
@pytest.mark.parametrize("impl", ["triton", "mosaic"])
def test_pallas_on_gpu(impl, case, dtype):
  testing.skip_unless_gpu()
  if impl == "mosaic":
    with pytest.raises(pk.UnsupportedImplementationError, match="not verified on a GPU"):
      pk.layer_norm(jnp.ones(case[0]), None, None, axis=case[1], implementation="mosaic")
    return
  _check(impl, dtype, *case)


@pytest.mark.parametrize("impl", ["triton", "mosaic"])
def test_gpu_implementations_refuse_the_cpu_device(impl):
  testing.skip_on_gpu("checks the refusals of pjrtkit's CPU device")
  x = jnp.ones((2, 8))
  with pytest.raises(pk.UnsupportedImplementationError) as e:
    pk.layer_norm(x, None, None, implementation=impl)
  assert str(e.value).startswith(f"layer_norm: implementation='{impl}' cannot serve this call: ")
  assert "need an NVIDIA GPU; this is platform 'pjrtkit', device kind 'pjrtkit_cpu' (no GPU)" \
      in str(e.value)


def test_argument_errors_name_the_parameter():
  x = jnp.ones((2, 8))
  with pytest.raises(ValueError, match=r"layer_norm: scale must have shape \(8,\) "
                                       r"\(x.shape\[1\]\), got \(7,\)"):
    pk.layer_norm(x, jnp.ones(7), None)
  with pytest.raises(TypeError, match="layer_norm: x must have a floating dtype"):
    pk.layer_norm(jnp.ones((2, 8), jnp.int32), None, None)
  with pytest.raises(ValueError, match="unknown implementation='xla_chunked'; accepted: 'xla', "
                                       "'native', 'triton', 'mosaic' or None"):
    pk.layer_norm(x, None, None, implementation="xla_chunked")


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
