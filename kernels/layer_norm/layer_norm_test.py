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
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import device  # noqa: E402
from pjrtkit.kernels.core import op as op_lib  # noqa: E402
from pjrtkit.kernels.core.tuned import AutotuningResult, TunedChoice  # noqa: E402
from pjrtkit.kernels.layer_norm import base  # noqa: E402
from pjrtkit.kernels.layer_norm.base import reference  # noqa: E402
from pjrtkit.kernels.layer_norm.triton import TritonLayerNorm, TritonLayerNormConfig  # noqa: E402

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


@pytest.mark.parametrize("impl", ["triton", "mosaic"])
def test_epsilon_zero_with_a_row_tail_keeps_gradients_finite(impl):
  """21 rows: the last tile is padded, and a padded row's rstd is inf when epsilon is 0; its
  normalised values must not reach the scale and offset gradients (they did for "mosaic")."""
  x = jax.random.normal(jax.random.key(3), (21, 64), jnp.float32)
  scale, offset = jnp.full((64,), 1.5, jnp.float32), jnp.full((64,), 0.25, jnp.float32)
  loss = lambda f: lambda x, s, o: jnp.sum(jnp.sin(f(x, s, o)))  # noqa: E731
  ours = loss(lambda x, s, o: pk.layer_norm(x, s, o, epsilon=0.0, implementation=impl))
  ref = loss(lambda x, s, o: reference(x, s, o, epsilon=0.0))
  with pk.pallas_interpret(testing.interpret(impl)):
    got = jax.jit(jax.grad(ours, argnums=(0, 1, 2)))(x, scale, offset)
  want = jax.grad(ref, argnums=(0, 1, 2))(x, scale, offset)
  for g, w in zip(got, want):
    assert bool(jnp.all(jnp.isfinite(g)))
    testing.assert_close(g, w, "float32", "grad")


@pytest.mark.parametrize("impl,dtype,case", [
    ("triton", "float32", CASES[0]), ("triton", "bfloat16", CASES[1]),
    ("mosaic", "float32", CASES[0]), ("mosaic", "bfloat16", CASES[1]),
])
def test_pallas_numerics_in_interpret_mode(impl, dtype, case):
  _check(impl, dtype, *case)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", CASES + [
    ((1000, 4096), -1, True, True),    # "mosaic": the wide-row forward (2 programs per SM)
    ((4, 300, 96), 1, False, True),    # "mosaic" refuses 300 channels (not a multiple of 1024)
    ((3, 2048, 5), 1, False, True),    # wide rows along another axis, RMS norm, 15 rows
    ((140, 8192), -1, True, False),    # 140 rows over 132 programs, no scale/offset
])
@pytest.mark.parametrize("impl", ["triton", "mosaic"])
def test_pallas_on_gpu(impl, case, dtype):
  testing.skip_unless_gpu()
  channels = case[0][case[1]]
  if impl == "mosaic" and channels > 256 and channels % 1024:
    with pytest.raises(pk.UnsupportedImplementationError, match="multiple of 1024"):
      pk.layer_norm(jnp.ones(case[0]), None, None, axis=case[1], implementation="mosaic")
    return
  _check(impl, dtype, *case)


