"""What `implementation=None` lowers for other platforms than the one it chose for, and calls
with symbolic dimensions (`jax.export` shape polymorphism), for every op.

Run with pjrtkit's CPU device first and JAX's cpu backend beside it (the default here): "None"
takes the native C++ kernels for pjrtkit and must give programs lowered for ``cpu`` (arrays on
JAX's cpu device, exports for ``cpu``) the ops' "xla" instead.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import device as device_lib  # noqa: E402
from pjrtkit.kernels.core import op as op_lib  # noqa: E402
from pjrtkit.kernels.core import triton_matmul  # noqa: E402

_NATIVE_TARGET = "pjrtkit_kernels_"
_RNG = np.random.default_rng(0)


def _normal(*shape: int) -> jax.Array:
  return jnp.asarray(_RNG.standard_normal(shape), jnp.float32)


def _pair() -> tuple[Any, ...]:
  n, c = 4, 8
  return (_normal(n, n, c), jnp.ones((n, n), jnp.float32), _normal(c, 2, c), _normal(c, 2, c),
          _normal(c, c), _normal(c, c), jnp.ones((c,)), jnp.zeros((c,)), jnp.ones((c,)),
          jnp.zeros((c,)))


# name -> (function of (arrays..., implementation), concrete arrays, symbolic shapes or None
# where the op's first dimension cannot be symbolic); sizes above native's thresholds so that
# "None" takes the native kernels on pjrtkit's CPU device.
_B = "b"
CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...], tuple[Any, ...] | None]] = {
    "layer_norm": (lambda x, s, o, i: pk.layer_norm(x, s, o, implementation=i),
                   (_normal(256, 256), jnp.ones((256,)), jnp.zeros((256,))),
                   ((_B, 256), (256,), (256,))),
    "dot_product_attention": (
        lambda q, k, v, i: pk.dot_product_attention(q, k, v, implementation=i),
        (_normal(2, 256, 4, 64),) * 3, ((_B, 256, 4, 64),) * 3),
    "gated_linear_unit": (
        lambda x, w, i: pk.gated_linear_unit(x, w, activation=jax.nn.silu, implementation=i),
        (_normal(512, 1024), _normal(1024, 2, 1024)), ((_B, 1024), (1024, 2, 1024))),
    "linear_softmax_cross_entropy_loss": (
        lambda x, l, w, i: pk.linear_softmax_cross_entropy_loss(x, l, w, implementation=i),
        (_normal(1024, 512), jnp.arange(1024, dtype=jnp.int32) % 1024, _normal(512, 1024)),
        ((_B, 512), (_B,), (512, 1024))),
    "ragged_dot": (lambda x, w, g, i: pk.ragged_dot(x, w, g, implementation=i),
                   (_normal(512, 256), _normal(4, 256, 256), jnp.array([100, 0, 300, 112],
                                                                       jnp.int32)),
                   ((_B, 256), (4, 256, 256), (4,))),
    "triangle_multiplication": (
        lambda *a: pk.triangle_multiplication(*a[:-1], "outgoing", implementation=a[-1]),
        _pair(), None),
}


_NATIVE_BY_RULE = ("dot_product_attention", "layer_norm", "ragged_dot", "triangle_multiplication")
"""The ops whose rule takes "native" on pjrtkit's CPU device at these sizes on any x86 CPU."""


def _loss(f: Callable[..., Any], impl: str | None) -> Callable[..., Any]:
  return lambda *a: jnp.sum(f(*a, impl).astype(jnp.float32))


def _grad(f: Callable[..., Any], impl: str | None, args: tuple[Any, ...]) -> Callable[..., Any]:
  """The gradient with respect to the floating arguments."""
  argnums = tuple(i for i, a in enumerate(args) if jnp.issubdtype(a.dtype, jnp.floating))
  return jax.grad(_loss(f, impl), argnums=argnums)


def _structs(args: tuple[Any, ...], shapes: tuple[Any, ...]) -> list[jax.ShapeDtypeStruct]:
  out = []
  b = jax.export.symbolic_shape(_B)[0]  # One symbol (one scope) for every argument.
  for a, shape in zip(args, shapes):
    dims = tuple(b if d == _B else d for d in shape)
    out.append(jax.ShapeDtypeStruct(dims, a.dtype))
  return out


