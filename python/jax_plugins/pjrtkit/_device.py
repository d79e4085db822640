"""Which pjrtkit device JAX gets, and its default create options.

The devices are the plugin's registry (``xla_plugin/devices/registry``: ``xla_cpu``, ``xla_gpu``
and every device folder listed in ``devices.bzl``), which the build writes into
``build_info.json`` ("devices") next to the library and the library reports as its
``pjrtkit_devices`` attribute. The C++ side chooses per client
(``xla_plugin/devices/selection/device_choice.h``) and this module makes the same choice at
``initialize()``, because JAX's integration (lowering rules, FFI handlers, callbacks) is installed
per device before the client exists. In this order:

1. the create option ``device`` (``jax_pjrt_client_create_options``): a registered device's name;
2. create options only some devices accept (``device_count``: xla_cpu; ``memory_fraction``:
   xla_gpu; ...): the devices that accept all of them; one left decides;
3. the environment variable ``PJRTKIT_DEVICE`` (a device's name, or ``auto``);
4. the available device with the highest ``auto_priority`` above 0: ``xla_gpu`` when an NVIDIA
   GPU is visible and OpenXLA's CUDA PJRT plugin is installed (``jax-cuda13-pjrt`` or
   ``jax-cuda12-pjrt``), else ``xla_cpu``. Here a device that runs like ``xla_gpu`` is available
   with a GPU and the CUDA plugin, one that runs like ``xla_cpu`` always.

The options passed to ``PJRT_Client_Create`` always name the device, so the C++ choice agrees.
The plugin library also decides its device once, when it is loaded (before any client exists:
its attributes and extensions depend on it; ``xla_plugin/devices/selection/process_device.h``),
from ``PJRTKIT_DEVICE`` and the machine; ``export_choice`` sets ``PJRTKIT_DEVICE`` and the inner
plugin's path variable before JAX loads the library, so that decision is this one.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import importlib.util
import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jax_plugins.pjrtkit import _paths

logger = logging.getLogger(__name__)

XLA_CPU = "xla_cpu"
XLA_GPU = "xla_gpu"
STABLEHLO = "stablehlo"
RUNS_LIKE = (XLA_CPU, XLA_GPU, STABLEHLO)
"""``DeviceInfo.runs_like``'s values (``kRunsLike*`` in
``xla_plugin/devices/registry/device_entry.h``): the reference devices, whose JAX integration a
wrapped device reuses, and ``stablehlo``, a device that compiles StableHLO itself (JAX's
platform-independent lowering rules only)."""
DEVICE_OPTION = "device"
DEVICE_ENV = "PJRTKIT_DEVICE"


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
  """A registered device, as ``Registry::ToJson`` describes it.

  Attributes:
    name: the ``device`` option's value, and the device folder's name.
    runs_like: one of ``RUNS_LIKE``: the JAX integration installed for it.
    summary: one line.
    auto_priority: rule 4's priority (0: only when named).
    inner_plugin_option: the create option naming its inner plugin ("" for a device without one:
      a device with its own runtime).
    inner_plugin_env: the variable its C++ side reads when that option is empty ("" likewise).
    options: the names of the create options it accepts (besides ``device``).
  """

  name: str
  runs_like: str
  summary: str
  auto_priority: int
  inner_plugin_option: str
  inner_plugin_env: str
  options: tuple[str, ...]


def parse_registry(devices: Sequence[Mapping[str, Any]]) -> tuple[DeviceInfo, ...]:
  """``DeviceInfo`` of each item of build_info.json's "devices" (or the plugin's attribute).

  A device without an inner plugin has ``""`` (or no key) for ``inner_plugin_option`` and
  ``inner_plugin_env``.
  """
  return tuple(
      DeviceInfo(d["name"], d["runs_like"], d["summary"], int(d["auto_priority"]),
                 d.get("inner_plugin_option") or "", d.get("inner_plugin_env") or "",
                 tuple(o["name"] for o in d["options"])) for d in devices)


@functools.lru_cache(maxsize=1)
def registry() -> tuple[DeviceInfo, ...]:
  """The registered devices, from the ``build_info.json`` beside the plugin library.

  Raises:
    RuntimeError: when the file is missing or has no "devices" (a library built before the
      registry existed: rebuild with ``tools/setup.sh``).
  """
  path = _paths.build_info_path()
  try:
    with open(path, encoding="utf-8") as f:
      devices = json.load(f)["devices"]
  except (OSError, ValueError, KeyError) as exc:
    raise RuntimeError(f"pjrtkit: cannot read the device registry from {path} ({exc}); rebuild "
                       "the plugin (bash tools/setup.sh)") from exc
  return parse_registry(devices)


def device_names(devices: Sequence[DeviceInfo] | None = None) -> tuple[str, ...]:
  """The registered devices' names, in registration order."""
  return tuple(d.name for d in (registry() if devices is None else devices))


