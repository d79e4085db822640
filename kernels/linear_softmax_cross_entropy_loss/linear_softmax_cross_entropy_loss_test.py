"""linear_softmax_cross_entropy_loss: "xla", "chunked_xla" and "native" (pjrtkit's CPU device)
against the full-logits definition (`base.reference`, differentiated by JAX) at shapes that are
not multiples of the blocks; the chunked implementations' largest temporary flat in the
vocabulary size (XLA's memory analysis of the compiled value-and-gradient); the rule; argument
checks; autotuning and export.
Tolerances: `pjrtkit.kernels.testing.TOLERANCES`."""

from __future__ import annotations

import sys
from typing import Any

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.linear_softmax_cross_entropy_loss import api, base  # noqa: E402
from pjrtkit.kernels.core import device as device_lib  # noqa: E402
from pjrtkit.kernels.linear_softmax_cross_entropy_loss.chunked_xla import ChunkConfig  # noqa
from pjrtkit.kernels.native import library  # noqa: E402

_float32 = pytest.fixture(autouse=True)(testing.full_float32_products)

ON_PJRTKIT_CPU = device_lib.current_device().is_pjrtkit_cpu
IMPLEMENTATIONS = ("xla", "chunked_xla") + (("native",) if ON_PJRTKIT_CPU else ())
"""What runs here: "native" on pjrtkit's CPU device only (its own tests skip elsewhere)."""
CHUNKED = tuple(i for i in IMPLEMENTATIONS if i != "xla")
PJRTKIT_CPU = device_lib.DeviceInfo(platform="pjrtkit", kind="pjrtkit_cpu", compute_capability=None)


def _inputs(dtype: str, b: int = 45, h: int = 24, v: int = 333):
  rng = np.random.default_rng(1)
  x = jnp.asarray(rng.standard_normal((b, h)), dtype)
  w = jnp.asarray(rng.standard_normal((h, v)) * 0.3, dtype)
  labels = jnp.asarray(rng.integers(0, v, b), jnp.int32)
  return x, labels, w


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("reduction", base.REDUCTIONS)
@pytest.mark.parametrize("config", [None, ChunkConfig(16, 64), ChunkConfig(45, 333),
                                    ChunkConfig(7, 1000)])
def test_forward_and_gradient_match_the_definition(config, reduction, dtype) -> None:
  x, labels, w = _inputs(dtype)
  impls = IMPLEMENTATIONS if config is None else CHUNKED
  spec = base.make_spec(x, labels, w, reduction, None)
  want = base.reference(x, labels, w, reduction)
  weights = jnp.linspace(0.5, 1.5, want.size).reshape(want.shape)
  want_grads = jax.grad(lambda a, c: jnp.sum(base.reference(a, labels, c, reduction) * weights),
                        (0, 1))(x, w)
  for name in impls:
    op = api.IMPLEMENTATIONS[name]
    cfg = config or op.default_config(spec)
    loss, res = jax.jit(lambda a, c: op.forward((a, labels, c), spec, cfg))(x, w)
    assert loss.dtype == jnp.float32 and loss.shape == want.shape
    testing.assert_close(loss, want, dtype, "grad")
    dx, dlabels, dw = jax.jit(lambda r, d: op.backward(r, d, spec, cfg))(res, weights)
    assert dlabels is None
    testing.assert_close(dx, want_grads[0], dtype, "grad")
    testing.assert_close(dw, want_grads[1], dtype, "grad")
  got = pk.linear_softmax_cross_entropy_loss(x, labels, w, reduction=reduction)
  testing.assert_close(got, want, dtype, "grad")


def test_labels_outside_the_vocabulary_pick_no_logit() -> None:
  x, labels, w = _inputs("float32")
  labels = labels.at[0].set(-1).at[1].set(333)
  for impl in IMPLEMENTATIONS:
    got = pk.linear_softmax_cross_entropy_loss(x, labels, w, reduction="none",
                                               implementation=impl)
    lse = jax.nn.logsumexp(x @ w, axis=-1)
    np.testing.assert_allclose(got[:2], lse[:2], rtol=1e-5)


def _temp_bytes(impl: str, v: int, dtype: str, device: jax.Device) -> int:
  b, h = 1024, 256
  f = jax.jit(jax.value_and_grad(lambda x, w, l: pk.linear_softmax_cross_entropy_loss(
      x, l, w, implementation=impl), (0, 1)))
  with jax.default_device(device):
    compiled = f.lower(jax.ShapeDtypeStruct((b, h), dtype), jax.ShapeDtypeStruct((h, v), dtype),
                       jax.ShapeDtypeStruct((b,), jnp.int32)).compile()
  return compiled.memory_analysis().temp_size_in_bytes


@pytest.mark.parametrize("impl, dtype, platform", [
    ("chunked_xla", "float32", "default"), ("chunked_xla", "bfloat16", "default"),
    ("chunked_xla", "bfloat16", "cpu"), ("chunked_xla", "float32", "cpu"),
    ("native", "bfloat16", "default"), ("native", "float32", "default")])