_Cfg = TritonLayerNormConfig
TRITON_LOOPS = [  # (shape, channels axis, subtract_mean, affine, epsilon, config)
    ((37, 64), -1, True, True, 1e-6, _Cfg(8, 4, 2, True)),   # tail tile, 3 steps, prefetch
    ((37, 64), -1, True, True, 1e-6, _Cfg(8, 4, 2, False)),  # the same without prefetch
    ((37, 64), -1, True, True, 1e-6, _Cfg(8, 4, 0, True)),   # one program per tile
    ((3, 40), -1, True, True, 1e-6, _Cfg(1, 4, 8, True)),    # rows < programs
    ((1, 48), -1, True, True, 1e-6, _Cfg(4, 4, 4, True)),    # a single row
    ((2, 9, 100), -1, False, True, 1e-6, _Cfg(4, 4, 3, True)),  # RMS, 100 channels
    ((21, 37), -1, True, False, 0.0, _Cfg(16, 4, 1, True)),  # epsilon 0, one program, 2 steps
    ((5, 24, 7), 1, True, True, 1e-5, _Cfg(2, 4, 4, True)),  # axis not last
    # The forward reading scale and offset per tile: a loop with prefetch, one program per tile.
    ((37, 64), -1, True, True, 1e-6, _Cfg(8, 4, 2, True, reload_params=True)),
    ((5, 24, 7), 1, False, True, 1e-5, _Cfg(1, 4, 0, True, reload_params=True)),
    # Chunked configs: the forward's chunked kernel and the chunked backward (row statistics in
    # one walk over the chunks, then [block_rows, chunk] tiles over channel chunks x row groups).
    ((37, 100), -1, True, True, 1e-6, _Cfg(4, 4, 3, True, 32)),   # partial last chunk, tail
    ((37, 100), -1, True, True, 1e-6, _Cfg(2, 4, 12, True, 32)),  # 3 row groups of partials
    ((37, 128), -1, True, True, 1e-6, _Cfg(4, 4, 0, False, 32)),  # whole chunks, no prefetch
    ((5, 24, 70), 1, False, True, 1e-5, _Cfg(2, 4, 2, True, 16)),  # RMS norm, axis not last
    ((9, 64), -1, True, False, 0.0, _Cfg(1, 4, 200, True, 16)),   # programs > rows, epsilon 0
]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", TRITON_LOOPS)
def test_triton_tiles_and_backward_loop(case, dtype):
  """The "triton" kernels with explicit configs: masked tail tiles, padded channels, backward
  programs that loop over several tiles (or get none), forward and backward against the
  reference's value and VJP."""
  if testing.on_gpu():
    pytest.skip("interpret-mode check of the tiling (test_pallas_on_gpu runs the compiled kernels)")
  shape, axis, subtract_mean, affine, eps, config = case
  k1, k2, k3, k4 = jax.random.split(jax.random.key(1), 4)
  x = jax.random.normal(k1, shape, dtype) * 3 + 1
  c = shape[axis]
  scale = jax.random.normal(k2, (c,), jnp.float32) if affine else None
  offset = jax.random.normal(k3, (c,), jnp.float32) if affine else None
  dout = jax.random.normal(k4, shape, dtype)
  spec = base.make_spec(x, scale, offset, axis, eps, subtract_mean)
  op = TritonLayerNorm()

  def ours(x, scale, offset, dout):
    y, residuals = op.forward((x, scale, offset), spec, config)
    return y, op.backward(residuals, dout, spec, config)

  with pk.pallas_interpret():
    y, (dx, dscale, doffset) = jax.jit(ours)(x, scale, offset, dout)
  ref = lambda *a: reference(*a, axis=axis, epsilon=eps, subtract_mean=subtract_mean)
  want_y, vjp = jax.vjp(ref, x, scale, offset)
  want_dx, want_dscale, want_doffset = vjp(dout)
  testing.assert_close(y, want_y, dtype, "fwd")
  testing.assert_close(dx, want_dx, dtype, "grad")
  if affine:
    testing.assert_close(dscale, want_dscale, dtype, "grad")
    testing.assert_close(doffset, want_doffset, dtype, "grad")
  else:
    assert dscale is None and doffset is None


@pytest.mark.parametrize("config", [_Cfg(1, 8, 0, True, reload_params=True),
                                    _Cfg(1, 4, 132, True, reload_params=True)])
def test_triton_forward_reading_parameters_per_row_on_gpu(config):
  """Compiled: bfloat16 rows of 8192 channels with bfloat16 scale and offset read per row, one
  program per row and 132 programs looping with prefetch (300 rows: a partial last round)."""
  testing.skip_unless_gpu()
  k1, k2, k3 = jax.random.split(jax.random.key(2), 3)
  x = jax.random.normal(k1, (300, 8192), jnp.bfloat16) * 3 + 1
  scale = (1 + 0.1 * jax.random.normal(k2, (8192,))).astype(jnp.bfloat16)
  offset = (0.1 * jax.random.normal(k3, (8192,))).astype(jnp.bfloat16)
  spec = base.make_spec(x, scale, offset, -1, 1e-6, True)
  y = jax.jit(lambda *a: TritonLayerNorm().forward(a, spec, config)[0])(x, scale, offset)
  want = reference(x, scale, offset, axis=-1, epsilon=1e-6, subtract_mean=True)
  testing.assert_close(y, want, "bfloat16", "fwd")


