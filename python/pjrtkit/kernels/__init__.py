"""``pjrtkit.kernels`` in a checkout: the repository's top-level ``kernels/`` folder.

Wheels carry ``kernels/`` itself as ``pjrtkit/kernels`` (``tools/build_wheel.py``, ``setup.py``),
and this file is left out of them. In a checkout (the development install of
``tools/setup.sh``, Bazel runfiles) ``python/`` is on the path, so ``import pjrtkit.kernels``
finds this file first; it imports ``kernels/__init__.py`` as the package ``pjrtkit.kernels``
with its search path ``kernels/`` (the importlib recipe for importing a source file directly),
so the package and every ``pjrtkit.kernels.*`` module come from ``kernels/``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_SOURCE = Path(__file__).parents[3] / "kernels"
_SPEC = importlib.util.spec_from_file_location(
    __name__, _SOURCE / "__init__.py", submodule_search_locations=[str(_SOURCE)])
_PACKAGE = importlib.util.module_from_spec(_SPEC)
sys.modules[__name__] = _PACKAGE  # What `import pjrtkit.kernels` returns from here on.
_SPEC.loader.exec_module(_PACKAGE)
