"""Host-callback programs loaded outside JAX's compile path fail cleanly on pjrtkit.

pjrtkit binds each executable JAX compiles (``compile_or_get_cached``) to its Python callbacks,
and every execution passes the binding as FFI user data. An executable compiled or loaded any
other way (here ``jax._src.compiler.backend_compile_and_load`` called directly) has no binding:
XLA:CPU 0.0.1 then dereferenced a missing execute context inside the callback handler and the
process died (SIGSEGV). The reference device now runs every program with typed FFI custom calls
with an inner context, so the handler's lookup answers "not found" and the execution fails with
pjrtkit's message. Each case runs in a fresh interpreter on ``pjrtkit`` (the ``cpu`` backend is
there for the callbacks' own arrays, as JAX requires).
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_ENV = {"JAX_PLATFORMS": "pjrtkit,cpu"}

_NOT_BOUND = ("NOT_FOUND: XLA:CPU PJRT_LoadedExecutable_Execute: pjrtkit: no host callbacks are "
              "bound to this executable (it was loaded outside jax's compile path, e.g. by "
              "jax.experimental.serialize_executable)")


@pytest.mark.parametrize("kind", ["pure_callback", "debug_callback"])
def test_unbound_callback_program_fails_without_crashing(kind):
  got = run_python(f"""
      import json, numpy as np, jax, jax.numpy as jnp
      from jax._src import compiler, xla_bridge
      from jax._src.lib import xla_client as xc
      seen = []
      def body(x):
        if "{kind}" == "pure_callback":
          return jax.pure_callback(lambda a: np.asarray(a) * 2,
                                   jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        jax.debug.callback(lambda a: seen.append(np.asarray(a).tolist()), x)
        return x + 1
      f = jax.jit(body)
      x = jnp.arange(4.0)
      through_jit = np.asarray(f(x)).tolist()
      lowering = f.lower(x)._lowering
      backend = xla_bridge.get_backend("pjrtkit")
      device = backend.local_devices()[0]
      executable = compiler.backend_compile_and_load(
          backend, lowering.stablehlo(), xc.DeviceList((device,)),
          compiler.get_compile_options(num_replicas=1, num_partitions=1),
          list(lowering.compile_args["host_callbacks"]))
      try:
        results = executable.execute_sharded([jax.device_put(x, device)])
        jax.block_until_ready(results.disassemble_into_single_device_arrays())
        error = None
      except Exception as e:  # JaxRuntimeError
        error = str(e)
      print(json.dumps({{"through_jit": through_jit, "seen": seen, "error": error,
                         "after": np.asarray(f(x)).tolist()}}))
  """, env=plugin_env(**_ENV))
  expected = [0.0, 2.0, 4.0, 6.0] if kind == "pure_callback" else [1.0, 2.0, 3.0, 4.0]
  assert got["through_jit"] == expected
  assert got["error"] == _NOT_BOUND
  # The process lives on, and JAX's own executables still call their callbacks.
  assert got["after"] == expected
  if kind == "debug_callback":
    assert got["seen"] == [[0.0, 1.0, 2.0, 3.0]] * 2


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
