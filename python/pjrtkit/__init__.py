"""pjrtkit: the public Python API of the pjrtkit PJRT plugin.

Importing this package does not import JAX. The plugin registers itself with JAX through the
``jax_plugins`` mechanism; select it with ``JAX_PLATFORMS=pjrtkit`` or
``jax.config.update("jax_platforms", "pjrtkit")``.
"""

from __future__ import annotations

from pjrtkit._build_info import BuildInfo, build_info
from pjrtkit._host_buffer_pool import HostBufferPoolStats
from pjrtkit._host_buffer_pool import host_buffer_pool_stats
from pjrtkit._host_buffer_pool import trim_host_buffer_pool
from pjrtkit._version import __version__

PLATFORM_NAME = "pjrtkit"
"""The platform name JAX reports for pjrtkit devices."""

__all__ = [
    "BuildInfo", "HostBufferPoolStats", "PLATFORM_NAME", "__version__", "build_info",
    "host_buffer_pool_stats", "library_path", "trim_host_buffer_pool",
]


def library_path() -> str:
  """Returns the path of the pjrtkit PJRT plugin library JAX loads."""
  from jax_plugins.pjrtkit import _paths  # pylint: disable=g-import-not-at-top
  return str(_paths.plugin_library_path())
