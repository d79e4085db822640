"""What the plugin library was built against, read from its ``build_info.json``."""

from __future__ import annotations

import dataclasses
import json


@dataclasses.dataclass(frozen=True)
class BuildInfo:
  """The build record shipped next to the plugin library.

  Attributes:
    pjrt_c_api_version: ``(major, minor)`` of the PJRT C API header the plugin was built with.
    jax_tested: ``(oldest, newest)`` jax/jaxlib releases the plugin is tested with (the pins of
      ``requirements-jax-oldest.lock`` and ``requirements.lock``).
    jaxlib_tested: the same range as a PEP 440 specifier (``>=oldest,<=newest``).
    pjrtkit_version: the pjrtkit release.
  """

  pjrt_c_api_version: tuple[int, int]
  jax_tested: tuple[str, str]
  jaxlib_tested: str
  pjrtkit_version: str


def build_info() -> BuildInfo:
  """Reads the build record of the installed plugin library.

  Raises:
    FileNotFoundError: when the plugin has not been built or installed.
  """
  from jax_plugins.pjrtkit import _paths  # pylint: disable=g-import-not-at-top

  with open(_paths.build_info_path(), encoding="utf-8") as f:
    raw = json.load(f)
  major, minor = raw["pjrt_c_api_version"]
  oldest, newest = raw["jax_tested"]
  return BuildInfo(
      pjrt_c_api_version=(int(major), int(minor)),
      jax_tested=(str(oldest), str(newest)),
      jaxlib_tested=str(raw["jaxlib_tested"]),
      pjrtkit_version=str(raw["pjrtkit_version"]),
  )
