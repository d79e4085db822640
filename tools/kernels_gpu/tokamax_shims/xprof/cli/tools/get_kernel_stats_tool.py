"""Stand-in for xprof's kernel-stats tool: importable, refuses to run (see xprof/__init__.py)."""

from typing import Any


def compute_kernel_stats(*args: Any, **kwargs: Any) -> Any:
  """Raises: xprof is not installed here; only its import is satisfied."""
  del args, kwargs
  raise NotImplementedError("xprof is a stand-in in this kit (tools/kernels_gpu/tokamax_shims): "
                            "Tokamax's xprof timing method is unavailable; use CUPTI timing")