def _eqns(jaxpr):
  """Every equation of `jaxpr` and of the jaxprs in its parameters (not inside kernels)."""
  for eqn in jaxpr.eqns:
    yield eqn
    if eqn.primitive.name == "pallas_call":
      continue
    for value in eqn.params.values():
      for sub in value if isinstance(value, (tuple, list)) else (value,):
        sub = getattr(sub, "jaxpr", sub)
        if hasattr(sub, "eqns"):
          yield from _eqns(sub)


def test_triton_forward_is_one_kernel_on_the_input_as_it_is():
  """The forward kernel reads x itself (a reshape of it) when axis is last: no pad, transpose
  or cast of x before it; the residual statistics beside it are plain JAX ops (dropped when
  unused)."""
  x = jnp.ones((4, 6, 40), jnp.bfloat16)
  with pk.pallas_interpret():
    jaxpr = jax.make_jaxpr(lambda x, s: pk.layer_norm(x, s, None, implementation="triton"))(
        x, jnp.ones((40,), jnp.bfloat16))
  eqns = list(_eqns(jaxpr.jaxpr))
  calls = [e for e in eqns if e.primitive.name == "pallas_call"]
  assert len(calls) == 1
  names = {e.primitive.name for e in eqns}
  assert not names & {"pad", "transpose", "concatenate", "dynamic_update_slice"}, names
  producer = {id(v): e for e in eqns for v in e.outvars}
  kernel_x = calls[0].invars[0]
  assert kernel_x.aval.shape == (24, 40) and kernel_x.aval.dtype == jnp.bfloat16
  assert producer[id(kernel_x)].primitive.name == "reshape"


def test_triton_config_validation_and_candidates():
  with pytest.raises(ValueError, match="block_rows must be a power of two"):
    TritonLayerNormConfig(block_rows=3)
  with pytest.raises(ValueError, match="num_warps must be one of"):
    TritonLayerNormConfig(num_warps=6)
  with pytest.raises(ValueError, match="programs must be >= 0"):
    TritonLayerNormConfig(programs=-1)
  with pytest.raises(ValueError, match="prefetch must be a bool"):
    TritonLayerNormConfig(prefetch=1)
  with pytest.raises(ValueError, match=r"chunk must be 0 \(whole rows\) or a power of two >= "
                                       r"16, got 24"):
    TritonLayerNormConfig(chunk=24)
  with pytest.raises(ValueError, match="reload_params must be a bool, got 1"):
    TritonLayerNormConfig(reload_params=1)
  for shape in [(1048576, 64), (8192, 8192), (10, 37), (2, 65536)]:
    spec = base.make_spec(jax.ShapeDtypeStruct(shape, jnp.bfloat16), None, None, -1, 1e-6, True)
    configs = TritonLayerNorm().autotuning_configs(spec)
    assert 2 <= len(configs) <= 18  # The default first, then the candidates.
    # Wide rows also try the forward reading its parameters per row (4 and 16 warps, and about
    # 32 elements per thread), and chunks of 4096 channels.
    reloading = sorted(c.num_warps for c in configs if c.reload_params)
    assert reloading == ([4, 8, 16] if shape == (8192, 8192) else
                         [4, 16, 32] if shape == (2, 65536) else []), shape
    chunks = sorted((c.chunk, c.num_warps) for c in configs if c.chunk == 4096)
    assert chunks == ([] if shape[1] <= 2048 else [(4096, 8), (4096, 16)]), shape
    assert configs[0] == TritonLayerNorm().default_config(spec)
    assert len(set(configs)) == len(configs)
    assert hash(configs[0]) == hash(TritonLayerNorm().default_config(spec))


