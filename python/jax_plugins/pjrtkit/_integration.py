"""Makes JAX's operations and host callbacks work on the registered ``pjrtkit`` platform.

``install`` is called by ``initialize()`` right after ``xla_bridge.register_plugin``:

1. FFI registrations for ``pjrtkit`` reach the plugin's PJRT FFI extension (``_ffi``);
2. primitives lower like on jaxlib's ``cpu`` backend (``_lowering``), and jaxlib's LAPACK / sparse
   FFI handlers those rules call are registered for ``pjrtkit``;
3. host callbacks lower to pjrtkit's own callback custom call, whose handler is registered too
   (``_callback_rules``, ``_host_callbacks``).
"""

from __future__ import annotations

import logging
from typing import Any

from jax_plugins.pjrtkit import _callback_rules
from jax_plugins.pjrtkit import _ffi
from jax_plugins.pjrtkit import _host_callbacks
from jax_plugins.pjrtkit import _lowering

logger = logging.getLogger(__name__)


def install(c_api: Any, platform: str) -> bool:
  """Wires FFI, lowering rules and host callbacks for ``platform`` (the plugin behind ``c_api``).

  Returns:
    True when everything was installed; False (with the error logged) when something failed, in
    which case the platform still runs programs that need none of it.
  """
  from jax import ffi  # pylint: disable=g-import-not-at-top

  import jax  # pylint: disable=g-import-not-at-top
  from jax_plugins.pjrtkit import _jax_compat  # pylint: disable=g-import-not-at-top

  if not _jax_compat.is_tested_version(jax.__version__):
    logger.warning("pjrtkit: the cpu-lowering and host-callback integration reuses JAX internals "
                   "checked on %s; this is jax %s (//tests/jax:jax_internals_test "
                   "tells what changed)", _jax_compat.tested_range_text(), jax.__version__)
  if c_api is None:
    logger.error("pjrtkit: register_plugin returned no PJRT_Api; FFI, LAPACK and host "
                 "callbacks are not available on %s", platform)
    return False
  try:
    _ffi.install(c_api, platform)
    _lowering.register_cpu_lowerings(platform)
    _callback_rules.register(platform)
    _lowering.register_cpu_ffi_targets(platform)
    ffi.register_ffi_target(_host_callbacks.TARGET_NAME, _host_callbacks.handler_capsule(),
                            platform=platform, api_version=1)
  except Exception:  # pylint: disable=broad-except  (the plugin must still register)
    logger.exception("pjrtkit: could not install FFI/lowering/host-callback support for %s",
                     platform)
    return False
  return True
