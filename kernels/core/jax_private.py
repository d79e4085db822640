"""The private JAX objects pjrtkit.kernels uses, taken from pjrtkit's one fenced list.

Every JAX internal pjrtkit touches, the kernels' included, is an entry of
``jax_plugins.pjrtkit._jax_internals.INTERNALS`` (checked by ``//tests/jax:jax_internals_test``,
which also scans ``kernels/`` for ``jax._src`` use). The kernels use one: jaxlib's Mosaic GPU
extension's CUPTI timings, for the "cupti" benchmarking method (None: "cupti" unavailable).
"""

from __future__ import annotations

from typing import Any


def cupti_extension() -> Any | None:
  """jaxlib's Mosaic GPU extension with CUPTI timings (jax-cuda plugin), or None."""
  from jax_plugins.pjrtkit import _jax_internals  # pylint: disable=g-import-not-at-top
  return _jax_internals.cupti_extension()