@pytest.mark.parametrize("shape,with_params,subtract_mean", [
    ((5, 300), True, True),      # 300 channels in chunks of 64: a partial last chunk
    ((3, 256), False, True),     # whole chunks
    ((4, 100), True, False),     # RMS norm
])
def test_triton_chunked_forward_matches_the_reference(shape, with_params, subtract_mean):
  """The forward's chunked kernel (one row at a time, `chunk` channels per step; in interpret
  mode here) against the reference, with 3 programs looping over the rows."""
  x = jax.random.normal(jax.random.key(1), shape, jnp.float32) * 3 + 2
  c = shape[1]
  scale = jax.random.normal(jax.random.key(2), (c,), jnp.float32) if with_params else None
  offset = jax.random.normal(jax.random.key(3), (c,), jnp.float32) if with_params else None
  spec = base.make_spec(x, scale, offset, -1, 1e-6, subtract_mean)
  config = TritonLayerNormConfig(1, 4, 3, True, 64)
  impl = TritonLayerNorm()
  dy = jax.random.normal(jax.random.key(4), shape, jnp.float32)
  with pk.pallas_interpret():
    y, residuals = impl.forward((x, scale, offset), spec, config)
    # The chunked backward with the same config.
    grads = impl.backward(residuals, dy, spec, config)
  want, vjp = jax.vjp(lambda *a: base.reference(*a, axis=-1, epsilon=1e-6,
                                                subtract_mean=subtract_mean), x, scale, offset)
  testing.assert_close(y, want, "float32", "fwd")
  for got, expected in zip(grads, vjp(dy)):
    assert (got is None) == (expected is None)
    if expected is not None:
      testing.assert_close(got, expected, "float32", "grad")


def test_triton_chunked_backward_statistics_do_not_cancel():
  """The chunked backward merges each chunk's mean and squared deviations into the row's (Chan
  et al.'s update) and re-centres its running sum of g * (x - mean) by the exact shift of the
  mean, so rows far from zero keep their variance and their gradient: float32 rows of 200
  channels about 3000 (N(3000, 1), the first 16 channels shifted by 5), dy about 2 (so that
  sum(g) is far from 0), against the exact gradient in float64."""
  k1, k2 = jax.random.split(jax.random.key(3))
  x = (3000 + jax.random.normal(k1, (6, 200), jnp.float32)).at[:, :16].add(5)
  dy = 2 + jax.random.normal(k2, x.shape, jnp.float32)
  spec = base.make_spec(x, None, None, -1, 1e-6, True)
  op = TritonLayerNorm()
  config = TritonLayerNormConfig(2, 4, 2, True, 16)
  with pk.pallas_interpret():
    residuals = op.forward((x, None, None), spec, config)[1]
    dx = np.asarray(jax.jit(lambda r, d: op.backward(r, d, spec, config)[0])(residuals, dy))
  xd, dyd = np.asarray(x, np.float64), np.asarray(dy, np.float64)
  centred = xd - xd.mean(axis=1, keepdims=True)
  rstd = 1 / np.sqrt((centred * centred).mean(axis=1, keepdims=True) + 1e-6)
  xhat = centred * rstd
  exact = rstd * (dyd - xhat * (dyd * xhat).mean(axis=1, keepdims=True)
                  - dyd.mean(axis=1, keepdims=True))
  assert np.max(np.abs(dx - exact)) <= 2e-4 * np.max(np.abs(exact))


@pytest.mark.parametrize("shape,params", [((300, 20000), "bfloat16"), ((77, 16384), "float32"),
                                          ((40, 3, 12288), None)])
def test_triton_chunked_backward_on_gpu(shape, params):
  """Compiled: the untuned wide-row gradient (the chunked backward above 8192 channels), with
  a partial last chunk (20000 channels), float32 parameters, no parameters, rows that do not
  fill the programs."""
  testing.skip_unless_gpu()
  k1, k2, k3, k4 = jax.random.split(jax.random.key(4), 4)
  x = jax.random.normal(k1, shape, jnp.bfloat16) * 2 + 0.5
  c = shape[-1]
  scale = None if params is None else (1 + 0.1 * jax.random.normal(k2, (c,))).astype(params)
  offset = None if params is None else (0.1 * jax.random.normal(k3, (c,))).astype(params)
  dy = jax.random.normal(k4, shape, jnp.bfloat16)
  spec = base.make_spec(x, scale, offset, -1, 1e-6, True)
  op = TritonLayerNorm()
  config = op.phase_config(spec, "bwd")
  assert config.chunk == 1024
  got = jax.jit(lambda *a: op.backward((*a[:3], None, None), a[3], spec, config))(
      x, scale, offset, dy)
  _, vjp = jax.vjp(lambda *a: reference(*a, axis=-1, epsilon=1e-6), x, scale, offset)
  for g, w in zip(got, vjp(dy)):
    if w is not None:
      testing.assert_close(g, w, "bfloat16", "grad")


