"""The plugin .so exports only GetPjrtApi and links dynamically only against the C/C++ runtime."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.testing.plugin_env import plugin_library

ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"}


def _readelf(*args: str) -> str:
  return subprocess.run(["readelf", "--wide", *args, str(plugin_library())], capture_output=True,
                        text=True, check=True).stdout


def test_exports_only_get_pjrt_api():
  defined = set()
  for line in _readelf("--dyn-syms").splitlines():
    cols = line.split()
    # Num: Value Size Type Bind Vis Ndx Name
    if len(cols) >= 8 and cols[0].endswith(":") and cols[6] != "UND" and cols[4] in (
        "GLOBAL", "WEAK", "UNIQUE"):
      defined.add(cols[7].split("@")[0])
  assert defined == {"GetPjrtApi"}


def test_needed_libraries_are_only_the_c_and_cpp_runtime():
  needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", _readelf("-d")))
  assert needed, "readelf found no NEEDED entries"
  assert needed <= ALLOWED_NEEDED | {n for n in needed if n.startswith("ld-linux")}, needed


def test_ldd_resolves_only_allowed_libraries():
  out = subprocess.run(["ldd", str(plugin_library())], capture_output=True, text=True,
                       check=True).stdout
  names = {line.split()[0] for line in out.splitlines() if line.strip()}
  allowed = ALLOWED_NEEDED | {"linux-vdso.so.1"}
  extra = {n for n in names if n not in allowed and "ld-linux" not in n}
  assert not extra, f"unexpected dynamic dependencies: {extra}\n{out}"
  assert "not found" not in out


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
