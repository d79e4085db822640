"""Ahead-of-time compilation for a pjrtkit topology: the topology factory pjrtkit registers with
JAX (``register_plugin(make_topology=...)``) and the one thing such a compile cannot hold.

``jax.experimental.topologies.get_topology_desc(name, platform="pjrtkit", **options)`` calls it.
JAX's default factory passes only the caller's ``options`` to the plugin's
``PJRT_TopologyDescription_Create``; pjrtkit's reference device needs the ``xla_cpu_plugin_path``
create option there too, to compile ahead of time for the topology (``PJRT_Compile``) in a
process without a pjrtkit client. This factory adds it (options given by the caller win) and
otherwise does what JAX's default does.

Host callbacks cannot be compiled for a topology: the callback is a Python function of this
process, which a serialized executable cannot carry, and jaxlib's compile-only client takes host
callbacks only as PJRT send/recv capsules (pjrtkit's are FFI calls into Python), so it failed
with a TypeError about ``compile()``'s arguments. ``refuse_compile_only`` turns that into a clear
error at lowering time.
"""

from __future__ import annotations

from typing import Any, Callable

HOST_CALLBACK_AOT_ERROR = (
    "pjrtkit: host callbacks (jax.pure_callback, jax.experimental.io_callback, jax.debug.print, "
    "jax.debug.callback) cannot be compiled ahead of time for a topology "
    "(jax.experimental.topologies): the callback is a Python function of this process, which a "
    "serialized executable cannot carry. Compile the function with jax.jit on pjrtkit devices "
    "instead.")
"""The message of the NotImplementedError ``refuse_compile_only`` raises."""


def refuse_compile_only(ctx: Any) -> None:
  """Raises NotImplementedError when ``ctx`` lowers for a compile-only (topology) backend.

  Args:
    ctx: a lowering rule context.
  """
  from jax._src.lib import _jax  # pylint: disable=g-import-not-at-top

  compile_only = getattr(_jax, "CompileOnlyPyClient", None)
  backend = ctx.module_context.get_backend(optional=True)
  if compile_only is not None and isinstance(backend, compile_only):
    raise NotImplementedError(HOST_CALLBACK_AOT_ERROR)


class TopologyFactory:
  """``make_topology`` for ``xla_bridge.register_plugin``.

  ``register_plugin`` returns the ``PJRT_Api`` capsule only after it has taken the factory, so
  ``initialize()`` sets ``c_api`` right after registering.

  Attributes:
    c_api: the plugin's ``PJRT_Api`` capsule (None until registration finished).
  """

  def __init__(self, default_options: Callable[[], dict[str, Any]]):
    """Makes a factory that adds ``default_options()`` to every topology's create options."""
    self._default_options = default_options
    self.c_api: Any = None

  def __call__(self, topology_name: str = "", **options: Any) -> Any:
    """The plugin's ``PJRT_TopologyDescription_Create`` of ``topology_name`` with ``options``.

    Raises:
      RuntimeError: when called before the plugin was registered.
    """
    if self.c_api is None:
      raise RuntimeError("pjrtkit: the topology factory was called before the plugin was "
                         "registered")
    from jax._src.lib import xla_client  # pylint: disable=g-import-not-at-top

    merged = {**self._default_options(), **options}
    return xla_client.make_c_api_device_topology(self.c_api, topology_name, **merged)
