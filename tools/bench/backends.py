"""The three backends the benchmark compares and how a child process selects one of them."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
from pathlib import Path

DEVICE_COUNT = 4
"""Every backend is created with this many devices (pmap/psum runs over all of them)."""

DIRECT_PLATFORM = "xla_cpu_direct"
"""The name OpenXLA's XLA:CPU plugin is registered under when loaded directly."""

EXTRA_OPTIONS_ENV = "PJRTKIT_BENCH_CREATE_OPTIONS"
"""Environment variable: JSON object of extra pjrtkit create options (A/B runs of one build)."""


@dataclasses.dataclass(frozen=True)
class Backend:
  """One backend: its benchmark name and a one-line description."""

  name: str
  description: str


BACKENDS: tuple[Backend, ...] = (
    Backend("cpu", "jaxlib's built-in CPU backend"),
    Backend(DIRECT_PLATFORM, "OpenXLA's XLA:CPU PJRT plugin (xla-cpu-pjrt) registered directly"),
    Backend("pjrtkit", "pjrtkit's plugin (reference device on the same XLA:CPU plugin)"),
)
BASELINES: tuple[str, ...] = ("cpu", DIRECT_PLATFORM)
"""The backends pjrtkit is compared with."""


def xla_cpu_plugin_path() -> Path:
  """Path of ``xla_cpu_pjrt.so`` from the installed ``xla-cpu-pjrt`` package."""
  spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
  if spec is None or not spec.submodule_search_locations:
    raise ModuleNotFoundError("the benchmark needs the 'xla-cpu-pjrt' package")
  return Path(list(spec.submodule_search_locations)[0]) / "xla_cpu_pjrt.so"


def activate(name: str) -> None:
  """Configures JAX in this (fresh) process to use backend `name` with DEVICE_COUNT devices.

  Must run before JAX creates any backend.
  """
  import jax  # pylint: disable=g-import-not-at-top
  from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top

  if name == "cpu":
    jax.config.update("jax_num_cpu_devices", DEVICE_COUNT)
  elif name == DIRECT_PLATFORM:
    xla_bridge.register_plugin(DIRECT_PLATFORM, priority=400,
                               library_path=os.fspath(xla_cpu_plugin_path()),
                               options={"cpu_device_count": DEVICE_COUNT})
  elif name == "pjrtkit":
    options = {"device_count": DEVICE_COUNT}
    # Extra create options for A/B runs of one build, e.g. '{"host_buffer_cache_mib": 0}'.
    options.update(json.loads(os.environ.get(EXTRA_OPTIONS_ENV, "{}")))
    jax.config.update("jax_pjrt_client_create_options", options)
  else:
    raise ValueError(f"unknown backend {name!r}; known: {[b.name for b in BACKENDS]}")
  jax.config.update("jax_platforms", name)
  if len(jax.devices()) != DEVICE_COUNT:
    raise RuntimeError(f"{name}: expected {DEVICE_COUNT} devices, got {jax.devices()}")
