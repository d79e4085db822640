"""pjrtkit.kernels against Tokamax 0.0.17's own "xla" implementations, with the same calls:
all seven ops (ragged_dot, ragged_dot_general, gated_linear_unit,
linear_softmax_cross_entropy_loss, triangle_multiplication, dot_product_attention with Tokamax's
keyword arguments, layer_norm with scale_offset), values and gradients, float32 and bfloat16, on
pjrtkit's CPU device.

Tokamax is installed beside the venv, not in it (`tools/setup.sh` puts the pinned wheels of
``tools/kernels_gpu/tokamax_wheels.txt`` in ``<venv>/tokamax-reference``); the one xprof module
Tokamax imports at import time (for a timing method not used here) is stood in for. Every
implementation of ours that serves the call is compared, ``None`` included.

Tolerances: `pjrtkit.kernels.testing.TOLERANCES` scaled by max(1, max |Tokamax's value|).
"""

from __future__ import annotations

import contextlib
import sys
import types
from pathlib import Path
from typing import Iterator
from unittest import mock

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import device  # noqa: E402

REFERENCE_DIR = Path(sys.prefix) / "tokamax-reference"


def _load_tokamax() -> types.ModuleType:
  """Tokamax from `REFERENCE_DIR` (fails, naming the setup step, when it is missing)."""
  if not (REFERENCE_DIR / "tokamax").is_dir():
    raise FileNotFoundError(f"Tokamax is not installed in {REFERENCE_DIR}: run "
                            f"'bash tools/setup.sh --oldest-jax' (README command 2 does)")
  for name in ("xprof", "xprof.cli", "xprof.cli.tools", "xprof.cli.tools.get_kernel_stats_tool"):
    if name not in sys.modules:
      module = types.ModuleType(name)
      module.__path__ = []  # a package, so the submodules import

      def unavailable(*args: object, **kwargs: object) -> None:
        raise NotImplementedError("xprof is a stand-in in pjrtkit's parity tests")

      module.compute_kernel_stats = unavailable  # type: ignore[attr-defined]
      sys.modules[name] = module
  sys.path.insert(0, str(REFERENCE_DIR))
  import tokamax  # pylint: disable=g-import-not-at-top
  return tokamax


tokamax = _load_tokamax()
DTYPES = ("float32", "bfloat16")


def _rng(seed: int) -> np.random.Generator:
  return np.random.default_rng(seed)


def _normal(rng: np.random.Generator, shape: tuple[int, ...], dtype: str,
            scale: float = 1.0) -> jax.Array:
  return jnp.asarray(rng.standard_normal(shape) * scale, dtype)


def _implementations(op: str, call) -> list[str | None]:
  """Our implementations that serve `call` on this device (those that refuse are skipped), and
  None."""
  out: list[str | None] = [None]
  for name in pk.IMPLEMENTATIONS[op]:
    try:
      jax.eval_shape(lambda: call(name))
    except pk.UnsupportedImplementationError:
      continue
    out.append(name)
  return out


def _close(got, want, dtype: str, what: str) -> None:
  for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
    testing.assert_close(g, w, dtype, what)


# --- ragged_dot -------------------------------------------------------------------------------

RAGGED_CASES = [  # (m, k, n, group sizes)
    (48, 32, 40, (5, 0, 17, 26)),        # uneven, one empty, all rows used
    (64, 16, 24, (0, 0, 30, 1, 0, 12)),  # leading empty groups, rows past the sum
    (33, 8, 8, (33,)),                   # one group
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(RAGGED_CASES)))
def test_ragged_dot_matches_tokamax(dtype: str, case: int) -> None:
  m, k, n, sizes = RAGGED_CASES[case]
  rng = _rng(case)
  lhs = _normal(rng, (m, k), dtype)
  rhs = _normal(rng, (len(sizes), k, n), dtype, 0.5)
  gs = jnp.asarray(sizes, jnp.int32)
  want = tokamax.ragged_dot(lhs, rhs, gs, implementation="xla")

  def loss(fn, a, b):
    return jnp.sum(jnp.sin(fn(a, b).astype(jnp.float32)))

  want_grads = jax.grad(lambda a, b: loss(
      lambda x, y: tokamax.ragged_dot(x, y, gs, implementation="xla"), a, b), (0, 1))(lhs, rhs)
  for impl in _implementations("ragged_dot", lambda i: pk.ragged_dot(lhs, rhs, gs,
                                                                     implementation=i)):
    ours = lambda x, y, impl=impl: pk.ragged_dot(x, y, gs, implementation=impl)
    got = jax.jit(ours)(lhs, rhs)
    assert got.dtype == want.dtype and got.shape == want.shape
    _close(got, want, dtype, "fwd")
    grads = jax.jit(jax.grad(lambda a, b: loss(ours, a, b), (0, 1)))(lhs, rhs)
    _close(grads, want_grads, dtype, "grad")


