"""Which pjrtkit device JAX gets (``xla_cpu`` or ``xla_gpu``), and its default create options.

One plugin library serves both reference devices; the C++ side chooses per client
(``xla_plugin/devices/selection/device_choice.h``) and this module makes the same choice at
``initialize()``, because JAX's integration (lowering rules, FFI handlers, callbacks) is installed
per device before the client exists. In this order:

1. the create option ``device`` (``jax_pjrt_client_create_options``): ``xla_cpu`` or ``xla_gpu``;
2. create options only one device accepts (``device_count``: xla_cpu; ``memory_fraction``:
   xla_gpu; ...);
3. the environment variable ``PJRTKIT_DEVICE`` (``xla_cpu``, ``xla_gpu`` or ``auto``);
4. ``xla_gpu`` when an NVIDIA GPU is visible and OpenXLA's CUDA PJRT plugin is installed
   (``jax-cuda13-pjrt`` or ``jax-cuda12-pjrt``), else ``xla_cpu``.

The options passed to ``PJRT_Client_Create`` always name the device, so the C++ choice agrees.
The plugin library also decides its device once, when it is loaded (before any client exists:
its attributes and extensions depend on it; ``xla_plugin/devices/selection/process_device.h``),
from ``PJRTKIT_DEVICE`` and the machine; ``export_choice`` sets ``PJRTKIT_DEVICE`` and the inner
plugin's path variable before JAX loads the library, so that decision is this one.
"""

from __future__ import annotations

import ctypes
import dataclasses
import importlib.util
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

XLA_CPU = "xla_cpu"
XLA_GPU = "xla_gpu"
DEVICES = (XLA_CPU, XLA_GPU)
DEVICE_OPTION = "device"
DEVICE_ENV = "PJRTKIT_DEVICE"

CPU_ONLY_OPTIONS = frozenset({"device_count", "xla_cpu_plugin_path", "host_buffer_cache_mib"})
"""Create options of the xla_cpu device (``XlaCpuFactory::OptionSpecs``)."""

GPU_ONLY_OPTIONS = frozenset({
    "xla_gpu_plugin_path", "allocator", "memory_fraction", "preallocate",
    "collective_memory_size", "visible_devices", "should_stage_host_to_device_transfers",
    "abort_collectives_on_failure", "max_inflight_computations", "use_tfrt_gpu_client"})
"""Create options of the xla_gpu device (``XlaGpuOptions::Specs``)."""

CUDA_PLUGIN_MODULES = ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12")
"""Packages holding OpenXLA's CUDA PJRT plugin (``xla_cuda_plugin.so``), newest first."""

NVIDIA_LIBRARIES = (
    ("cu13", ("libcudart.so.13", "libnvrtc.so.13", "libcublas.so.13", "libcublasLt.so.13",
              "libcupti.so.13", "libcusparse.so.12", "libcusolver.so.12", "libcufft.so.12")),
    ("cuda_runtime", ("libcudart.so.12",)),
    ("cuda_nvrtc", ("libnvrtc.so.12",)),
    ("cublas", ("libcublas.so.12", "libcublasLt.so.12")),
    ("cuda_cupti", ("libcupti.so.12",)),
    ("cusparse", ("libcusparse.so.12",)),
    ("cusolver", ("libcusolver.so.11",)),
    ("cufft", ("libcufft.so.11",)),
    ("nccl", ("libnccl.so.2",)),
    ("nvshmem", ("libnvshmem_host.so.3",)),
    ("cudnn", ("libcudnn.so.9",)),
)
"""NVIDIA's libraries from the ``nvidia-*`` wheels, as JAX's CUDA plugin loads them: the
``nvidia.<package>`` module and the library files in its ``lib`` folder."""


@dataclasses.dataclass(frozen=True)
class Choice:
  """The device pjrtkit runs on, and why.

  Attributes:
    device: ``xla_cpu`` or ``xla_gpu``.
    reason: the rule that chose it, for logs and errors.
  """

  device: str
  reason: str