def _close(got: Any, want: Any) -> None:
  """float32 sums in another order (XLA:CPU of jaxlib against pjrtkit's, k up to 1024): within
  1e-4 of the largest magnitude of each result."""
  for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
    w = np.asarray(w)
    np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4,
                               atol=1e-4 * max(1.0, float(np.max(np.abs(w), initial=0.0))))


def _on_pjrtkit_cpu() -> bool:
  return device_lib.current_device().is_pjrtkit_cpu


@pytest.mark.parametrize("name", sorted(CASES))
def test_none_lowers_native_for_pjrtkit_and_xla_for_cpu(name):
  if not _on_pjrtkit_cpu():
    pytest.skip("needs pjrtkit's CPU device as the default device (native kernels)")
  f, args, _ = CASES[name]
  cpu = jax.devices("cpu")[0]
  on_cpu = [jax.device_put(a, cpu) for a in args]
  call = jax.jit(lambda *a: f(*a, None))
  if name in _NATIVE_BY_RULE:  # The others take "native" for bfloat16 on AMX tiles only.
    assert _NATIVE_TARGET in call.lower(*args).as_text()
  assert _NATIVE_TARGET not in call.lower(*on_cpu).as_text()
  want = jax.jit(lambda *a: f(*a, "xla"))(*args)
  _close(call(*on_cpu), want)
  _close(call(*args), want)
  grad = jax.jit(_grad(f, None, args))
  assert _NATIVE_TARGET not in grad.lower(*on_cpu).as_text()
  _close(grad(*on_cpu), jax.jit(_grad(f, "xla", args))(*args))


