"""Writes a new pjrtkit device folder and registers it: ``python3 tools/new_device.py NAME``.

The folder ``xla_plugin/devices/NAME`` holds a device over OpenXLA's XLA:CPU plugin (its own
policy, factory, registry entry, BUILD, unit test, conformance and JAX tests, README), made from
``tools/new_device_template/``; the one line outside it, ``"NAME",``, goes into ``DEVICES`` in
``xla_plugin/devices/registry/devices.bzl``. Afterwards ``bazel test //xla_plugin/devices/NAME/...``
builds and tests it, and ``PJRTKIT_DEVICE=NAME`` (or create option ``device=NAME``) selects it.

  --root DIR   the repository to write into (default: this one)
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
FILES = {  # template file -> file in the device folder ({name} substituted)
    "BUILD.in": "BUILD",
    "README.md.in": "README.md",
    "policy.h.in": "{name}_policy.h",
    "policy.cc.in": "{name}_policy.cc",
    "factory.h.in": "{name}_factory.h",
    "factory.cc.in": "{name}_factory.cc",
    "entry.h.in": "entry.h",
    "entry.cc.in": "entry.cc",
    "device_test.cc.in": "{name}_device_test.cc",
    "jax_test.py.in": "{name}_jax_test.py",
}
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


def write_device(name: str, root: Path) -> list[Path]:
  """Writes the device folder and registers it; returns the files written (the folder's, then
  devices.bzl)."""
  check_name(name, root)
  folder = root / "xla_plugin" / "devices" / name
  values = {"@NAME@": name, "@CLASS@": class_name(name), "@UPPER@": name.upper()}
  written = []
  folder.mkdir(parents=True)
  for source, target in FILES.items():
    text = (TEMPLATE / source).read_text(encoding="utf-8")
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
  parser.add_argument("--root", type=Path, default=REPO)
  args = parser.parse_args(argv)
  try:
    written = write_device(args.name, args.root.resolve())
  except ValueError as exc:
    print(f"new_device: {exc}", file=sys.stderr)
    return 2
  for path in written:
    print(path.relative_to(args.root.resolve()))
  print(f"next: bazel test //xla_plugin/devices/{args.name}/... ; then PJRTKIT_DEVICE={args.name}")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