def user_create_options() -> dict[str, Any]:
  """The options set through ``jax_pjrt_client_create_options`` (dict or "k:v;..." form)."""
  import jax  # pylint: disable=g-import-not-at-top

  value = jax.config.jax_pjrt_client_create_options
  if not value:
    return {}
  if isinstance(value, Mapping):
    return dict(value)
  options = {}
  for item in str(value).split(";"):
    if item:
      key, _, text = item.partition(":")
      options[key] = text
  return options


def nvidia_gpu_visible(environ: Mapping[str, str] | None = None,
                       driver_dir: str = "/proc/driver/nvidia/gpus") -> bool:
  """True when the NVIDIA driver lists a GPU and ``CUDA_VISIBLE_DEVICES`` hides none of them.

  The same test as ``DeviceChoice::NvidiaGpuVisible`` in C++: no CUDA call, so nothing is
  initialized before JAX creates the client.
  """
  environ = os.environ if environ is None else environ
  visible = environ.get("CUDA_VISIBLE_DEVICES")
  if visible is not None and visible.strip() in ("", "-1"):
    return False
  try:
    return any(not name.startswith(".") for name in os.listdir(driver_dir))
  except OSError:
    return False


def cuda_plugin_path() -> Path | None:
  """``xla_cuda_plugin.so`` of the installed ``jax-cuda13-pjrt`` (or ``-cuda12-``), or None."""
  for module in CUDA_PLUGIN_MODULES:
    try:
      spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
      continue
    if spec is None or not spec.submodule_search_locations:
      continue
    candidate = Path(list(spec.submodule_search_locations)[0]) / "xla_cuda_plugin.so"
    if candidate.exists():
      return candidate.resolve()
  return None


def choose(options: Mapping[str, Any], environ: Mapping[str, str], gpu_visible: bool,
           gpu_plugin: Path | None) -> Choice:
  """The device for create ``options`` on a machine with ``gpu_visible`` and ``gpu_plugin``.

  Raises:
    ValueError: for a ``device`` (or ``PJRTKIT_DEVICE``) value that is not a device, or options
      of both devices, or of the other device than the one asked for (the C++ side refuses them
      with the same words).
  """
  requested = options.get(DEVICE_OPTION, "")
  if requested not in ("", "auto") + DEVICES:
    raise ValueError(f"create option 'device' must be 'xla_cpu', 'xla_gpu' or 'auto', got "
                     f"'{requested}'")
  cpu_only = sorted(set(options) & CPU_ONLY_OPTIONS)
  gpu_only = sorted(set(options) & GPU_ONLY_OPTIONS)
  if requested in DEVICES:
    other = gpu_only if requested == XLA_CPU else cpu_only
    if other:
      owner = XLA_GPU if requested == XLA_CPU else XLA_CPU
      raise ValueError(f"create option '{other[0]}' belongs to the {owner} device, but option "
                       f"'device' is '{requested}'")
    return Choice(requested, "create option 'device'")
  if cpu_only and gpu_only:
    raise ValueError(f"create options '{cpu_only[0]}' (xla_cpu device) and '{gpu_only[0]}' "
                     "(xla_gpu device) select different devices; pass one device's options, or "
                     "choose with option 'device'")
  if cpu_only:
    return Choice(XLA_CPU, f"create option '{cpu_only[0]}'")
  if gpu_only:
    return Choice(XLA_GPU, f"create option '{gpu_only[0]}'")
  env = environ.get(DEVICE_ENV, "")
  if env not in ("", "auto") + DEVICES:
    raise ValueError(f"environment variable {DEVICE_ENV} must be 'xla_cpu', 'xla_gpu' or "
                     f"'auto', got '{env}'")
  if env in DEVICES:
    return Choice(env, f"environment variable {DEVICE_ENV}")
  if gpu_visible and gpu_plugin is not None:
    return Choice(XLA_GPU, f"an NVIDIA GPU and OpenXLA's CUDA plugin ({gpu_plugin})")
  if gpu_visible:
    return Choice(XLA_CPU, "an NVIDIA GPU, but no CUDA PJRT plugin (pip install "
                  "jax-cuda13-pjrt for the xla_gpu device)")
  return Choice(XLA_CPU, "no NVIDIA GPU")