@pytest.mark.parametrize("dims", ["contracting", "transposed_rhs"])
def test_ragged_dot_general_matches_tokamax(dims: str) -> None:
  rng = _rng(7)
  sizes = jnp.asarray((3, 0, 9, 4), jnp.int32)
  if dims == "contracting":  # rhs gradient form: [m, k] x [m, n] -> [g, k, n]
    dn = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([0], [0]), ([], [])),
                                           lhs_ragged_dimensions=[0], rhs_group_dimensions=[])
    lhs, rhs = _normal(rng, (16, 8), "float32"), _normal(rng, (16, 12), "float32")
  else:  # rhs [g, n, k]
    dn = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [2]), ([], [])),
                                           lhs_ragged_dimensions=[0], rhs_group_dimensions=[0])
    lhs, rhs = _normal(rng, (16, 8), "float32"), _normal(rng, (4, 12, 8), "float32")
  want = tokamax.ragged_dot_general(lhs, rhs, sizes, dn, implementation="xla")
  if dims == "contracting":
    # Neither Tokamax nor JAX differentiates this mode; the gradient is checked against the
    # dense definition: out[g] = lhs^T (rows of g) @ rhs.
    ids = np.repeat(np.arange(4), np.asarray(sizes))
    mask = jnp.asarray(ids[None, :] == np.arange(4)[:, None], jnp.float32)
    dense = lambda a, b: jnp.einsum("gm,mk,mn->gkn", mask, a, b,
                                    precision=jax.lax.Precision.HIGHEST)
    want_grads = jax.grad(lambda a, b: jnp.sum(jnp.sin(dense(a, b))), (0, 1))(lhs, rhs)
  else:
    want_grads = jax.grad(lambda a, b: jnp.sum(jnp.sin(tokamax.ragged_dot_general(
        a, b, sizes, dn, implementation="xla"))), (0, 1))(lhs, rhs)
  for impl in _implementations("ragged_dot", lambda i: pk.ragged_dot_general(
      lhs, rhs, sizes, dn, implementation=i)):
    ours = lambda a, b, impl=impl: pk.ragged_dot_general(a, b, sizes, dn, implementation=impl)
    _close(jax.jit(ours)(lhs, rhs), want, "float32", "fwd")
    grads = jax.grad(lambda a, b: jnp.sum(jnp.sin(ours(a, b))), (0, 1))(lhs, rhs)
    _close(grads, want_grads, "float32", "grad")


@pytest.mark.parametrize("fuse", ["silu", "gelu", "gelu_tanh"])
def test_ragged_dot_fused_gateup_and_activation_match_tokamax(fuse: str) -> None:
  rng = _rng(3)
  lhs, rhs = _normal(rng, (24, 16), "float32"), _normal(rng, (3, 16, 10), "float32", 0.5)
  gs = jnp.asarray((10, 0, 14), jnp.int32)
  want = tokamax.ragged_dot(lhs, rhs, gs, implementation="xla", fuse_gateup_activation=fuse)
  got = pk.ragged_dot(lhs, rhs, gs, fuse_gateup_activation=fuse)
  _close(got, want, "float32", "fwd")
  want = tokamax.ragged_dot(lhs, rhs, gs, activation=jax.nn.relu, implementation="xla")
  for impl in ("xla", "xla_grouped", "native"):
    _close(pk.ragged_dot(lhs, rhs, gs, activation=jax.nn.relu, implementation=impl), want,
           "float32", "fwd")


# --- gated_linear_unit ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("activation", [None, "silu", "gelu", "sigmoid", "relu"])
def test_gated_linear_unit_matches_tokamax(dtype: str, fused: bool, activation: str | None
                                           ) -> None:
  act = None if activation is None else getattr(jax.nn, activation)
  rng = _rng(11)
  x = _normal(rng, (2, 7, 24), dtype)
  w = _normal(rng, (24, 2, 20), dtype, 0.3)
  weights = w if fused else (w[:, 0], w[:, 1])
  want = tokamax.gated_linear_unit(x, weights, activation=act, implementation="xla")

  def loss(fn, x, w):
    return jnp.sum(jnp.sin(fn(x, w).astype(jnp.float32)))

  want_grads = jax.grad(lambda x, w: loss(lambda a, b: tokamax.gated_linear_unit(
      a, b, activation=act, implementation="xla"), x, w), (0, 1))(x, weights)
  for impl in _implementations("gated_linear_unit", lambda i: pk.gated_linear_unit(
      x, weights, activation=act, implementation=i)):
    ours = lambda a, b, impl=impl: pk.gated_linear_unit(a, b, activation=act,
                                                        implementation=impl)
    got = jax.jit(ours)(x, weights)
    assert got.dtype == want.dtype and got.shape == want.shape
    _close(got, want, dtype, "fwd")
    grads = jax.jit(jax.grad(lambda a, b: loss(ours, a, b), (0, 1)))(x, weights)
    _close(grads, want_grads, dtype, "grad")


