"""pjrtkit's version and build record agree everywhere they are written."""

from __future__ import annotations

import json
import re
import sys

import pytest

from tests.testing.plugin_env import plugin_library, runfiles_root


def _pyproject_version() -> str:
  text = (runfiles_root() / "pyproject.toml").read_text(encoding="utf-8")
  return re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)


def test_versions_agree():
  from pjrtkit import _version  # pylint: disable=g-import-not-at-top
  info = json.loads(plugin_library().with_name("build_info.json").read_text(encoding="utf-8"))
  assert _version.__version__ == _pyproject_version() == info["pjrtkit_version"]


def test_build_info_matches_header():
  header = (runfiles_root().parent / "venv" / "include" / "xla" / "pjrt" / "c" /
            "pjrt_c_api.h").read_text(encoding="utf-8")
  major = int(re.search(r"^#define PJRT_API_MAJOR (\d+)", header, re.M).group(1))
  minor = int(re.search(r"^#define PJRT_API_MINOR (\d+)", header, re.M).group(1))
  info = json.loads(plugin_library().with_name("build_info.json").read_text(encoding="utf-8"))
  assert info["pjrt_c_api_version"] == [major, minor]
  assert major == 0 and minor >= 114  # At least what jaxlib 0.12's C API client speaks.


def _pin(lock: str) -> str:
  text = (runfiles_root() / lock).read_text(encoding="utf-8")
  pins = {p: re.search(rf"^{p}==(\S+)$", text, re.M).group(1) for p in ("jax", "jaxlib")}
  assert pins["jax"] == pins["jaxlib"], f"{lock} pins jax and jaxlib to different releases"
  return pins["jaxlib"]


def test_jax_range_is_written_once_in_the_lock_files():
  import importlib.util  # pylint: disable=g-import-not-at-top
  oldest, newest = _pin("requirements-jax-oldest.lock"), _pin("requirements.lock")
  assert (oldest, newest) == ("0.11.2", "0.12.0.1")
  info = json.loads(plugin_library().with_name("build_info.json").read_text(encoding="utf-8"))
  assert info["jax_tested"] == [oldest, newest]
  assert info["jaxlib_tested"] == f">={oldest},<={newest}"
  spec = importlib.util.spec_from_file_location("pjrtkit_setup", runfiles_root() / "setup.py")
  setup = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(setup)  # Runs nothing: setup() is behind __main__.
  assert setup.dependencies()[:2] == [f"jax>={oldest},<={newest}", f"jaxlib>={oldest},<={newest}"]
  pyproject = (runfiles_root() / "pyproject.toml").read_text(encoding="utf-8")
  assert re.search(r'^dynamic = \["dependencies"\]$', pyproject, re.M)
  assert "jax>=" not in pyproject and "jaxlib>=" not in pyproject
  from jax_plugins.pjrtkit import _jax_compat  # pylint: disable=g-import-not-at-top
  assert _jax_compat.tested_range_text() == f"{oldest} <= jax <= {newest}"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
