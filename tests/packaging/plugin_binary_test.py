"""The wheel's native libraries, the plugin .so and the kernels' pjrtkit_kernels.so: each exports
only its entry points, links dynamically only against glibc's libraries (libstdc++ and libgcc are
linked in), and needs no glibc symbol version newer than GLIBC_2.27, jaxlib's manylinux_2_27
floor (xla_plugin/glibc_floor): what `auditwheel show` would check."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.testing.plugin_env import plugin_library, runfiles_root

ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0"}
GLIBC_FLOOR = (2, 27)
"""The newest glibc symbol version a library may need: jaxlib 0.12's wheels are manylinux_2_27."""


def _kernels_library() -> Path:
  return runfiles_root() / "kernels" / "native" / "pjrtkit_kernels.so"


LIBRARIES = {"plugin": plugin_library, "kernels": _kernels_library}


@pytest.fixture(params=sorted(LIBRARIES))
def library(request) -> Path:
  return LIBRARIES[request.param]()


def _readelf(library: Path, *args: str) -> str:
  return subprocess.run(["readelf", "--wide", *args, str(library)], capture_output=True,
                        text=True, check=True).stdout


def _exports(library: Path) -> set[str]:
  defined = set()
  for line in _readelf(library, "--dyn-syms").splitlines():
    cols = line.split()
    # Num: Value Size Type Bind Vis Ndx Name
    if len(cols) >= 8 and cols[0].endswith(":") and cols[6] != "UND" and cols[4] in (
        "GLOBAL", "WEAK", "UNIQUE"):
      defined.add(cols[7].split("@")[0])
  return defined


def test_plugin_exports_only_get_pjrt_api():
  assert _exports(plugin_library()) == {"GetPjrtApi"}


def test_kernels_export_only_their_entry_points():
  # kernels/native/exported_symbols.lds exports PjrtkitKernels* and hides everything else, the
  # statically linked C++ runtime included.
  exports = _exports(_kernels_library())
  assert exports, "the kernels library exports nothing"
  assert all(name.startswith("PjrtkitKernels") for name in exports), sorted(exports)


def test_needed_libraries_are_only_glibcs(library: Path):
  needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", _readelf(library, "-d")))
  assert needed, "readelf found no NEEDED entries"
  assert needed <= ALLOWED_NEEDED | {n for n in needed if n.startswith("ld-linux")}, needed


def test_needs_no_symbol_version_newer_than_the_floor(library: Path):
  # objdump -T: one line per dynamic symbol; an undefined one names the version it needs.
  out = subprocess.run(["objdump", "-T", str(library)], capture_output=True, text=True,
                       check=True).stdout
  needs = re.findall(r"\*UND\*\s+\S+\s+\((\w+?)_([\d.]+)\)\s+(\S+)", out)
  assert needs, "objdump found no versioned undefined symbols"
  families = {family for family, _, _ in needs}
  assert families == {"GLIBC"}, f"needs versions of {families - {'GLIBC'}} (not linked in?)"
  newer = sorted(f"{symbol}@GLIBC_{version}" for _, version, symbol in needs
                 if tuple(int(p) for p in version.split(".")[:2]) > GLIBC_FLOOR)
  assert not newer, newer
  # The version-needed section (readelf -V) agrees: no library but glibc's, no newer version.
  versions = re.findall(r"Name: (\w+?)_(\d+)\.(\d+)", _readelf(library, "-V"))
  assert {family for family, _, _ in versions} == {"GLIBC"}
  assert max((int(a), int(b)) for _, a, b in versions) <= GLIBC_FLOOR


def test_ldd_resolves_only_allowed_libraries(library: Path):
  out = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout
  names = {line.split()[0] for line in out.splitlines() if line.strip()}
  allowed = ALLOWED_NEEDED | {"linux-vdso.so.1"}
  extra = {n for n in names if n not in allowed and "ld-linux" not in n}
  assert not extra, f"unexpected dynamic dependencies: {extra}\n{out}"
  assert "not found" not in out


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