def test_chunked_peak_memory_is_flat_in_the_vocabulary(impl: str, dtype: str,
                                                       platform: str) -> None:
  """The temporaries of value-and-gradient at 16K, 64K and 256K vocabulary (XLA's memory
  analysis of the compiled program, b = 1024, h = 256) on the default device (pjrtkit's CPU or
  GPU device, or JAX's GPU backend) and on jaxlib's CPU backend: the chunked implementations'
  do not grow (1 % allowed) and stay under four float32 blocks of logits of their default
  tile (1024 x 2048 for "chunked_xla", 1024 x 4096 for "native" at b = 1024); "xla"'s grow
  with the logits (at least 1024 x v x 4 bytes).

  bfloat16 on pjrtkit's CPU device stays flat because the chunked implementations carry the
  weights' bits as uint16 there (`ChunkedXlaLinearSoftmaxCrossEntropyLoss._to_bits`): its
  XLA:CPU widens a bfloat16 array around every dynamic slice of it."""
  if impl == "native" and not ON_PJRTKIT_CPU:
    pytest.skip("the native kernels run on pjrtkit's CPU device only")
  device = jax.devices()[0] if platform == "default" else jax.devices(platform)[0]
  vocab = (16384, 65536, 262144)
  chunked = [_temp_bytes(impl, v, dtype, device) for v in vocab]
  full = [_temp_bytes("xla", v, dtype, device) for v in vocab]
  config = api.IMPLEMENTATIONS[impl].default_config(None)
  # No growth from one vocabulary to the next (XLA may plan the smallest, with the fewest
  # blocks, a little differently: "native" bfloat16 at 16K takes 33.6 MB, at 64K 28.3 MB).
  assert all(later <= 1.01 * earlier for earlier, later in zip(chunked, chunked[1:])), chunked
  assert max(chunked) <= 4 * min(config.block_b, 1024) * config.block_v * 4, chunked
  for v, t in zip(vocab, full):
    assert t >= 1024 * v * 4, (v, t)
  assert full[-1] > 30 * max(chunked)


def _spec(b: int, h: int, v: int, x_dtype: str = "bfloat16", w_dtype: str = "bfloat16") -> Any:
  return base.make_spec(jax.ShapeDtypeStruct((b, h), x_dtype),
                        jax.ShapeDtypeStruct((b,), jnp.int32),
                        jax.ShapeDtypeStruct((h, v), w_dtype), "sum", None)


@pytest.mark.parametrize("device", [testing.described_h200(), device_lib.DeviceInfo(
    platform="cpu", kind="cpu", compute_capability=None)], ids=["h200", "cpu"])
def test_rule_switches_to_chunked_above_the_logits_limit(device) -> None:
  small = base.make_spec(*_inputs("float32"), "sum", None)
  assert api.rule(small, device, "fwd") == ["xla"]
  assert api.rule(_spec(8192, 16, 262144), device, "fwd") == ["chunked_xla", "xla"]
  assert api.rule(_spec(8192, 4096, 262144), device, "bwd") == ["chunked_xla", "xla"]


@pytest.mark.parametrize("amx", [True, False])
def test_rule_takes_native_for_large_bfloat16_calls_with_amx_tiles(monkeypatch, amx) -> None:
  """On pjrtkit's CPU device: "native" for both phases from `api.NATIVE_MIN_WORK` b x h x v,
  bfloat16 x and weights, AMX tiles, ahead of the logits limit's choice (its fallback)."""
  monkeypatch.setattr(library, "amx_bf16", lambda: amx)
  native = ["native"] if amx else []
  for phase in ("fwd", "bwd"):
    got = api.rule(_spec(2048, 1024, 32768), PJRTKIT_CPU, phase)          # 2**26 logits
    assert got == native + ["xla"], (phase, got)
    got = api.rule(_spec(8192, 4096, 262144), PJRTKIT_CPU, phase)
    assert got == native + ["chunked_xla", "xla"], (phase, got)
  edge = api.NATIVE_MIN_WORK // (1024 * 256)
  assert api.rule(_spec(edge, 1024, 256), PJRTKIT_CPU, "fwd")[0] == ("native" if amx else "xla")
  assert api.rule(_spec(edge - 1, 1024, 256), PJRTKIT_CPU, "fwd") == ["xla"]
  assert api.rule(_spec(2048, 1024, 32768, "float32", "float32"), PJRTKIT_CPU, "fwd") == ["xla"]
  assert api.rule(_spec(2048, 1024, 32768, "bfloat16", "float32"), PJRTKIT_CPU, "fwd") == ["xla"]


