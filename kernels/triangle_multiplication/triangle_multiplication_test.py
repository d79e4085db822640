"""triangle_multiplication: "xla", "composed", "native" (pjrtkit's CPU device) and None against
the plain-JAX definition at the highest precision (`base.reference`, differentiated by JAX),
both triangle types, with a batch dimension; the rule and native's refusals; argument checks;
export. Tolerances: `pjrtkit.kernels.testing.TOLERANCES`.
Tokamax parity: ``kernels/tokamax_parity_test.py``."""

from __future__ import annotations

import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import device as device_lib  # noqa: E402
from pjrtkit.kernels.native import library  # noqa: E402
from pjrtkit.kernels.triangle_multiplication import api, base  # noqa: E402

_float32 = pytest.fixture(autouse=True)(testing.full_float32_products)

ON_PJRTKIT_CPU = device_lib.current_device().is_pjrtkit_cpu
IMPLEMENTATIONS = ["xla", "composed", None] + (["native"] if ON_PJRTKIT_CPU else [])
"""What runs here: "native" on pjrtkit's CPU device only (its refusals are tested anywhere)."""
PJRTKIT_CPU = device_lib.DeviceInfo(platform="pjrtkit", kind="pjrtkit_cpu", compute_capability=None)


def _args(dtype: str, batch: tuple[int, ...] = (), n: int = 10, c: int = 16, h: int = 8,
          d: int = 12):
  rng = np.random.default_rng(2)

  def a(*shape, scale=1.0):
    return jnp.asarray(rng.standard_normal(shape) * scale, dtype)

  return (a(*batch, n, n, c), jnp.asarray(rng.random(batch + (n, n)) < 0.7),
          a(c, 2, h, scale=0.3), a(c, 2, h, scale=0.3), a(h, d, scale=0.3), a(c, d, scale=0.3),
          1 + a(c, scale=0.1), a(c, scale=0.1), 1 + a(h, scale=0.1), a(h, scale=0.1))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("triangle_type", base.TRIANGLE_TYPES)
@pytest.mark.parametrize("batch", [(), (2,)], ids=["unbatched", "batch2"])
@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_forward_and_gradient_match_the_definition(impl, batch, triangle_type, dtype) -> None:
  if batch and impl in ("xla", "composed"):
    pytest.skip("the batch's pieces are the unbatched ones (test_batch_dimensions)")
  args = _args(dtype, batch)
  ours = lambda *a: pk.triangle_multiplication(*a, triangle_type=triangle_type,  # noqa: E731
                                               implementation=impl)
  ref = lambda *a: base.reference(*a, triangle_type=triangle_type)  # noqa: E731
  got = jax.jit(ours)(*args)
  assert got.shape == batch + (10, 10, 12) and got.dtype == jnp.dtype(dtype)
  testing.assert_close(got, ref(*args), dtype, "fwd")
  floats = [i for i in range(10) if i != 1]

  def loss(fn, *diff):
    full = list(args)
    for i, v in zip(floats, diff):
      full[i] = v
    return jnp.sum(jnp.sin(fn(*full).astype(jnp.float32)))

  diff = [args[i] for i in floats]
  grads = jax.jit(jax.grad(lambda *d: loss(ours, *d), tuple(range(9))))(*diff)
  want = jax.grad(lambda *d: loss(ref, *d), tuple(range(9)))(*diff)
  for g, w in zip(grads, want):
    testing.assert_close(g, w, dtype, "grad")


def test_outgoing_and_incoming_are_the_two_contractions() -> None:
  """With identity-like pieces the two types differ exactly by which index pairs are summed."""
  args = _args("float32")
  out = pk.triangle_multiplication(*args, triangle_type="outgoing")
  inc = pk.triangle_multiplication(*args, triangle_type="incoming")
  assert float(jnp.max(jnp.abs(out - inc))) > 1e-3
  # Transposing the pair representation and mask swaps the two (a[i,k]b[j,k] vs a[k,j]b[k,i])
  # up to the final gate, which reads x itself: compare with the gate weights zeroed.
  zero_gate = list(args)
  zero_gate[5] = jnp.zeros_like(args[5])
  t = list(zero_gate)
  t[0] = jnp.swapaxes(args[0], 0, 1)
  t[1] = args[1].T
  a = pk.triangle_multiplication(*zero_gate, triangle_type="outgoing")
  b = pk.triangle_multiplication(*t, triangle_type="incoming")
  testing.assert_close(jnp.swapaxes(b, 0, 1), a, "float32", "fwd")


def _spec(dtype: str = "bfloat16", n: int = 256, c: int = 128, h: int = 128,
          batch: tuple[int, ...] = (), weights: str | None = None):
  w = weights or dtype
  shapes = [((*batch, n, n, c), dtype), ((*batch, n, n), "bool"), ((c, 2, h), w), ((c, 2, h), w),
            ((h, c), w), ((c, c), w), ((c,), "float32"), ((c,), "float32"), ((h,), "float32"),
            ((h,), "float32")]
  return base.make_spec(tuple(jax.ShapeDtypeStruct(s, d) for s, d in shapes), "outgoing", None,
                        1e-6)


