"""JAX plugin entry point for pjrtkit.

JAX imports this module (found through the `jax_plugins` namespace package and through the
`jax_plugins` entry point) and calls `initialize()`, which registers the PJRT plugin library
shipped next to this file under the platform name ``pjrtkit``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from jax_plugins.pjrtkit import _jax_compat
from jax_plugins.pjrtkit import _integration
from jax_plugins.pjrtkit import _jax_internals
from jax_plugins.pjrtkit import _paths
from jax_plugins.pjrtkit import _topology

logger = logging.getLogger(__name__)

PLATFORM_NAME = "pjrtkit"
"""The platform name JAX reports for pjrtkit devices."""

PRIORITY = 500
"""Backend priority: above jaxlib's CPU backend (0), so pjrtkit is the default when selected by
priority (an empty ``JAX_PLATFORMS``)."""


def default_options() -> dict[str, Any]:
  """Returns the create options pjrtkit passes to ``PJRT_Client_Create``.

  ``xla_cpu_plugin_path`` tells the reference device where OpenXLA's XLA:CPU plugin is. Options
  set through ``jax_pjrt_client_create_options`` (for example ``device_count``) are added by JAX
  after these and win on conflict.
  """
  return {"xla_cpu_plugin_path": str(_paths.xla_cpu_plugin_path())}


def initialize() -> None:
  """Registers the pjrtkit PJRT plugin with JAX (called by JAX's plugin discovery)."""
  from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top

  library = _paths.plugin_library_path()
  if not library.exists():
    logger.warning(
        "pjrtkit: plugin library %s is missing (build it with tools/setup.sh or set "
        "%s); the pjrtkit platform is not registered.", library, _paths.LIBRARY_ENV)
    return
  import jax  # pylint: disable=g-import-not-at-top

  extra: dict[str, Any] = {}
  make_topology = None
  if _jax_compat.is_tested_version(jax.__version__) and not _jax_internals.problems(
      [_jax_internals.TOPOLOGY]):
    # Topologies get the XLA:CPU plugin path too, so they compile ahead of time (PJRT_Compile).
    make_topology = _topology.TopologyFactory(default_options)
    extra["make_topology"] = make_topology
  c_api = xla_bridge.register_plugin(
      PLATFORM_NAME,
      priority=PRIORITY,
      library_path=os.fspath(library),
      options=default_options,
      **extra,
  )
  if make_topology is not None:
    make_topology.c_api = c_api
  # FFI, cpu lowerings and LAPACK, host callbacks, donation, persistent cache: all or nothing.
  _integration.install(c_api, PLATFORM_NAME)
