"""Test helpers for pjrtkit.kernels: environment for the Bazel-built plugin and kernel library,
and the tolerances every numerics test uses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import numpy as np

TOLERANCES = {
    # (dtype, what): max |got - want| allowed, relative to max(1, max |want|).
    ("float32", "fwd"): 2e-5,
    ("float32", "grad"): 2e-4,
    ("bfloat16", "fwd"): 2e-2,
    ("bfloat16", "grad"): 1.25e-1,
    ("float16", "fwd"): 4e-3,
    ("float16", "grad"): 2e-2,
}
"""Per-dtype tolerances: float32 kernels differ from the reference only in summation order;
bfloat16 outputs are rounded to 8 bits of mantissa (one ulp at 2 is 0.0156) and gradients go
through bfloat16 cotangents and probabilities."""


def setup_environment(platforms: str = "pjrtkit,cpu") -> None:
  """Points JAX at the Bazel-built plugin and the kernels at the Bazel-built library (runfiles or
  bazel-bin), before JAX is imported."""
  root = Path(os.environ.get("TEST_SRCDIR", "")) / os.environ.get("TEST_WORKSPACE", "pjrtkit")
  if not os.environ.get("TEST_SRCDIR"):
    root = Path(__file__).resolve().parents[1] / "bazel-bin"
  plugin = root / "xla_plugin" / "pjrtkit_plugin.so"
  library = root / "kernels" / "native" / "pjrtkit_kernels.so"
  if plugin.exists():
    os.environ.setdefault("PJRTKIT_PLUGIN_LIBRARY", str(plugin))
  if library.exists():
    os.environ.setdefault("PJRTKIT_KERNELS_LIBRARY", str(library))
  os.environ.setdefault("JAX_PLATFORMS", platforms)
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


PALLAS = ("triton", "mosaic")
"""The Pallas implementations: interpret mode without a GPU, compiled kernels on one."""


def on_gpu() -> bool:
  """Whether the kernels run on an NVIDIA GPU now (JAX's cuda backend or pjrtkit's GPU device)."""
  from pjrtkit.kernels.core import device  # pylint: disable=g-import-not-at-top
  return device.current_device().is_gpu


def interpret(impl: str) -> bool:
  """Whether a test runs `impl` in Pallas interpret mode: a Pallas kernel without a GPU."""
  return impl in PALLAS and not on_gpu()


def skip_unless_runnable(impl: str) -> None:
  """Skips a test of `impl` where it cannot run: "native" off pjrtkit's CPU device."""
  import pytest  # pylint: disable=g-import-not-at-top
  from pjrtkit.kernels.core import device  # pylint: disable=g-import-not-at-top
  if impl == "native" and not device.current_device().is_pjrtkit_cpu:
    pytest.skip("the native kernels run on pjrtkit's CPU device only")


def skip_on_gpu(why: str) -> None:
  """Skips a CPU-device-only test on a GPU."""
  import pytest  # pylint: disable=g-import-not-at-top
  if on_gpu():
    pytest.skip(why)


def skip_unless_gpu() -> None:
  """Skips a test of compiled Pallas kernels without a GPU."""
  import pytest  # pylint: disable=g-import-not-at-top
  if not on_gpu():
    pytest.skip("compiled Triton / Mosaic GPU kernels need an NVIDIA GPU (tools/kernels_gpu)")


def full_float32_products() -> Iterator[None]:
  """A test's float32 products in full float32 on every backend (XLA:GPU's default float32 dot
  is TF32, 10 bits of mantissa): test modules make it an autouse fixture with
  ``_float32 = pytest.fixture(autouse=True)(testing.full_float32_products)``, so that the
  float32 tolerances above hold for the XLA paths on a GPU as on the CPU."""
  import jax  # pylint: disable=g-import-not-at-top
  with jax.default_matmul_precision("highest"):
    yield


def assert_close(got: Any, want: Any, dtype: str, what: str) -> None:
  """Asserts max |got - want| <= TOLERANCES[(dtype, what)] * max(1, max |want|)."""
  got = np.asarray(got, np.float32)
  want = np.asarray(want, np.float32)
  assert got.shape == want.shape, (got.shape, want.shape)
  assert np.all(np.isfinite(got)), "non-finite values"
  tol = TOLERANCES[(dtype, what)] * max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
  err = float(np.max(np.abs(got - want))) if got.size else 0.0
  assert err <= tol, f"{what} {dtype}: max error {err} > {tol}"


def described_h200() -> Any:
  """A `DeviceInfo` describing an NVIDIA H200, for tests of the rules and refusals a GPU would
  see, run without one."""
  from pjrtkit.kernels.core import device  # pylint: disable=g-import-not-at-top
  return device.DeviceInfo(platform="cuda", kind="NVIDIA H200", compute_capability=(9, 0))


def assert_value_and_grad_close(call: Any, want: Any, args: tuple[Any, ...], dtype: str) -> None:
  """Asserts `call(*args)` and the gradient of sum(sin(out)) with respect to every argument are
  within TOLERANCES of `want`'s."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  assert_close(call(*args), want(*args), dtype, "fwd")
  loss = lambda f: lambda *a: jnp.sum(jnp.sin(f(*a).astype(jnp.float32)))  # noqa: E731
  argnums = tuple(range(len(args)))
  got = jax.grad(loss(call), argnums=argnums)(*args)
  ref = jax.grad(loss(want), argnums=argnums)(*args)
  for g, r in zip(got, ref):
    assert_close(g, r, dtype, "grad")
