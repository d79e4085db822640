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
  assert info["pjrt_c_api_version"] == [major, minor] == [0, 81]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