@pytest.mark.parametrize("name", ["layer_norm", "dot_product_attention"])
def test_exports_of_none_run_on_each_platform_they_name(name):
  if not _on_pjrtkit_cpu():
    pytest.skip("needs pjrtkit's CPU device as the default device (native kernels)")
  f, args, _ = CASES[name]
  cpu = jax.devices("cpu")[0]
  structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
  call = jax.jit(lambda *a: f(*a, None))
  want = jax.jit(lambda *a: f(*a, "xla"))(*args)
  only_cpu = jax.export.export(call, platforms=["cpu"],
                               disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(*structs)
  assert _NATIVE_TARGET not in only_cpu.mlir_module()
  _close(only_cpu.call(*[jax.device_put(a, cpu) for a in args]), want)
  both = jax.export.deserialize(jax.export.export(
      call, platforms=["pjrtkit", "cpu"], disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
          *structs).serialize())
  assert _NATIVE_TARGET in both.mlir_module()
  _close(both.call(*args), want)
  _close(both.call(*[jax.device_put(a, cpu) for a in args]), want)


def test_a_named_implementation_is_not_replaced():
  if not _on_pjrtkit_cpu():
    pytest.skip("needs pjrtkit's CPU device as the default device (native kernels)")
  f, args, _ = CASES["layer_norm"]
  on_cpu = [jax.device_put(a, jax.devices("cpu")[0]) for a in args]
  assert _NATIVE_TARGET in jax.jit(lambda *a: f(*a, "native")).lower(*on_cpu).as_text()


@pytest.mark.parametrize("impl", [None, "xla"])
@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c[2] is not None))
def test_symbolic_dimensions_export_and_match_the_concrete_call(name, impl):
  f, args, shapes = CASES[name]
  structs = _structs(args, shapes)
  exported = jax.export.deserialize(jax.export.export(
      jax.jit(lambda *a: f(*a, impl)), disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
          *structs).serialize())
  assert str(exported.in_avals[0].shape[0]) == "b"
  want = jax.jit(lambda *a: f(*a, "xla"))(*args)
  _close(exported.call(*args), want)
  grad = jax.export.export(jax.jit(_grad(f, impl, args)),
                           disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(*structs)
  _close(grad.call(*args), jax.jit(_grad(f, "xla", args))(*args))


def test_symbolic_dimensions_refuse_kernels_that_need_concrete_shapes():
  f, args, shapes = CASES["layer_norm"]
  structs = _structs(args, shapes)
  for impl in ("native", "triton"):
    with pytest.raises(pk.UnsupportedImplementationError,
                       match=r"symbolic dimensions .* only these implementations serve: "
                             r"\['xla'\]"):
      jax.export.export(jax.jit(lambda *a, i=impl: f(*a, i)))(*structs)
  with pytest.raises(ValueError, match=r"unknown implementation='nope'"):
    jax.export.export(jax.jit(lambda *a: f(*a, "nope")))(*structs)
  # Plain-JAX implementations that tile by concrete sizes refuse too, and a sequence goes on.
  f, args, shapes = CASES["dot_product_attention"]
  structs = _structs(args, shapes)
  with pytest.raises(pk.UnsupportedImplementationError, match="symbolic dimensions"):
    jax.export.export(jax.jit(lambda *a: f(*a, "xla_chunked")))(*structs)
  exported = jax.export.export(jax.jit(lambda *a: f(*a, ["xla_chunked", "xla"])),
                               disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(*structs)
  _close(exported.call(*args), jax.jit(lambda *a: f(*a, "xla"))(*args))


def test_symbolic_spec_keeps_the_dimension_and_writes_its_text():
  b = jax.export.symbolic_shape("b")[0]
  spec = pk.Spec.make("op", {"x": jax.ShapeDtypeStruct((2 * b, 3), jnp.float32)}, {})
  assert spec.symbolic and spec.args[0].shape == (2 * b, 3)
  assert spec.to_json()["args"] == [["x", [["2*b", 3], "float32"]]]
  concrete = pk.Spec.make("op", {"x": jax.ShapeDtypeStruct((4, 3), jnp.float32)}, {})
  assert not concrete.symbolic and concrete.args[0].shape == (4, 3)


class _Twice(op_lib.Op):
  """A portable op: 2x, its residuals (x,)."""

  op_name = "platforms_test_op"
  implementation = "xla"
  portable = True

  def forward(self, args, spec, config):
    return args[0] * 2.0, (args[0],)

  def backward(self, residuals, dout, spec, config):
    return (dout * 2.0,)


class _Thrice(_Twice):
  """A device's kernel (not portable): 3x, the same residuals."""

  implementation = "own"
  portable = False

  def forward(self, args, spec, config):
    return args[0] * 3.0, (args[0],)

  def backward(self, residuals, dout, spec, config):
    return (dout * 3.0,)


class _ThriceOwnResiduals(_Thrice):
  """A device's kernel whose residuals only its own backward reads (as cuDNN's pullback)."""

  implementation = "own_residuals"
  own_residuals = True

  def forward(self, args, spec, config):
    return args[0] * 3.0, (args[0], args[0])

  def backward(self, residuals, dout, spec, config):
    assert len(residuals) == 2
    return (dout * 3.0,)


@pytest.mark.parametrize("own, cpu_grad", [("own", [0.0, 8.0, 16.0]),
                                           ("own_residuals", [0.0, 18.0, 36.0])])
def test_each_phase_falls_back_where_its_residuals_allow(own, cpu_grad):
  if not _on_pjrtkit_cpu():
    pytest.skip("needs pjrtkit's CPU device as the default device")
  family = op_lib.Family("platforms_test_op",
                         {"xla": _Twice(), "own": _Thrice(), "own_residuals": _ThriceOwnResiduals()},
                         rule=lambda spec, device, phase: [own])

  def f(x):
    return family.call(pk.Spec.make("platforms_test_op", {"x": x}, {}), (x,), None)

  x = jnp.arange(3, dtype=jnp.float32)
  on_cpu = jax.device_put(x, jax.devices("cpu")[0])
  assert jax.jit(f)(x).tolist() == [0.0, 3.0, 6.0]
  assert jax.jit(f)(on_cpu).tolist() == [0.0, 2.0, 4.0]  # Outputs always agree in form.
  grad = jax.jit(jax.grad(lambda x: jnp.sum(f(x) ** 2)))  # 2 f(x) f'(x)
  assert grad(x).tolist() == [0.0, 18.0, 36.0]
  # With the common residuals "xla" runs both phases on the cpu device; with residuals of its
  # own (cuDNN's case) the kernel and its backward are lowered as chosen everywhere.
  assert grad(on_cpu).tolist() == cpu_grad


@pytest.mark.parametrize("platform", ["gpu", "pjrtkit"])
def test_on_a_hopper_gpu_none_exports_mosaic_for_cuda_and_xla_for_cpu(monkeypatch, platform):
  """JAX's CUDA backend ("gpu") or pjrtkit's GPU device, whose exports are for cuda, as the
  default device (simulated: the choice reads `current_device`, Pallas's Mosaic GPU lowering
  targets an abstract H200): the Mosaic kernels for cuda, none in a program for cpu, forward
  and gradient."""
  monkeypatch.setattr(device_lib, "current_device", lambda: device_lib.DeviceInfo(
      platform=platform, kind="NVIDIA H200", compute_capability=(9, 0)))
  q = jax.ShapeDtypeStruct((1, 256, 4, 64), jnp.bfloat16)

  def attention(q, k, v):
    return pk.dot_product_attention(q, k, v, is_causal=True)

  grad = jax.grad(lambda *a: jnp.sum(attention(*a).astype(jnp.float32)), argnums=(0, 1, 2))
  for fn in (attention, grad):
    with triton_matmul.lowering_target():
      cuda = jax.export.export(jax.jit(fn), platforms=["cuda"],
                               disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(q, q, q)
    cpu = jax.export.export(jax.jit(fn), platforms=["cpu"],
                            disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(q, q, q)
    assert "custom_call @mosaic_gpu" in cuda.mlir_module()
    assert "mosaic_gpu" not in cpu.mlir_module()
    args = [jax.device_put(_normal(*q.shape).astype(q.dtype), jax.devices("cpu")[0])] * 3
    xla = lambda *a: pk.dot_product_attention(*a, is_causal=True, implementation="xla")
    want = xla if fn is attention else jax.grad(
        lambda *a: jnp.sum(xla(*a).astype(jnp.float32)), argnums=(0, 1, 2))
    for got, ref in zip(jax.tree.leaves(cpu.call(*args)), jax.tree.leaves(jax.jit(want)(*args))):
      assert np.array_equal(np.asarray(got, np.float32), np.asarray(ref, np.float32))


def test_ragged_dot_takes_callables_in_its_implementation_sequence():
  """Tokamax's custom implementations: called with the op's arguments by name; one raising
  NotImplementedError passes the call on; a lone callable's error is raised as it is."""
  lhs, rhs, sizes = jnp.ones((4, 2)), jnp.ones((2, 2, 3)), jnp.array([1, 3], jnp.int32)
  seen = []

  def mine(lhs, rhs, *, group_sizes, ragged_dot_dimension_numbers, precision,
           preferred_element_type, activation):
    seen.append((lhs.shape, rhs.shape, group_sizes.tolist(), precision, activation))
    return jnp.full((4, 3), 7.0)

  def refuses(*args, **kwargs):
    raise NotImplementedError("not this one")

  assert pk.ragged_dot(lhs, rhs, sizes, implementation=[mine]).tolist() == [[7.0] * 3] * 4
  assert seen == [((4, 2), (2, 2, 3), [1, 3], None, None)]
  got = pk.ragged_dot(lhs, rhs, sizes, implementation=[refuses, "xla"])
  assert got.tolist() == [[2.0] * 3] * 4
  with pytest.raises(NotImplementedError, match="not this one"):
    pk.ragged_dot(lhs, rhs, sizes, implementation=[refuses])
  with pytest.raises(ExceptionGroup) as group:
    pk.ragged_dot(lhs, rhs, sizes, implementation=[refuses, "triton"])
  assert [type(e).__name__ for e in group.value.exceptions] == [
      "NotImplementedError", "UnsupportedImplementationError"]
  with pytest.raises(ValueError, match="sequence of names or callables"):
    pk.ragged_dot(lhs, rhs, sizes, implementation=[3])
  with pytest.raises(ValueError, match=r"sequence of names \("):  # Other ops take names only.
    pk.layer_norm(jnp.ones((2, 4)), None, None, implementation=[mine])


def test_lowering_platforms_of_each_device():
  info = device_lib.DeviceInfo
  assert info("gpu", "NVIDIA H200", (9, 0)).lowering_platforms == ("cuda",)
  assert info("pjrtkit", "NVIDIA H200", (9, 0)).lowering_platforms == ("pjrtkit", "cuda")
  assert info("pjrtkit", "pjrtkit_cpu", None).lowering_platforms == ("pjrtkit",)
  assert info("cpu", "cpu", None).lowering_platforms == ("cpu",)
  assert info("gpu", "AMD Instinct MI300X", (0, 0)).lowering_platforms == ()


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