@pytest.mark.parametrize("amx", [True, False])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_rule_takes_native_for_large_calls(monkeypatch, amx, dtype) -> None:
  """On pjrtkit's CPU device "native" ahead of "composed" for float32 or bfloat16 x and
  weights of one dtype, AMX tiles or not, from `api.NATIVE_MIN_WORK` batch x n^3 x h
  multiply-adds (the triangle product's); elsewhere, below the threshold, for float16 or mixed
  dtypes "composed", then "xla"."""
  monkeypatch.setattr(library, "amx_bf16", lambda: amx)
  plain = ["composed", "xla"]
  assert api.rule(_spec(dtype), PJRTKIT_CPU, "fwd") == ["native"] + plain
  assert api.rule(_spec(dtype, batch=(2,), n=128), PJRTKIT_CPU, "bwd") == ["native"] + plain
  n = 1
  while n ** 3 * 128 < api.NATIVE_MIN_WORK:  # the smallest n at the threshold (h = 128)
    n += 1
  assert api.rule(_spec(dtype, n=n), PJRTKIT_CPU, "fwd") == ["native"] + plain
  assert api.rule(_spec(dtype, n=n - 1), PJRTKIT_CPU, "fwd") == plain
  assert api.rule(_spec(dtype, n=n - 1, batch=(2,)), PJRTKIT_CPU, "fwd") == ["native"] + plain
  assert api.rule(_spec("float16"), PJRTKIT_CPU, "fwd") == plain
  other = "float32" if dtype == "bfloat16" else "bfloat16"
  assert api.rule(_spec(dtype, weights=other), PJRTKIT_CPU, "fwd") == plain
  for device in (testing.described_h200(), device_lib.DeviceInfo("cpu", "cpu", None)):
    assert api.rule(_spec(dtype), device, "fwd") == plain


def test_native_refuses_other_devices_and_dtypes() -> None:
  native = api.IMPLEMENTATIONS["native"]
  assert native.unsupported_reason(_spec(), PJRTKIT_CPU) in (None, library.unavailable_reason())
  assert "pjrtkit's CPU device only" in native.unsupported_reason(_spec(),
                                                                  testing.described_h200())
  if library.unavailable_reason() is None:
    assert native.unsupported_reason(_spec("float16"), PJRTKIT_CPU) == (
        "x dtype float16 is not supported (accepted: float32, bfloat16)")
    assert native.unsupported_reason(_spec(weights="float32"), PJRTKIT_CPU) == (
        "projection_in_weights (float32) must have x's dtype (bfloat16)")


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_vmap_and_a_float_mask(impl) -> None:
  """Under `jax.vmap` over x and a floating mask (the native handlers run once per element),
  forward and the gradients with respect to x and the mask, against the unbatched definition
  (float32, n = 7, c = 5, h = 3, d = 4)."""
  args = list(_args("float32", (2,), n=7, c=5, h=3, d=4))
  args[1] = args[1].astype(jnp.float32) * 0.75

  def ours(x, mask):
    return jax.vmap(lambda x, m: pk.triangle_multiplication(
        x, m, *args[2:], triangle_type="incoming", implementation=impl))(x, mask)

  def ref(x, mask):
    return jnp.stack([base.reference(x[i], mask[i], *args[2:], triangle_type="incoming")
                      for i in range(2)])

  testing.assert_close(ours(args[0], args[1]), ref(args[0], args[1]), "float32", "fwd")
  loss = lambda f: lambda x, m: jnp.sum(jnp.sin(f(x, m)))  # noqa: E731
  for g, w in zip(jax.grad(loss(ours), (0, 1))(args[0], args[1]),
                  jax.grad(loss(ref), (0, 1))(args[0], args[1])):
    testing.assert_close(g, w, "float32", "grad")


def test_batch_dimensions() -> None:
  args = _args("float32", batch=(2,))
  got = pk.triangle_multiplication(*args, triangle_type="outgoing")
  for i in range(2):
    one = (args[0][i], args[1][i]) + args[2:]
    testing.assert_close(got[i], base.reference(*one, triangle_type="outgoing"), "float32",
                         "fwd")


@pytest.mark.parametrize("index, value, error, match", [
    (0, jnp.ones((10, 9, 16)), ValueError, r"x must be \[..., n, n, c\]"),
    (1, jnp.ones((10, 9), bool), ValueError, r"mask must have shape \(10, 10\)"),
    (1, jnp.ones((10, 10), jnp.int32), TypeError, "mask must be bool or floating"),
    (2, jnp.ones((16, 2, 7)), ValueError, r"projection_in_weights must have shape \(16, 2, 8\)"),
    (5, jnp.ones((16, 11)), ValueError, r"gate_out_weights must have shape \(16, 12\)"),
    (6, jnp.ones((15,)), ValueError, r"layernorm_in_scale must have shape \(16,\)"),
])
def test_bad_arguments_are_refused_by_name(index, value, error, match) -> None:
  args = list(_args("float32"))
  args[index] = value
  with pytest.raises(error, match=match):
    pk.triangle_multiplication(*args, triangle_type="outgoing")
  with pytest.raises(ValueError, match=r"triangle_type must be one of \['incoming', 'outgoing'\]"):
    pk.triangle_multiplication(*_args("float32"), triangle_type="both")


def test_export_round_trips() -> None:
  args = _args("float32")
  f = jax.jit(lambda *a: pk.triangle_multiplication(*a, triangle_type="incoming"))
  exported = jax.export.export(f, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
      *(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args))
  back = jax.export.deserialize(exported.serialize())
  np.testing.assert_allclose(back.call(*args), f(*args), rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
