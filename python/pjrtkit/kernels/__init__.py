"""Source-tree mount of the repository's top-level ``kernels/`` folder as ``pjrtkit.kernels``.

Installed wheels carry ``kernels/`` itself as ``pjrtkit/kernels`` (``tools/build_wheel.py``,
``setup.py``); in a checkout (development install, Bazel runfiles) this module makes the package's
search path ``<repo>/kernels`` and runs that folder's ``__init__.py`` as this package's body, so
every ``pjrtkit.kernels.*`` module comes from ``kernels/``.
"""

from pathlib import Path as _Path

_SOURCE = _Path(__file__).parents[3] / "kernels"
__path__ = [str(_SOURCE)]  # noqa: F811  pylint: disable=redefined-builtin
__file__ = str(_SOURCE / "__init__.py")  # noqa: F811
with open(__file__, encoding="utf-8") as _f:
  exec(compile(_f.read(), __file__, "exec"))  # pylint: disable=exec-used
del _f, _Path