# --- linear_softmax_cross_entropy_loss --------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
def test_cross_entropy_matches_tokamax(dtype: str, reduction: str) -> None:
  rng = _rng(5)
  b, h, v = 37, 32, 1000
  x = _normal(rng, (b, h), dtype)
  w = _normal(rng, (h, v), dtype, 0.2)
  labels = jnp.asarray(rng.integers(0, v, b), jnp.int32)
  want = tokamax.linear_softmax_cross_entropy_loss(x, labels, w, reduction=reduction,
                                                   implementation="xla")

  def loss(fn, x, w):
    return jnp.sum(fn(x, w) * jnp.linspace(0.5, 1.5, want.size).reshape(want.shape))

  want_grads = jax.grad(lambda x, w: loss(lambda a, c: tokamax.linear_softmax_cross_entropy_loss(
      a, labels, c, reduction=reduction, implementation="xla"), x, w), (0, 1))(x, w)
  for impl in _implementations("linear_softmax_cross_entropy_loss", lambda i:
                               pk.linear_softmax_cross_entropy_loss(x, labels, w,
                                                                    reduction=reduction,
                                                                    implementation=i)):
    ours = lambda a, c, impl=impl: pk.linear_softmax_cross_entropy_loss(
        a, labels, c, reduction=reduction, implementation=impl)
    got = jax.jit(ours)(x, w)
    assert got.shape == want.shape
    # Tokamax sums bfloat16 logits' loss in float32 too; values to the grad tolerance (the
    # sum over 37 rows of ~7.0 adds rounding).
    _close(got, want, dtype, "grad")
    grads = jax.jit(jax.grad(lambda a, c: loss(ours, a, c), (0, 1)))(x, w)
    _close(grads, want_grads, dtype, "grad")


