"""Where pjrtkit's files are: the plugin library, its build record, the XLA:CPU plugin, the
StableHLO library devices with their own compiler read programs with."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

LIBRARY_ENV = "PJRTKIT_PLUGIN_LIBRARY"
"""Environment variable that overrides the plugin library path (tests use it for Bazel builds)."""

_HERE = Path(__file__).resolve().parent


def plugin_library_path() -> Path:
  """Path of the pjrtkit plugin `.so`: ``$PJRTKIT_PLUGIN_LIBRARY`` or the one next to this file."""
  override = os.environ.get(LIBRARY_ENV)
  return Path(override) if override else _HERE / "pjrtkit_plugin.so"


def build_info_path() -> Path:
  """Path of ``build_info.json``, recorded by the Bazel build next to the library."""
  override = os.environ.get(LIBRARY_ENV)
  if override:
    candidate = Path(override).with_name("build_info.json")
    if candidate.exists():
      return candidate
  return _HERE / "build_info.json"


def source_device_folder(name: str) -> Path | None:
  """``xla_plugin/devices/NAME`` of the pjrtkit checkout this package is installed from (a
  development install, as ``tools/setup.sh`` makes), when NAME is a device registered there (a
  device name, listed in ``devices.bzl``, with a BUILD file); None otherwise (an installed wheel,
  a folder that is not a device, or no such device)."""
  if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
    return None
  root = _HERE.parents[2]
  devices = root / "xla_plugin" / "devices"
  folder = devices / name
  try:
    registered = f'"{name}",' in (devices / "registry" / "devices.bzl").read_text(encoding="utf-8")
  except OSError:
    return None
  if (root / "WORKSPACE").is_file() and registered and (folder / "BUILD").is_file():
    return folder
  return None


def xla_cpu_plugin_path() -> Path:
  """Path of OpenXLA's XLA:CPU PJRT plugin from the ``xla-cpu-pjrt`` package.

  Raises:
    ModuleNotFoundError: when ``xla-cpu-pjrt`` is not installed.
  """
  spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
  if spec is None or not spec.submodule_search_locations:
    raise ModuleNotFoundError(
        "pjrtkit's reference device needs the 'xla-cpu-pjrt' package (pip install "
        "xla-cpu-pjrt==0.0.1)")
  return Path(list(spec.submodule_search_locations)[0]) / "xla_cpu_pjrt.so"


STABLEHLO_LIBRARY_ENV = "PJRTKIT_STABLEHLO_LIBRARY"
"""Environment variable naming the StableHLO library (what the plugin reads when no create option
names it)."""

STABLEHLO_LIBRARY_OPTION = "stablehlo_library_path"
"""The create option naming it."""


def stablehlo_library_path() -> Path:
  """Path of torch-mlir's ``libTorchMLIRAggregateCAPI.so`` (PyPI ``torch-mlir``), the StableHLO
  reader of devices that compile StableHLO themselves (the ``sim`` device).

  Raises:
    ModuleNotFoundError: when ``torch-mlir`` is not installed.
  """
  spec = importlib.util.find_spec("torch_mlir")
  if spec is None or not spec.submodule_search_locations:
    raise ModuleNotFoundError(
        "pjrtkit's devices with their own compiler read StableHLO with the 'torch-mlir' package "
        "(pip install torch-mlir==20261001, as requirements.lock pins it)")
  return (Path(list(spec.submodule_search_locations)[0]) / "_mlir_libs" /
          "libTorchMLIRAggregateCAPI.so")
