"""Writes a new pjrtkit device folder and registers it: ``python3 tools/new_device.py NAME``.

Two starting points (``--from``), each a template folder of ``tools/new_device_template/``:

* ``sim`` (the default): a device with its own compiler and runtime, the path of a team that
  brings its hardware and no PJRT plugin: the ``sim`` device's StableHLO compiler, memory, queues
  and kernels under the kind NAME (factory, registry entry, BUILD, unit test, conformance and JAX
  tests, README saying which layer to replace with what);
* ``xla_cpu``: a device over a published PJRT plugin through the shared wrapper
  (``xla_plugin/plugin_wrapper``): OpenXLA's XLA:CPU plugin under the device's own policy.

The one line outside the folder, ``"NAME",``, goes into ``DEVICES`` in
``xla_plugin/devices/registry/devices.bzl``. Afterwards ``bazel test //xla_plugin/devices/NAME/...``
builds and tests it, ``bash tools/setup.sh`` rebuilds the plugin and installs it into ``.venv``, and
``PJRTKIT_DEVICE=NAME`` (or create option ``device=NAME``) selects it.

  --from {sim,xla_cpu}   the starting point (default: sim)
  --root DIR             the repository to write into (default: this one)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).resolve().parent / "new_device_template"
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{1,30}")
RESERVED = frozenset({"auto", "plugin_wrapper", "stablehlo", "registry", "selection", "template",
                      "cpu", "gpu", "tpu", "cuda", "rocm", "host", "pjrtkit"})
_COMMON = {  # template file -> file in the device folder ({name} substituted)
    "BUILD.in": "BUILD",
    "README.md.in": "README.md",
    "factory.h.in": "{name}_factory.h",
    "factory.cc.in": "{name}_factory.cc",
    "entry.h.in": "entry.h",
    "entry.cc.in": "entry.cc",
    "device_test.cc.in": "{name}_device_test.cc",
    "jax_test.py.in": "{name}_jax_test.py",
}
STARTING_POINTS = {  # --from -> (template folder, its files)
    "sim": ("own_runtime", dict(_COMMON)),
    "xla_cpu": ("wrapped", {**_COMMON, "policy.h.in": "{name}_policy.h",
                            "policy.cc.in": "{name}_policy.cc"}),
}
"""The starting points: a device with its own compiler and runtime (sim's), or over a wrapped
PJRT plugin (XLA:CPU's)."""
_LIST = re.compile(r"(DEVICES = \[\n)((?:    \"[a-z0-9_]+\",\n)*)(\])")


def class_name(name: str) -> str:
  """``acme_npu`` -> ``AcmeNpu``."""
  return "".join(part.capitalize() for part in name.split("_"))


def check_name(name: str, root: Path) -> None:
  """Raises ValueError naming the rule ``name`` breaks."""
  if not NAME_PATTERN.fullmatch(name):
    raise ValueError(f"NAME must match {NAME_PATTERN.pattern} (lower case, digits, '_'; 2-31 "
                     f"characters, a letter first), got {name!r}")
  if name in RESERVED or name.startswith("xla_"):
    raise ValueError(f"NAME {name!r} is reserved (reserved: {', '.join(sorted(RESERVED))}, and "
                     "every xla_* name)")
  if (root / "xla_plugin" / "devices" / name).exists():
    raise ValueError(f"xla_plugin/devices/{name} exists already")


def register(devices_bzl: Path, name: str) -> None:
  """Appends ``"name",`` to ``DEVICES`` in ``devices_bzl``."""
  text = devices_bzl.read_text(encoding="utf-8")
  match = _LIST.search(text)
  if match is None:
    raise ValueError(f"{devices_bzl}: no 'DEVICES = [' list of one quoted name per line")
  if f'    "{name}",\n' in match.group(2):
    raise ValueError(f"{devices_bzl}: {name!r} is registered already")
  entries = match.group(2) + f'    "{name}",\n'
  devices_bzl.write_text(text[:match.start()] + match.group(1) + entries + match.group(3) +
                         text[match.end():], encoding="utf-8")


def write_device(name: str, root: Path, start: str = "sim") -> list[Path]:
  """Writes the device folder from starting point ``start`` (``STARTING_POINTS``) and registers
  it; returns the files written (the folder's, then devices.bzl)."""
  if start not in STARTING_POINTS:
    raise ValueError(f"--from must be one of {', '.join(sorted(STARTING_POINTS))}, got {start!r}")
  template, files = STARTING_POINTS[start]
  check_name(name, root)
  folder = root / "xla_plugin" / "devices" / name
  values = {"@NAME@": name, "@CLASS@": class_name(name), "@UPPER@": name.upper()}
  written = []
  folder.mkdir(parents=True)
  for source, target in files.items():
    text = (TEMPLATE / template / source).read_text(encoding="utf-8")
    for key, value in values.items():
      text = text.replace(key, value)
    path = folder / target.format(name=name)
    path.write_text(text, encoding="utf-8")
    written.append(path)
  devices_bzl = root / "xla_plugin" / "devices" / "registry" / "devices.bzl"
  register(devices_bzl, name)
  written.append(devices_bzl)
  return written


def main(argv: list[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("name", help="the device's name: its folder, `device` option value and kind")
  parser.add_argument("--from", dest="start", choices=sorted(STARTING_POINTS), default="sim",
                      help="sim: own compiler and runtime (default); xla_cpu: over a wrapped plugin")
  parser.add_argument("--root", type=Path, default=REPO)
  args = parser.parse_args(argv)
  try:
    written = write_device(args.name, args.root.resolve(), args.start)
  except ValueError as exc:
    print(f"new_device: {exc}", file=sys.stderr)
    return 2
  for path in written:
    print(path.relative_to(args.root.resolve()))
  print(f"next: bazel test //xla_plugin/devices/{args.name}/...")
  print("      bash tools/setup.sh   (rebuilds the plugin with the new device and installs it into "
        ".venv; JAX in .venv knows the device only after this)")
  print(f"      PJRTKIT_DEVICE={args.name} JAX_PLATFORMS=pjrtkit .venv/bin/python your_script.py")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