# --- triangle_multiplication ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("triangle_type", ["outgoing", "incoming"])
def test_triangle_multiplication_matches_tokamax(dtype: str, triangle_type: str) -> None:
  rng = _rng(13)
  n, c, h, d = 12, 16, 8, 12
  args = (_normal(rng, (n, n, c), dtype), jnp.asarray(rng.random((n, n)) < 0.8),
          _normal(rng, (c, 2, h), dtype, 0.3), _normal(rng, (c, 2, h), dtype, 0.3),
          _normal(rng, (h, d), dtype, 0.3), _normal(rng, (c, d), dtype, 0.3),
          1 + _normal(rng, (c,), dtype, 0.1), _normal(rng, (c,), dtype, 0.1),
          1 + _normal(rng, (h,), dtype, 0.1), _normal(rng, (h,), dtype, 0.1))
  want = tokamax.triangle_multiplication(*args, triangle_type=triangle_type,
                                         implementation="xla")

  def loss(fn, x, w):
    return jnp.sum(jnp.sin(fn(x, args[1], w, *args[3:]).astype(jnp.float32)))

  want_grads = jax.grad(lambda x, w: loss(lambda *a: tokamax.triangle_multiplication(
      *a, triangle_type=triangle_type, implementation="xla"), x, w), (0, 1))(args[0], args[2])
  for impl in _implementations("triangle_multiplication", lambda i: pk.triangle_multiplication(
      *args, triangle_type=triangle_type, implementation=i)):
    ours = lambda *a, impl=impl: pk.triangle_multiplication(*a, triangle_type=triangle_type,
                                                           implementation=impl)
    got = jax.jit(ours)(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    _close(got, want, dtype, "fwd")
    grads = jax.jit(jax.grad(lambda x, w: loss(ours, x, w), (0, 1)))(args[0], args[2])
    _close(grads, want_grads, dtype, "grad")


@contextlib.contextmanager
def _backend_named_cpu() -> Iterator[None]:
  """Tokamax's attention picks its float32 dot algorithm from a table keyed by
  ``jax.default_backend()`` (tpu, gpu, gpu_old, cpu: no "pjrtkit", a KeyError there); its
  reference is computed with the name read as "cpu" (F32_F32_F32, what pjrtkit's CPU device
  runs)."""
  with mock.patch.object(jax, "default_backend", return_value="cpu"):
    yield


# --- dot_product_attention --------------------------------------------------------------------

ATTENTION_OPTIONS = {
    "plain": {},
    "causal": dict(is_causal=True),
    "lengths": dict(query_seq_lengths=jnp.array([10, 16]),
                    key_value_seq_lengths=jnp.array([20, 7])),
    "lengths_causal": dict(is_causal=True, query_seq_lengths=jnp.array([16, 5])),
    "window": dict(local_window_size=3),
    "window_causal": dict(local_window_size=(5, 0), is_causal=True),
    "soft_cap": dict(logits_soft_cap=2.0),
    "all": dict(scale=0.3, is_causal=True, local_window_size=(2, 4), logits_soft_cap=5.0,
                key_value_seq_lengths=jnp.array([24, 13])),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,with_bias_and_mask",
                         [(n, False) for n in sorted(ATTENTION_OPTIONS)]
                         + [("plain", True), ("lengths", True), ("all", True)])
def test_dot_product_attention_matches_tokamax(name: str, with_bias_and_mask: bool,
                                               dtype: str) -> None:
  """Tokamax's keyword arguments (sequence lengths, local window, soft cap) and positional bias
  and mask, grouped heads (4 query heads on 2 key/value heads), 16 queries on 24 keys."""
  options = ATTENTION_OPTIONS[name]
  rng = _rng(17)
  q = _normal(rng, (2, 16, 4, 32), dtype)
  k = _normal(rng, (2, 24, 2, 32), dtype)
  v = _normal(rng, (2, 24, 2, 32), dtype)
  extra = ((_normal(rng, (2, 1, 16, 24), "float32"), jnp.asarray(rng.random((1, 4, 16, 24)) > 0.2))
           if with_bias_and_mask else ())

  def loss(fn, q, k, v):
    return jnp.sum(jnp.sin(fn(q, k, v).astype(jnp.float32)))

  theirs = lambda q, k, v: tokamax.dot_product_attention(  # noqa: E731
      q, k, v, *extra, implementation="xla", **options)
  with _backend_named_cpu():
    want = jax.jit(theirs)(q, k, v)
    want_grads = jax.jit(jax.grad(lambda *a: loss(theirs, *a), (0, 1, 2)))(q, k, v)
  # The implementations' own numerics with these options are options_test.py's; here the API's
  # meaning: None everywhere, and every implementation that serves the richest calls.
  impls = (_implementations("dot_product_attention", lambda i: pk.dot_product_attention(
      q, k, v, *extra, implementation=i, **options)) if name in ("plain", "all") else [None])
  for impl in impls:
    ours = lambda q, k, v, impl=impl: pk.dot_product_attention(q, k, v, *extra,
                                                                implementation=impl, **options)
    got = jax.jit(ours)(q, k, v)
    assert got.dtype == want.dtype and got.shape == want.shape
    _close(got, want, dtype, "fwd")
    grads = jax.jit(jax.grad(lambda *a: loss(ours, *a), (0, 1, 2)))(q, k, v)
    _close(grads, want_grads, dtype, "grad")


# --- layer_norm -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subtract_mean", [True, False])
@pytest.mark.parametrize("scale_offset", [0.0, 1.0])
def test_layer_norm_matches_tokamax(dtype: str, subtract_mean: bool, scale_offset: float
                                    ) -> None:
  rng = _rng(19)
  x = _normal(rng, (6, 5, 40), dtype, 2.0)
  scale, offset = _normal(rng, (40,), dtype, 0.3), _normal(rng, (40,), dtype, 0.3)
  kwargs = dict(subtract_mean=subtract_mean, scale_offset=scale_offset, epsilon=1e-5)

  def loss(fn, x, s, o):
    return jnp.sum(jnp.sin(fn(x, s, o).astype(jnp.float32)))

  theirs = lambda x, s, o: tokamax.layer_norm(x, s, o, implementation="xla", **kwargs)  # noqa: E731
  want = jax.jit(theirs)(x, scale, offset)
  want_grads = jax.jit(jax.grad(lambda *a: loss(theirs, *a), (0, 1, 2)))(x, scale, offset)
  for impl in _implementations("layer_norm", lambda i: pk.layer_norm(
      x, scale, offset, implementation=i, **kwargs)):
    ours = lambda x, s, o, impl=impl: pk.layer_norm(x, s, o, implementation=impl, **kwargs)
    got = jax.jit(ours)(x, scale, offset)
    assert got.dtype == want.dtype and got.shape == want.shape
    _close(got, want, dtype, "fwd")
    grads = jax.jit(jax.grad(lambda *a: loss(ours, *a), (0, 1, 2)))(x, scale, offset)
    assert all(g.dtype == w.dtype for g, w in zip(grads, want_grads))
    _close(grads, want_grads, dtype, "grad")


def test_runs_on_pjrtkit_cpu_device() -> None:
  """The comparisons above ran on pjrtkit's CPU device (not jaxlib's)."""
  assert device.current_device().is_pjrtkit_cpu


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