def find(name: str, devices: Sequence[DeviceInfo] | None = None) -> DeviceInfo | None:
  """The registered device ``name``, or None."""
  for device in registry() if devices is None else devices:
    if device.name == name:
      return device
  return None


def runs_like(name: str) -> str:
  """One of ``RUNS_LIKE`` for a registered device (a reference device is itself); ``name`` itself
  when it is not registered."""
  device = find(name)
  return device.runs_like if device is not None else name


def options_of(name: str) -> frozenset[str]:
  """The create options device ``name`` accepts (empty when it is not registered)."""
  device = find(name)
  return frozenset(device.options) if device is not None else frozenset()


def accepted_names(devices: Sequence[DeviceInfo] | None = None) -> str:
  """``'xla_cpu', 'xla_gpu' or 'auto'``: the words the C++ side uses too."""
  names = [f"'{n}'" for n in device_names(devices)]
  return ", ".join(names) + (" or 'auto'" if names else "'auto'")


def unknown_device(what: str, name: str, devices: Sequence[DeviceInfo] | None = None) -> str:
  """The refusal of ``name`` as ``what`` (``"create option 'device'"``, ...): the accepted names,
  and, when the checkout this package is installed from has a device folder of that name (added
  with ``tools/new_device.py`` after the plugin was built), what to run."""
  text = f"{what} must be {accepted_names(devices)}, got '{name}'"
  folder = _paths.source_device_folder(name) if name else None
  if folder is not None:
    text += (f"; {folder} exists, but the plugin this package loads "
             f"({_paths.plugin_library_path()}) was built without it: run `bash tools/setup.sh` "
             "(it rebuilds the plugin with every registered device and installs it into .venv)")
  return text


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
    device: a registered device's name.
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

  The same test as ``xla_gpu::NvidiaGpuVisible`` in C++ (``xla_plugin/devices/xla_gpu/entry.h``): no CUDA call, so nothing is
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


def _owners_words(owners: Sequence[DeviceInfo], article: bool) -> str:
  names = [d.name for d in owners]
  text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
  return ("the " if article else "") + text + (" device" if len(names) == 1 else " devices")