PLUGIN_PATH_ENV = {XLA_CPU: "PJRTKIT_XLA_CPU_PLUGIN", XLA_GPU: "PJRTKIT_XLA_GPU_PLUGIN"}
"""The variable each device's C++ side finds its inner plugin with when no create option says."""


def export_choice(choice: Choice, inner_plugin: Path | None,
                  environ: dict[str, str] | None = None) -> dict[str, str]:
  """Sets ``PJRTKIT_DEVICE`` to ``choice.device``, and the device's plugin variable to
  ``inner_plugin`` unless the user set it, in ``environ`` (default ``os.environ``).

  Returns the variables it changed (name -> new value).
  """
  target: Any = os.environ if environ is None else environ
  changed = {}
  if target.get(DEVICE_ENV) != choice.device:
    changed[DEVICE_ENV] = choice.device
  variable = PLUGIN_PATH_ENV[choice.device]
  if inner_plugin is not None and not target.get(variable):
    changed[variable] = os.fspath(inner_plugin)
  for name, value in changed.items():
    target[name] = value
  return changed


def choose_for_this_process() -> Choice:
  """``choose`` with JAX's create options, this environment and this machine."""
  return choose(user_create_options(), os.environ, nvidia_gpu_visible(), cuda_plugin_path())


def preload_nvidia_libraries() -> list[str]:
  """Loads NVIDIA's libraries from the ``nvidia-*`` wheels, as JAX's CUDA plugin does.

  The CUDA plugin finds them through its RPATH when both come from wheels in one site-packages;
  loading them first also covers other layouts (a later ``dlopen`` by name finds the loaded
  copy). Missing packages or files are skipped.

  Returns:
    The paths loaded.
  """
  loaded = []
  for package, libraries in NVIDIA_LIBRARIES:
    try:
      spec = importlib.util.find_spec(f"nvidia.{package}")
    except (ImportError, ValueError):
      continue
    if spec is None or not spec.submodule_search_locations:
      continue
    lib_dir = Path(list(spec.submodule_search_locations)[0]) / "lib"
    for library in libraries:
      path = lib_dir / library
      if not path.exists():
        continue
      try:
        ctypes.CDLL(os.fspath(path))
        loaded.append(os.fspath(path))
      except OSError as exc:
        logger.debug("pjrtkit: could not preload %s: %s", path, exc)
  return loaded


def jax_platforms() -> list[str]:
  """The platforms JAX was asked for (``jax_platforms`` / ``JAX_PLATFORMS``); [] when unset."""
  import jax  # pylint: disable=g-import-not-at-top

  value = jax.config.jax_platforms or ""
  return [p.strip() for p in value.split(",") if p.strip()]


def gpu_default_options(plugin: Path, environ: Mapping[str, str], platforms: list[str],
                        jax_gpu_options: Mapping[str, Any]) -> dict[str, Any]:
  """The xla_gpu device's create options.

  Args:
    plugin: the CUDA plugin's path.
    environ: the environment (``XLA_PYTHON_CLIENT_PREALLOCATE`` is read).
    platforms: ``jax_platforms()``.
    jax_gpu_options: ``xla_client.generate_pjrt_gpu_plugin_options()`` (JAX's GPU settings from
      ``XLA_PYTHON_CLIENT_*``); its ``platform_name`` is not passed (the device sets it).

  Returns:
    ``device``, ``xla_gpu_plugin_path``, the settings JAX's own CUDA plugin would pass, and
    ``preallocate=False`` when JAX may also create its own CUDA client in this process (no
    ``JAX_PLATFORMS``, or one naming cuda/gpu) and the user did not choose: two clients that
    each take 75 % of the GPU cannot both start.
  """
  options: dict[str, Any] = {DEVICE_OPTION: XLA_GPU, "xla_gpu_plugin_path": os.fspath(plugin)}
  for key, value in jax_gpu_options.items():
    if key in GPU_ONLY_OPTIONS:
      options[key] = value
  shares_gpu = not platforms or any(p in ("cuda", "gpu") for p in platforms)
  if shares_gpu and "XLA_PYTHON_CLIENT_PREALLOCATE" not in environ:
    options["preallocate"] = False
  return options