def test_native_refuses_other_devices_and_dtypes() -> None:
  native = api.IMPLEMENTATIONS["native"]
  assert native.unsupported_reason(_spec(4, 8, 16), PJRTKIT_CPU) in (
      None, library.unavailable_reason())
  assert native.unsupported_reason(_spec(4, 8, 16, "float16", "float16"), PJRTKIT_CPU) == (
      "x and weights dtype float16 is not supported (accepted: float32, bfloat16)")
  assert native.unsupported_reason(_spec(4, 8, 16, "bfloat16", "float32"), PJRTKIT_CPU) == (
      "x (bfloat16) and weights (float32) must have one dtype")
  for spec in (_spec(4, 8, 16), _spec(4, 8, 16, "bfloat16", "float32")):
    assert "pjrtkit's CPU device only" in native.unsupported_reason(
        spec, testing.described_h200())


@pytest.mark.parametrize("kwargs, error, match", [
    ({"reduction": "max"}, ValueError, r"reduction must be one of \['sum', 'mean', 'none'\]"),
    ({"labels": jnp.zeros((45,), jnp.float32)}, TypeError, "labels must have an integer dtype"),
    ({"labels": jnp.zeros((44,), jnp.int32)}, ValueError, "shapes do not agree"),
    ({"x": jnp.zeros((45, 24, 1))}, ValueError, r"need x \[b, h\]"),
    ({"implementation": "mosaic_tpu"}, ValueError, "unknown implementation='mosaic_tpu'"),
    ({"weights": jnp.zeros((24, 0))}, ValueError, r"weights must have at least one class "
     r"\(weights \[h, v\] with vocabulary size v >= 1\), got weights of shape \(24, 0\)"),
    ({"weights": jnp.zeros((24, 0)), "x": jnp.zeros((0, 24)), "labels": jnp.zeros((0,), jnp.int32)},
     ValueError, "weights must have at least one class"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, match) -> None:
  x, labels, w = _inputs("float32")
  args = {"x": x, "labels": labels, "weights": w}
  args.update({k: kwargs.pop(k) for k in list(kwargs) if k in args})
  with pytest.raises(error, match=match):
    pk.linear_softmax_cross_entropy_loss(args["x"], args["labels"], args["weights"], **kwargs)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS + (None,))
@pytest.mark.parametrize("reduction, b, h, want", [
    ("sum", 0, 24, 0.0), ("mean", 0, 24, float("nan")), ("none", 0, 24, []),
    # No hidden units: every logit 0, each row's loss log(v) whatever its label.
    ("sum", 3, 0, 3 * np.log(np.float32(333))), ("mean", 3, 0, np.log(np.float32(333))),
    ("none", 3, 0, [np.log(np.float32(333))] * 3),
])
def test_no_rows_or_no_hidden_units_agree_on_every_implementation(impl, reduction, b, h,
                                                                 want) -> None:
  """b = 0: "sum" 0, "mean" NaN (0/0, as ``jnp.mean`` of nothing and Tokamax), "none" empty;
  h = 0: ``log(v)`` per row; gradients exactly zero (no implementation runs)."""
  x, _, w = _inputs("bfloat16", b=b, h=h)
  labels = jnp.asarray([0, 332, -1][:b], jnp.int32)
  f = lambda a, c: pk.linear_softmax_cross_entropy_loss(  # noqa: E731
      a, labels, c, reduction=reduction, implementation=impl)
  loss = jax.jit(f)(x, w)
  assert loss.dtype == jnp.float32 and loss.shape == np.shape(want)
  np.testing.assert_array_equal(loss, np.asarray(want, np.float32))
  # What "xla"'s own forward computes for these shapes (up to its summation order).
  np.testing.assert_allclose(api.IMPLEMENTATIONS["xla"].forward(
      (x, labels, w), base.make_spec(x, labels, w, reduction, None), pk.NoConfig())[0], loss,
                             rtol=1e-6)
  dx, dw = jax.jit(jax.grad(lambda a, c: jnp.sum(f(a, c)), (0, 1)))(x, w)
  assert dx.shape == x.shape and dw.shape == w.shape and dx.dtype == dw.dtype == jnp.bfloat16
  np.testing.assert_array_equal(np.asarray(dw, np.float32), np.zeros(w.shape, np.float32))
  np.testing.assert_array_equal(np.asarray(dx, np.float32), np.zeros(x.shape, np.float32))


@pytest.mark.parametrize("impl", CHUNKED)
def test_autotune_measures_chunk_configs_and_export_round_trips(impl: str) -> None:
  x, labels, w = _inputs("float32")
  f = jax.jit(jax.value_and_grad(lambda x, w: pk.linear_softmax_cross_entropy_loss(
      x, labels, w, implementation=impl), (0, 1)))
  result = pk.autotune(f, x, w, iterations=1)
  assert {c.implementation for c in result.choices} == {impl}
  with result:
    tuned = f(x, w)
  testing.assert_close(tuned[0], base.reference(x, labels, w), "float32", "grad")
  exported = jax.export.export(f, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
      jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(w.shape, w.dtype))
  back = jax.export.deserialize(exported.serialize())
  for a, b in zip(jax.tree.leaves(back.call(x, w)), jax.tree.leaves(f(x, w))):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
