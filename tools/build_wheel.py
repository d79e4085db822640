"""Builds the pjrtkit wheel: the plugin .so, its build record and the Python packages.

Usage (tools/build_wheels.sh runs it after the Bazel build):
  python tools/build_wheel.py --plugin bazel-bin/xla_plugin/pjrtkit_plugin.so \
      --build-info bazel-bin/xla_plugin/build_info.json --out dist

The wheel is ``pjrtkit-<version>-py3-none-manylinux_<glibc>_<arch>.whl``: the plugin is not a
Python extension (JAX dlopens it), so it fits every Python 3.12+, and its platform tag is the
newest glibc symbol version its libraries need (GLIBC_2.27 for x86_64 builds, jaxlib's own floor:
both link libstdc++ and libgcc in, xla_plugin/glibc_floor). The METADATA records the PJRT C API version the plugin
was built at and the jaxlib range it is tested with (also in ``build_info.json`` inside).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import platform
import re
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_PACKAGES = ("python/pjrtkit", "python/jax_plugins/pjrtkit")


def project_version() -> str:
  """The version in pyproject.toml."""
  text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
  match = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M)
  if not match:
    raise ValueError("pyproject.toml has no version")
  return match.group(1)


def glibc_requirement(so: Path) -> tuple[int, int]:
  """The newest GLIBC_x.y symbol version `so` needs (from `readelf -V`).

  Raises:
    ValueError: when `so` needs a version of libstdc++ or libgcc_s (GLIBCXX_, CXXABI_, GCC_): the
      wheel's libraries link them in (xla_plugin/glibc_floor), as no manylinux tag bounds them.
  """
  out = subprocess.run(["readelf", "-V", "--wide", str(so)], capture_output=True, text=True,
                       check=True).stdout
  others = sorted(set(re.findall(r"Name: ((?:GLIBCXX|CXXABI|GCC)_[\d.]+)", out)))
  if others:
    raise ValueError(f"{so} needs {', '.join(others)}: link libstdc++ and libgcc statically "
                     "(xla_plugin/glibc_floor/glibc_floor.bzl)")
  versions = {(int(a), int(b)) for a, b in re.findall(r"GLIBC_(\d+)\.(\d+)", out)}
  return max(versions) if versions else (2, 17)


def wheel_tag(*libraries: Path) -> str:
  """``py3-none-manylinux_<x>_<y>_<arch>``: the newest glibc any of `libraries` needs."""
  major, minor = max(glibc_requirement(so) for so in libraries)
  return f"py3-none-manylinux_{major}_{minor}_{platform.machine()}"


def is_library_source(path: Path) -> bool:
  """Whether `path` (relative to ``kernels/``) goes into the wheel: not a test (``*_test.py``)
  and not test support (a ``testing/`` folder)."""
  return not path.name.endswith("_test.py") and "testing" not in path.parts[:-1]


def _record_line(name: str, data: bytes) -> str:
  digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
  return f"{name},sha256={digest},{len(data)}"


def metadata(version: str, info: dict) -> str:
  """The wheel's METADATA text."""
  major, minor = info["pjrt_c_api_version"]
  readme = (REPO / "README.md").read_text(encoding="utf-8") if (REPO / "README.md").exists() else ""
  return "\n".join([
      "Metadata-Version: 2.1",
      "Name: pjrtkit",
      f"Version: {version}",
      "Summary: A PJRT plugin scaffold for JAX with a working reference device.",
      "License: Apache-2.0",
      "Requires-Python: >=3.12",
      f"Requires-Dist: jaxlib{info['jaxlib_tested']}",
      f"Requires-Dist: jax{info['jaxlib_tested']}",
      "Requires-Dist: xla-cpu-pjrt==0.0.1",
      "Requires-Dist: numpy>=2",
      f"Platform: PJRT-C-API-{major}.{minor}",
      "Description-Content-Type: text/markdown",
      "",
      f"Built at PJRT C API {major}.{minor}; tested with jaxlib {info['jaxlib_tested']}.",
      "",
      readme,
  ])


def build(plugin: Path, build_info: Path, out: Path) -> Path:
  """Writes the wheel into `out` and returns its path."""
  version = project_version()
  info = json.loads(build_info.read_text(encoding="utf-8"))
  if info["pjrtkit_version"] != version:
    raise ValueError(f"build_info.json says {info['pjrtkit_version']}, pyproject.toml {version}")
  kernels_library = plugin.parents[1] / "kernels" / "native" / "pjrtkit_kernels.so"
  libraries = [plugin] + ([kernels_library] if kernels_library.exists() else [])
  tag = wheel_tag(*libraries)
  dist_info = f"pjrtkit-{version}.dist-info"
  files: dict[str, bytes] = {}
  for package in _PACKAGES:
    for source in sorted((REPO / package).glob("*.py")):
      files[str(source.relative_to(REPO / "python"))] = source.read_bytes()
  # pjrtkit.kernels: the top-level kernels/ folder (python/pjrtkit/kernels/ only imports it in a
  # checkout) without its tests and test support, and its native library.
  files = {n: d for n, d in files.items() if not n.startswith("pjrtkit/kernels/")}
  for source in sorted((REPO / "kernels").rglob("*.py")):
    if is_library_source(source.relative_to(REPO / "kernels")):
      files["pjrtkit/kernels/" + str(source.relative_to(REPO / "kernels"))] = source.read_bytes()
  for tuned in sorted((REPO / "kernels" / "tuned").glob("*.json")):
    files[f"pjrtkit/kernels/tuned/{tuned.name}"] = tuned.read_bytes()
  if kernels_library.exists():
    files["pjrtkit/kernels/native/pjrtkit_kernels.so"] = kernels_library.read_bytes()
  files["jax_plugins/pjrtkit/pjrtkit_plugin.so"] = plugin.read_bytes()
  files["jax_plugins/pjrtkit/build_info.json"] = build_info.read_bytes()
  files[f"{dist_info}/METADATA"] = metadata(version, info).encode()
  files[f"{dist_info}/WHEEL"] = (
      f"Wheel-Version: 1.0\nGenerator: pjrtkit tools/build_wheel.py\nRoot-Is-Purelib: false\n"
      f"Tag: {tag}\n").encode()
  files[f"{dist_info}/entry_points.txt"] = b"[jax_plugins]\npjrtkit = jax_plugins.pjrtkit\n"
  files[f"{dist_info}/top_level.txt"] = b"jax_plugins\npjrtkit\n"
  record = [_record_line(name, data) for name, data in files.items()]
  record.append(f"{dist_info}/RECORD,,")
  files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

  out.mkdir(parents=True, exist_ok=True)
  wheel = out / f"pjrtkit-{version}-{tag}.whl"
  with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
    for name, data in files.items():
      entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
      entry.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
      entry.compress_type = zipfile.ZIP_DEFLATED
      zf.writestr(entry, data)
  return wheel


def main(argv: list[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--plugin", type=Path, required=True, help="pjrtkit_plugin.so")
  parser.add_argument("--build-info", type=Path, required=True, help="build_info.json")
  parser.add_argument("--out", type=Path, default=REPO / "dist", help="output folder")
  args = parser.parse_args(argv)
  print(build(args.plugin, args.build_info, args.out))
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
