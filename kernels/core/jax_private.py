"""Every private JAX object pjrtkit.kernels uses, in one place, each with why and a fallback.

| object | used for | fallback |
| --- | --- | --- |
| ``jax._src.lib.mosaic_gpu._mosaic_gpu_ext._cupti_init`` / ``_cupti_get_timings`` | the "cupti" benchmarking method (what ``jax.experimental.mosaic.gpu.profiler`` uses) | None: "cupti" unavailable |
"""

from __future__ import annotations

from typing import Any


def cupti_extension() -> Any | None:
  """jaxlib's Mosaic GPU extension with CUPTI timings (jax-cuda plugin), or None."""
  try:
    from jax._src.lib import mosaic_gpu as mosaic_gpu_lib  # pylint: disable=g-import-not-at-top
  except ImportError:
    return None
  ext = getattr(mosaic_gpu_lib, "_mosaic_gpu_ext", None)
  if ext is None or not hasattr(ext, "_cupti_init") or not hasattr(ext, "_cupti_get_timings"):
    return None
  return ext
