"""gated_linear_unit: every CPU implementation against the highest-precision definition
(`base.reference`, differentiated by JAX), argument checks, activations by name, autotuning and
export. Tolerances: `pjrtkit.kernels.testing.TOLERANCES`. Tokamax parity:
``kernels/tokamax_parity_test.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import device as device_lib  # noqa: E402
from pjrtkit.kernels.core import functions  # noqa: E402
from pjrtkit.kernels.gated_linear_unit import api, base  # noqa: E402
from pjrtkit.kernels.gated_linear_unit.xla import XlaGatedLinearUnit  # noqa: E402
from pjrtkit.kernels.native import library  # noqa: E402

_float32 = pytest.fixture(autouse=True)(testing.full_float32_products)

CPU_IMPLEMENTATIONS = ("xla", "native")


def _inputs(dtype: str, shape=(3, 5, 32), n: int = 24):
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.standard_normal(shape), dtype)
  w = jnp.asarray(rng.standard_normal((shape[-1], 2, n)) * 0.2, dtype)
  return x, w


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("activation", [None, jax.nn.silu, jax.nn.gelu, jax.nn.sigmoid,
                                        lambda v: v * jnp.tanh(v)])
@pytest.mark.parametrize("impl", CPU_IMPLEMENTATIONS + (None,))
def test_forward_and_gradient_match_the_definition(impl, activation, fused, dtype) -> None:
  testing.skip_unless_runnable(impl)
  x, w = _inputs(dtype)
  weights = w if fused else (w[:, 0], w[:, 1])

  def loss(fn, x, weights):
    return jnp.sum(jnp.sin(fn(x, weights).astype(jnp.float32)))

  ours = lambda x, wt: pk.gated_linear_unit(x, wt, activation=activation,  # noqa: E731
                                            implementation=impl)
  ref = lambda x, wt: base.reference(x, wt, activation)  # noqa: E731
  got = jax.jit(ours)(x, weights)
  assert got.shape == (3, 5, 24) and got.dtype == jnp.dtype(dtype)
  testing.assert_close(got, ref(x, weights), dtype, "fwd")
  grads = jax.jit(jax.grad(lambda a, b: loss(ours, a, b), (0, 1)))(x, weights)
  want = jax.grad(lambda a, b: loss(ref, a, b), (0, 1))(x, weights)
  assert jax.tree.structure(grads) == jax.tree.structure(want)
  for g, v in zip(jax.tree.leaves(grads), jax.tree.leaves(want)):
    assert g.dtype == v.dtype
    testing.assert_close(g, v, dtype, "grad")


@pytest.mark.parametrize("x_dtype, w_dtype", [("bfloat16", "float32"), ("float32", "bfloat16")])
def test_mixed_dtypes_round_products_to_their_result_type(x_dtype, w_dtype) -> None:
  """Products in ``result_type(x, weights)`` (float32 here: no bfloat16 rounding before the
  activation), the result in x's dtype, gradients in their inputs' dtypes."""
  x, w = _inputs("float32")
  x, w = x.astype(x_dtype), w.astype(w_dtype)
  got = pk.gated_linear_unit(x, w, activation=jax.nn.silu)
  assert got.dtype == jnp.dtype(x_dtype)
  want = base.reference(x, w, jax.nn.silu)
  # The reference of float32 products differs from one that rounds them to bfloat16 first.
  rounded = base.reference(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), jax.nn.silu)
  testing.assert_close(got, want, "bfloat16", "fwd")
  assert not np.array_equal(np.asarray(want, np.float32), np.asarray(rounded, np.float32))
  spec, args = base.make_spec(x, w, None, None)
  _, residuals = XlaGatedLinearUnit().forward(args, spec, pk.NoConfig())
  assert residuals[-1].dtype == jnp.float32  # the products, before the activation
  dx, dw = jax.grad(lambda a, b: jnp.sum(pk.gated_linear_unit(a, b).astype(jnp.float32)),
                    (0, 1))(x, w)
  assert dx.dtype == jnp.dtype(x_dtype) and dw.dtype == jnp.dtype(w_dtype)
  rx, rw = jax.grad(lambda a, b: jnp.sum(base.reference(a, b).astype(jnp.float32)),
                    (0, 1))(x, w)
  testing.assert_close(dx, rx, "bfloat16", "grad")
  testing.assert_close(dw, rw, "bfloat16", "grad")


def test_one_dimensional_input_and_precision() -> None:
  x, w = _inputs("float32", shape=(32,))
  got = pk.gated_linear_unit(x, w, activation=jax.nn.relu, precision=jax.lax.Precision.HIGHEST)
  testing.assert_close(got, base.reference(x, w, jax.nn.relu), "float32", "fwd")


@pytest.mark.parametrize("weights, error, match", [
    (jnp.ones((32, 3, 4)), ValueError, r"fused weights must be \[k, 2, n\]"),
    ((jnp.ones((32, 4)),), ValueError, r"must be \(w_gate, w_up\)"),
    ((jnp.ones((32, 4)), jnp.ones((32, 5))), ValueError, r"must both be \[k, n\]"),
    ((jnp.ones((32, 4)), jnp.ones((32, 4), jnp.bfloat16)), TypeError, "must share a dtype"),
    (jnp.ones((31, 2, 4)), ValueError, r"x's last dimension \(32\) must equal"),
    (jnp.ones((32, 2, 4), jnp.int32), TypeError, "weights must have a floating dtype"),
])
def test_bad_weights_are_refused_by_name(weights, error, match) -> None:
  x, _ = _inputs("float32")
  with pytest.raises(error, match=match):
    pk.gated_linear_unit(x, weights)


def test_bad_activation_and_implementation_are_refused() -> None:
  x, w = _inputs("float32")
  with pytest.raises(TypeError, match="activation must be a callable"):
    pk.gated_linear_unit(x, w, activation="silu")
  with pytest.raises(ValueError, match="unknown implementation='cutedsl'; accepted: 'xla'"):
    pk.gated_linear_unit(x, w, implementation="cutedsl")
  with pytest.raises(TypeError, match="x must have a floating dtype"):
    pk.gated_linear_unit(jnp.ones((2, 32), jnp.int32), w)


@pytest.mark.parametrize("impl", ("xla", "native", "triton", "mosaic", None))
@pytest.mark.parametrize("x_shape, w_shape", [
    ((4, 0), (0, 2, 5)),      # k = 0: both products empty sums, silu(0) * 0
    ((0, 3), (3, 2, 5)),      # no rows
    ((2, 0, 3), (3, 2, 5)),   # no rows in a middle dimension
    ((2, 3), (3, 2, 0)),      # n = 0
])
def test_zero_size_calls_give_the_empty_sums_result_on_every_implementation(
    impl, x_shape, w_shape) -> None:
  """A zero-size dimension runs no implementation: k = 0 gives ``activation(0) * 0`` everywhere
  (Tokamax's value), no rows or n = 0 an empty result; every gradient is exactly zero, and every
  implementation name (the GPU kernels' too, on any device) gives the same."""
  testing.skip_unless_runnable(impl)
  x = jnp.ones(x_shape, jnp.bfloat16)
  w = jnp.ones(w_shape, jnp.float32)
  f = lambda x, w: pk.gated_linear_unit(x, w, activation=jax.nn.silu,  # noqa: E731
                                        implementation=impl)
  out = jax.jit(f)(x, w)
  assert out.shape == x_shape[:-1] + w_shape[-1:] and out.dtype == jnp.bfloat16
  np.testing.assert_array_equal(np.asarray(out, np.float32), np.zeros(out.shape, np.float32))
  np.testing.assert_array_equal(np.asarray(out, np.float32),
                                np.asarray(base.reference(x, w, jax.nn.silu), np.float32))
  pair = pk.gated_linear_unit(x, (w[:, 0], w[:, 1]), activation=jax.nn.silu,
                              implementation=impl)
  np.testing.assert_array_equal(np.asarray(pair, np.float32), np.asarray(out, np.float32))
  dx, dw = jax.jit(jax.grad(lambda a, b: jnp.sum(f(a, b).astype(jnp.float32) * 3.0),
                            (0, 1)))(x, w)
  assert dx.shape == x_shape and dx.dtype == jnp.bfloat16
  assert dw.shape == w_shape and dw.dtype == jnp.float32
  np.testing.assert_array_equal(np.asarray(dx, np.float32), np.zeros(x_shape, np.float32))
  np.testing.assert_array_equal(dw, np.zeros(w_shape, np.float32))


def test_zero_size_calls_still_check_their_arguments() -> None:
  """k = 0 with an activation infinite at 0 gives ``activation(0) * 0`` = NaN, as Tokamax; an
  unknown implementation name and mismatched shapes are refused as for any call."""
  out = pk.gated_linear_unit(jnp.ones((2, 0)), jnp.ones((0, 2, 3)), activation=lambda v: 1 / v)
  assert np.isnan(np.asarray(out)).all() and out.shape == (2, 3)
  with pytest.raises(ValueError, match="unknown implementation='cutedsl'; accepted: 'xla'"):
    pk.gated_linear_unit(jnp.ones((4, 0)), jnp.ones((0, 2, 5)), implementation="cutedsl")
  with pytest.raises(ValueError, match="non-empty sequence of names"):
    pk.gated_linear_unit(jnp.ones((4, 0)), jnp.ones((0, 2, 5)), implementation=[])
  with pytest.raises(ValueError, match=r"x's last dimension \(0\) must equal"):
    pk.gated_linear_unit(jnp.ones((4, 0)), jnp.ones((3, 2, 5)))


def test_activation_names_survive_the_marker_round_trip() -> None:
  assert functions.name_of(jax.nn.swish) == "silu"
  custom = lambda v: v * 2  # noqa: E731
  name = functions.name_of(custom)
  assert name.startswith("custom:") and functions.resolve(name) is custom
  with pytest.raises(ValueError, match="not a function this process knows"):
    functions.resolve("custom:elsewhere.fn@1")
  x, w = _inputs("float32")
  f = jax.jit(lambda x, w: pk.gated_linear_unit(x, w, activation=jax.nn.silu))
  (call,) = pk.find_kernel_calls(f, x, w)
  assert call.spec.param("activation") == "silu"
  assert call.spec.function("activation") is jax.nn.silu


def test_autotune_and_export() -> None:
  x, w = _inputs("float32")
  f = jax.jit(jax.value_and_grad(lambda x, w: jnp.sum(pk.gated_linear_unit(
      x, w, activation=jax.nn.silu)), (0, 1)))
  result = pk.autotune(f, x, w, iterations=1)
  assert {(c.op, c.phase) for c in result.choices} == {("gated_linear_unit", "fwd"),
                                                       ("gated_linear_unit", "bwd")}
  with result:
    tuned = f(x, w)
  exported = jax.export.export(f, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
      jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(w.shape, w.dtype))
  back = jax.export.deserialize(exported.serialize())
  for a, b in zip(jax.tree.leaves(back.call(x, w)), jax.tree.leaves(tuned)):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


PJRTKIT_CPU = device_lib.DeviceInfo(platform="pjrtkit", kind="pjrtkit_cpu", compute_capability=None)


@pytest.mark.parametrize("amx", [True, False])
def test_rule_takes_native_for_large_bfloat16_calls_with_amx_tiles(monkeypatch, amx) -> None:
  """On pjrtkit's CPU device: "native" for both phases from 2**29 rows x k x n, bfloat16 x and
  weights, AMX tiles; otherwise "xla". Elsewhere the rule ignores it."""
  monkeypatch.setattr(library, "amx_bf16", lambda: amx)
  native = ["native", "xla"] if amx else ["xla"]

  def choice(rows, k, n, x_dtype="bfloat16", w_dtype="bfloat16", fused=True, device=PJRTKIT_CPU,
             phase="fwd"):
    x = jax.ShapeDtypeStruct((rows, k), x_dtype)
    w = (jax.ShapeDtypeStruct((k, 2, n), w_dtype) if fused else
         (jax.ShapeDtypeStruct((k, n), w_dtype),) * 2)
    spec, _ = base.make_spec(x, w, jax.nn.silu, None)
    return api.rule(spec, device, phase)

  for phase in ("fwd", "bwd"):
    assert choice(512, 1024, 1024, phase=phase) == native
    assert choice(2048, 4096, 14336, fused=False, phase=phase) == native
    assert choice(32, 4096, 4096, phase=phase) == native
  assert choice(512, 1024, 1023) == ["xla"]               # too little work
  assert choice(2048, 1024, 1024, "float32", "float32") == ["xla"]
  assert choice(2048, 1024, 1024, "bfloat16", "float32") == ["xla"]
  assert choice(2048, 1024, 1024, device=testing.described_h200()) == ["xla"]
  assert choice(2048, 1024, 1024, device=testing.described_h200(), phase="bwd") == ["xla"]


def test_native_refuses_other_devices_and_dtypes() -> None:
  x = jax.ShapeDtypeStruct((4, 8), "float16")
  spec, _ = base.make_spec(x, jax.ShapeDtypeStruct((8, 2, 4), "float16"), None, None)
  native = api.IMPLEMENTATIONS["native"]
  assert native.unsupported_reason(spec, PJRTKIT_CPU) == (
      "x dtype float16 is not supported (accepted: float32, bfloat16)")
  spec, _ = base.make_spec(x.update(dtype="bfloat16"), jax.ShapeDtypeStruct((8, 2, 4), "float16"),
                           None, None)
  assert "weights dtype float16" in native.unsupported_reason(spec, PJRTKIT_CPU)
  spec, _ = base.make_spec(x.update(dtype="bfloat16"), jax.ShapeDtypeStruct((8, 2, 4), "bfloat16"),
                           None, None)
  assert "pjrtkit's CPU device only" in native.unsupported_reason(spec, testing.described_h200())


def test_native_without_amx_tiles_matches_the_definition() -> None:
  """PJRTKIT_KERNELS_AMX=0 (a child process): the library reports no AMX and the bfloat16
  products run the float32 SIMD GEMM, still matching the definition."""
  testing.skip_unless_runnable("native")
  code = textwrap.dedent("""
      import json, numpy as np, jax, jax.numpy as jnp
      from pjrtkit import kernels as pk
      from pjrtkit.kernels import testing
      from pjrtkit.kernels.gated_linear_unit import base
      from pjrtkit.kernels.native import library
      rng = np.random.default_rng(0)
      x = jnp.asarray(rng.standard_normal((70, 96)), jnp.bfloat16)
      w = jnp.asarray(rng.standard_normal((96, 2, 40)) * 0.2, jnp.bfloat16)
      f = lambda x, w: pk.gated_linear_unit(x, w, activation=jax.nn.silu, implementation="native")
      r = lambda x, w: base.reference(x, w, jax.nn.silu)
      testing.assert_value_and_grad_close(f, r, (x, w), "bfloat16")
      print(json.dumps({"amx": library.amx_bf16()}))
      """)
  env = dict(os.environ, PJRTKIT_KERNELS_AMX="0")
  child = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
  assert child.returncode == 0, child.stderr[-3000:]
  assert json.loads(child.stdout.strip().splitlines()[-1]) == {"amx": False}


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
