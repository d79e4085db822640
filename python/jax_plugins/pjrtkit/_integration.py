"""Makes JAX's operations and host callbacks work on the registered ``pjrtkit`` platform.

``install`` is called by ``initialize()`` right after ``xla_bridge.register_plugin``:

1. FFI registrations for ``pjrtkit`` reach the plugin's PJRT FFI extension (``_ffi``);
2. primitives lower like on jaxlib's ``cpu`` backend (``_lowering``), and jaxlib's LAPACK / sparse
   FFI handlers those rules call are registered for ``pjrtkit``;
3. host callbacks lower through JAX's own cpu rules (``_callback_rules``) to the custom call
   jaxlib's cpu runs; pjrtkit's handler for it is registered and JAX's compile entry point binds
   every executable to its callbacks (``_host_callbacks``). All or nothing: when a JAX internal
   they rely on changed (``_jax_compat.callback_problems``), callbacks stay off, with one warning.
"""

from __future__ import annotations

import logging
from typing import Any

from jax_plugins.pjrtkit import _callback_rules
from jax_plugins.pjrtkit import _ffi
from jax_plugins.pjrtkit import _host_callbacks
from jax_plugins.pjrtkit import _lowering
from jax_plugins.pjrtkit import _pjrt_ffi

logger = logging.getLogger(__name__)


def install(c_api: Any, platform: str) -> bool:
  """Wires FFI, lowering rules and host callbacks for ``platform`` (the plugin behind ``c_api``).

  Returns:
    True when everything was installed; False (with the error logged) when something failed, in
    which case the platform still runs programs that need none of it.
  """
  import jax  # pylint: disable=g-import-not-at-top
  from jax_plugins.pjrtkit import _jax_compat  # pylint: disable=g-import-not-at-top

  if not _jax_compat.is_tested_version(jax.__version__):
    logger.warning("pjrtkit: the cpu-lowering integration reuses JAX internals "
                   "checked on %s; this is jax %s (//tests/jax:jax_internals_test "
                   "tells what changed)", _jax_compat.tested_range_text(), jax.__version__)
  if c_api is None:
    logger.error("pjrtkit: register_plugin returned no PJRT_Api; FFI, LAPACK and host "
                 "callbacks are not available on %s", platform)
    return False
  try:
    extension = _ffi.install(c_api, platform)
    _lowering.register_cpu_lowerings(platform)
    _lowering.register_cpu_ffi_targets(platform)
  except Exception:  # pylint: disable=broad-except  (the plugin must still register)
    logger.exception("pjrtkit: could not install FFI/lowering/host-callback support for %s",
                     platform)
    return False
  return install_callbacks(c_api, platform, extension)


def install_callbacks(c_api: Any, platform: str, extension: _pjrt_ffi.PjrtFfiExtension) -> bool:
  """Installs host callbacks for ``platform``, all or nothing.

  Returns:
    True when installed; False (with one warning or the error logged) when not, in which case
    programs with host callbacks fail to lower on ``platform`` (JAX's own error).
  """
  from jax._src import compiler  # pylint: disable=g-import-not-at-top
  from jax_plugins.pjrtkit import _jax_compat  # pylint: disable=g-import-not-at-top

  problems = _jax_compat.callback_problems()
  if problems:
    logger.warning("pjrtkit: host callbacks are off for platform %r: %s", platform,
                   "; ".join(problems))
    return False
  original = compiler.compile_or_get_cached
  try:
    _callback_rules.callback_rules()  # Fails before anything is installed if a rule moved.
    _host_callbacks.install(c_api, platform, extension)
    _callback_rules.register(platform)
  except Exception:  # pylint: disable=broad-except  (the plugin must still register)
    compiler.compile_or_get_cached = original
    logger.exception("pjrtkit: could not install host callbacks for %s", platform)
    return False
  return True
