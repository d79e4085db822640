"""Test helpers for pjrtkit.kernels: environment for the Bazel-built plugin and kernel library,
and the tolerances every numerics test uses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


def assert_close(got: Any, want: Any, dtype: str, what: str) -> None:
  """Asserts max |got - want| <= TOLERANCES[(dtype, what)] * max(1, max |want|)."""
  got = np.asarray(got, np.float32)
  want = np.asarray(want, np.float32)
  assert got.shape == want.shape, (got.shape, want.shape)
  assert np.all(np.isfinite(got)), "non-finite values"
  tol = TOLERANCES[(dtype, what)] * max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
  err = float(np.max(np.abs(got - want))) if got.size else 0.0
  assert err <= tol, f"{what} {dtype}: max error {err} > {tol}"