def choose(options: Mapping[str, Any], environ: Mapping[str, str], gpu_visible: bool,
           gpu_plugin: Path | None, devices: Sequence[DeviceInfo] | None = None) -> Choice:
  """The device for create ``options`` on a machine with ``gpu_visible`` and ``gpu_plugin``.

  ``devices`` defaults to the registry.

  Raises:
    ValueError: for a ``device`` (or ``PJRTKIT_DEVICE``) value that is not a device, or options
      no device accepts together, or that the device asked for does not accept (the C++ side
      refuses them with the same words).
  """
  devices = tuple(registry() if devices is None else devices)
  requested = options.get(DEVICE_OPTION, "")
  chosen = None
  if requested not in ("", "auto"):
    chosen = find(requested, devices)
    if chosen is None:
      raise ValueError(unknown_device("create option 'device'", requested, devices))
  candidates = list(devices)
  narrowed_by, narrowed_owners = "", []
  for name in sorted(options):
    if name == DEVICE_OPTION:
      continue
    owners = [d for d in devices if name in d.options]
    if not owners or len(owners) == len(devices):
      continue
    if chosen is not None:
      if chosen not in owners:
        raise ValueError(f"create option '{name}' belongs to {_owners_words(owners, True)}, but "
                         f"option 'device' is '{chosen.name}'")
      continue
    left = [d for d in candidates if d in owners]
    if not left:
      raise ValueError(f"create options '{narrowed_by}' ({_owners_words(narrowed_owners, False)})"
                       f" and '{name}' ({_owners_words(owners, False)}) select different devices;"
                       " pass one device's options, or choose with option 'device'")
    candidates, narrowed_by, narrowed_owners = left, name, owners
  if chosen is not None:
    return Choice(chosen.name, "create option 'device'")
  if len(candidates) == 1:
    return Choice(candidates[0].name, f"create option '{narrowed_by}'")
  env = environ.get(DEVICE_ENV, "")
  if env not in ("", "auto"):
    named = find(env, devices)
    if named is None:
      raise ValueError(unknown_device(f"environment variable {DEVICE_ENV}", env, devices))
    if named in candidates:
      return Choice(env, f"environment variable {DEVICE_ENV}")
  gpu_ready = gpu_visible and gpu_plugin is not None
  available = [d for d in candidates if d.auto_priority > 0 and
               (d.runs_like != XLA_GPU or gpu_ready)]
  if not available:
    return Choice(candidates[0].name, "no device is available for auto, so the first registered")
  best = max(available, key=lambda d: d.auto_priority)  # The first of equals.
  if best.runs_like == XLA_GPU:
    return Choice(best.name, f"an NVIDIA GPU and OpenXLA's CUDA plugin ({gpu_plugin})")
  if gpu_visible and any(d.runs_like == XLA_GPU and d.auto_priority > best.auto_priority
                         for d in candidates):
    return Choice(best.name, "an NVIDIA GPU, but no CUDA PJRT plugin (pip install "
                  "jax-cuda13-pjrt for the xla_gpu device)")
  return Choice(best.name, "no NVIDIA GPU")




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
  device = find(choice.device)
  variable = device.inner_plugin_env if device is not None else ""
  if variable and inner_plugin is not None and not target.get(variable):
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
                        jax_gpu_options: Mapping[str, Any], device: str = XLA_GPU
                        ) -> dict[str, Any]:
  """The create options of the xla_gpu device (or of ``device``, which runs like it).

  Args:
    plugin: the CUDA plugin's path.
    environ: the environment (``XLA_PYTHON_CLIENT_PREALLOCATE`` is read).
    platforms: ``jax_platforms()``.
    jax_gpu_options: ``xla_client.generate_pjrt_gpu_plugin_options()`` (JAX's GPU settings from
      ``XLA_PYTHON_CLIENT_*``); its ``platform_name`` is not passed (the device sets it).

    device: the device's name.

  Returns:
    ``device``, ``xla_gpu_plugin_path``, the settings JAX's own CUDA plugin would pass, and
    ``preallocate=False`` when JAX may also create its own CUDA client in this process (no
    ``JAX_PLATFORMS``, or one naming cuda/gpu) and the user did not choose: two clients that
    each take 75 % of the GPU cannot both start.
  """
  info = find(device)
  accepted = frozenset(info.options) if info is not None else frozenset()
  path_option = info.inner_plugin_option if info is not None else "xla_gpu_plugin_path"
  options: dict[str, Any] = {DEVICE_OPTION: device, path_option: os.fspath(plugin)}
  for key, value in jax_gpu_options.items():
    if key in accepted and key != path_option:
      options[key] = value
  shares_gpu = not platforms or any(p in ("cuda", "gpu") for p in platforms)
  if shares_gpu and "XLA_PYTHON_CLIENT_PREALLOCATE" not in environ:
    options["preallocate"] = False
  return options
