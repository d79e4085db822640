"""Computes pjrtkit's dependencies from the lock files; everything else is in pyproject.toml.

The supported jax/jaxlib range is written in one place: the jaxlib pin of
``requirements-jax-oldest.lock`` (oldest) and of ``requirements.lock`` (newest). CI tests both.
"""

from __future__ import annotations

import re
from pathlib import Path

from setuptools import find_namespace_packages, find_packages, setup

_ROOT = Path(__file__).resolve().parent


def _pin(lock: str, package: str) -> str:
  """The version ``package`` is pinned to (``package==X``) in the lock file ``lock``."""
  text = (_ROOT / lock).read_text(encoding="utf-8")
  match = re.search(rf"^{re.escape(package)}==(\S+)$", text, re.M)
  if match is None:
    raise ValueError(f"{lock} does not pin {package}")
  return match.group(1)


def jax_range() -> tuple[str, str]:
  """(oldest, newest) supported jax/jaxlib releases."""
  return _pin("requirements-jax-oldest.lock", "jaxlib"), _pin("requirements.lock", "jaxlib")


def dependencies() -> list[str]:
  """pjrtkit's install requirements."""
  oldest, newest = jax_range()
  return [f"jax>={oldest},<={newest}", f"jaxlib>={oldest},<={newest}", "xla-cpu-pjrt==0.0.1",
          "numpy>=2"]


def packages() -> tuple[list[str], dict[str, str]]:
  """(packages, package_dir): python/'s packages, and the top-level kernels/ as pjrtkit.kernels
  without its test support (``testing`` folders); python/pjrtkit/kernels/ only imports kernels/
  in a checkout, so it is left out."""
  found = [p for p in find_namespace_packages(where="python", include=["pjrtkit*", "jax_plugins*"])
           if not p.startswith("pjrtkit.kernels")]
  kernels = ["pjrtkit.kernels"] + [
      f"pjrtkit.kernels.{p}"
      for p in find_packages(where="kernels", exclude=["testing", "*.testing", "*.testing.*"])]
  return found + kernels, {"": "python", "pjrtkit.kernels": "kernels"}


if __name__ == "__main__":
  _packages, _dirs = packages()
  setup(install_requires=dependencies(), packages=_packages, package_dir=_dirs,
        package_data={"jax_plugins.pjrtkit": ["pjrtkit_plugin.so", "build_info.json"],
                      "pjrtkit.kernels": ["tuned/*.json"],
                      "pjrtkit.kernels.native": ["pjrtkit_kernels.so"]})