def test_a_tuned_config_reaches_the_triton_kernels():
  """An AutotuningResult for requested="triton" picks the config of both phases."""
  x = jnp.ones((10, 37), jnp.float32)
  spec = base.make_spec(x, None, None, -1, 1e-6, True)
  config = TritonLayerNormConfig(2, 8, 3, True)
  kind = device.current_device().kind
  result = AutotuningResult(kind, tuple(
      TunedChoice("layer_norm", phase, "triton", spec, "triton", op_lib.config_to_json(config),
                  0.0) for phase in ("fwd", "bwd")))
  with pk.pallas_interpret(), result:
    jaxpr = jax.make_jaxpr(jax.grad(lambda x: jnp.sum(pk.layer_norm(
        x, None, None, implementation="triton"))))(x)
  grids = [e.params["grid_mapping"].grid for e in _eqns(jaxpr.jaxpr)
           if e.primitive.name == "pallas_call"]
  assert grids == [(3,), (3,)], grids  # 5 tiles of 2 rows over 3 programs (default: 1 tile)


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
  with pytest.raises(TypeError, match="layer_norm: scale_offset must be a number, got 'one'"):
    pk.layer_norm(x, jnp.ones(8), None, scale_offset="one")
  with pytest.raises(ValueError, match="layer_norm: scale_offset must be finite, got nan"):
    pk.layer_norm(x, jnp.ones(8), None, scale_offset=float("nan"))


@pytest.mark.parametrize("impl", ["xla", "native", "triton", "mosaic", None])
@pytest.mark.parametrize("shape, axis", [((4, 0), -1), ((0, 3), -1), ((0, 3), 0),
                                         ((2, 0, 3), 2)])
def test_zero_size_inputs_give_an_empty_result_and_zero_gradients(impl, shape, axis):
  """No channels or no rows: the result is x's empty shape and dtype, and the gradients of
  scale and offset (non-empty when only the rows are missing) are exactly zero, whatever the
  implementation (none runs; the GPU kernels' names are served on any device)."""
  testing.skip_unless_runnable(impl)
  c = shape[axis]
  x = jnp.ones(shape, jnp.bfloat16)
  scale, offset = jnp.ones((c,), jnp.float32), jnp.ones((c,), jnp.bfloat16)
  f = lambda x, s, o: pk.layer_norm(x, s, o, axis=axis, scale_offset=1.0,  # noqa: E731
                                    implementation=impl)
  y = jax.jit(f)(x, scale, offset)
  assert y.shape == shape and y.dtype == jnp.bfloat16
  np.testing.assert_array_equal(np.asarray(y, np.float32),
                                np.asarray(reference(x, scale, offset, axis=axis), np.float32))
  grads = jax.jit(jax.grad(lambda *a: _loss(f, *a), argnums=(0, 1, 2)))(x, scale, offset)
  for g, a in zip(grads, (x, scale, offset)):
    assert g.shape == a.shape and g.dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(g, np.float32), np.zeros(a.shape, np.float32))
  with pytest.raises(ValueError, match="unknown implementation='xla_chunked'"):
    pk.layer_norm(x, scale, offset, axis=axis, implementation="xla_chunked")


def test_scale_offset_is_added_to_the_scale():
  """Gemma's ``1 + scale``: the same as passing ``scale + 1`` (in float32), gradient included."""
  rng = np.random.default_rng(3)
  x = jnp.asarray(rng.standard_normal((6, 32)), jnp.bfloat16)
  scale = jnp.asarray(rng.standard_normal(32) * 0.1, jnp.bfloat16)
  got = pk.layer_norm(x, scale, None, scale_offset=1.0)
  want = pk.layer_norm(x, scale.astype(jnp.float32) + 1.0, None)
  np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))
  g = jax.grad(lambda s: jnp.sum(pk.layer_norm(x, s, None, scale_offset=1.0)
                                 .astype(jnp.float32) ** 2))(scale)
  assert g.dtype == jnp.bfloat16
  np.testing.assert_array_equal(np.asarray(pk.layer_norm(x, None, None, scale_offset=1.0)),
                                np.asarray(pk.layer_norm(x, None, None)))


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
