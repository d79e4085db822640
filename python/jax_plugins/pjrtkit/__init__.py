"""JAX plugin entry point for pjrtkit.

JAX imports this module (found through the `jax_plugins` namespace package and through the
`jax_plugins` entry point) and calls `initialize()`, which registers the PJRT plugin library
shipped next to this file under the platform name ``pjrtkit``, on the device ``_device``
chooses: ``xla_gpu`` (OpenXLA's CUDA plugin) on a machine with an NVIDIA GPU and
``jax-cuda13-pjrt`` (or ``-cuda12-``), else ``xla_cpu`` (OpenXLA's XLA:CPU plugin); ``sim`` (a
device with its own compiler and runtime) and any other registered device when named.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from jax_plugins.pjrtkit import _device
from jax_plugins.pjrtkit import _jax_compat
from jax_plugins.pjrtkit import _integration
from jax_plugins.pjrtkit import _jax_internals
from jax_plugins.pjrtkit import _paths
from jax_plugins.pjrtkit import _topology

logger = logging.getLogger(__name__)

PLATFORM_NAME = "pjrtkit"
"""The platform name JAX reports for pjrtkit devices."""

_STATUS: list[_integration.Status] = []
"""What the last ``initialize()`` installed (see ``integration_status``)."""

PRIORITY = 500
"""Backend priority: above jaxlib's CPU backend (0), so pjrtkit is the default when selected by
priority (an empty ``JAX_PLATFORMS``)."""


def default_options(device: str = _device.XLA_CPU) -> dict[str, Any]:
  """Returns the create options pjrtkit passes to ``PJRT_Client_Create`` for ``device``.

  A device that compiles StableHLO itself (runs like ``stablehlo``, e.g. ``sim``): ``device`` and
  ``stablehlo_library_path`` (torch-mlir's library, its StableHLO reader). A device that runs like
  xla_cpu: ``device`` and its inner-plugin option (``xla_cpu_plugin_path``:
  where OpenXLA's XLA:CPU plugin is). Like xla_gpu: ``device``, ``xla_gpu_plugin_path`` (the CUDA
  plugin of jax-cuda13-pjrt / -cuda12-) and the settings JAX's own CUDA plugin takes from
  ``XLA_PYTHON_CLIENT_*`` (see ``_device.gpu_default_options``). Options set through
  ``jax_pjrt_client_create_options`` (for example ``device_count``) are added by JAX after these
  and win on conflict.
  """
  info = _device.find(device)
  if info is None:
    raise ValueError(_device.unknown_device("pjrtkit device", device))
  if info.runs_like == _device.XLA_GPU:
    from jax._src.lib import xla_client  # pylint: disable=g-import-not-at-top

    plugin = _device.cuda_plugin_path()
    if plugin is None:
      raise ModuleNotFoundError(
          f"pjrtkit's {device} device needs OpenXLA's CUDA PJRT plugin (pip install "
          "jax-cuda13-pjrt)")
    return _device.gpu_default_options(plugin, os.environ, _device.jax_platforms(),
                                       xla_client.generate_pjrt_gpu_plugin_options(), device)
  options: dict[str, Any] = {_device.DEVICE_OPTION: device}
  if info.runs_like == _device.STABLEHLO:
    options[_paths.STABLEHLO_LIBRARY_OPTION] = str(_paths.stablehlo_library_path())
  elif info.inner_plugin_option:
    options[info.inner_plugin_option] = str(_paths.xla_cpu_plugin_path())
  return options


def integration_status() -> _integration.Status | None:
  """What pjrtkit's JAX integration installed, for which device and, when nothing, why.

  None before JAX initialized its plugins (``jax.devices()`` does) or when the plugin library is
  missing.
  """
  return _STATUS[-1] if _STATUS else None


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

  try:
    choice = _device.choose_for_this_process()
  except (ValueError, RuntimeError) as exc:
    logger.error("pjrtkit: %s; the pjrtkit platform is not registered.", exc)
    return
  logger.info("pjrtkit: device %s (%s)", choice.device, choice.reason)
  family = _device.runs_like(choice.device)
  if family == _device.XLA_GPU:
    _device.preload_nvidia_libraries()
    inner_plugin = _device.cuda_plugin_path()
  elif family == _device.STABLEHLO:
    inner_plugin = None
    try:
      # The library reports the StableHLO versions it reads when JAX loads it: from here.
      if not os.environ.get(_paths.STABLEHLO_LIBRARY_ENV):
        os.environ[_paths.STABLEHLO_LIBRARY_ENV] = os.fspath(_paths.stablehlo_library_path())
    except ModuleNotFoundError as exc:
      logger.error("pjrtkit: %s; the pjrtkit platform is not registered.", exc)
      return
  else:
    try:
      inner_plugin = _paths.xla_cpu_plugin_path()
    except ModuleNotFoundError:
      inner_plugin = None
  # The library decides its device when JAX loads it (attributes, extensions): this choice.
  _device.export_choice(choice, inner_plugin)
  options = lambda: default_options(choice.device)  # pylint: disable=unnecessary-lambda-assignment
  extra: dict[str, Any] = {}
  make_topology = None
  if family in (_device.XLA_CPU, _device.STABLEHLO) and _jax_compat.is_tested_version(
      jax.__version__) and not _jax_internals.problems([_jax_internals.TOPOLOGY]):
    # Topologies get the XLA:CPU plugin's (or the StableHLO library's) path too, so they compile
    # ahead of time (PJRT_Compile).
    make_topology = _topology.TopologyFactory(options)
    extra["make_topology"] = make_topology
  c_api = xla_bridge.register_plugin(
      PLATFORM_NAME,
      priority=PRIORITY,
      library_path=os.fspath(library),
      options=options,
      **extra,
  )
  if make_topology is not None:
    make_topology.c_api = c_api
  # The device's lowerings, FFI handlers, host callbacks, donation, persistent cache: all or
  # nothing.
  _STATUS.append(_integration.install(c_api, PLATFORM_NAME, choice.device))
