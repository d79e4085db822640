"""Bad input through JAX (issue 11): each mistake a user can make from Python against pjrtkit's
device gives a Python exception with a useful message, never a crash, and the client keeps
working afterwards. All cases run in one fresh interpreter, in order, then a final computation."""

from __future__ import annotations

import sys

from tests.testing.plugin_env import plugin_env, run_python

_PROGRAM = """
    import json
    import numpy as np
    import jax, jax.numpy as jnp
    from jax.sharding import SingleDeviceSharding

    out = {}
    def case(name, fn):
      try:
        fn()
        out[name] = "no error"
      except Exception as e:  # noqa: BLE001 (the message is what the test checks)
        out[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"

    def deleted():
      x = jax.device_put(np.ones(4, np.float32))
      x.delete()
      (x + 1).block_until_ready()

    def donated_then_read():
      x = jax.device_put(np.ones(4, np.float32))
      jax.jit(lambda v: v * 2, donate_argnums=0)(x).block_until_ready()
      np.asarray(x)

    devices = jax.devices()
    x0 = jax.device_put(np.ones(4, np.float32), devices[0])
    x1 = jax.device_put(np.ones(4, np.float32), devices[1])
    case("allocation_beyond_memory",
         lambda: jnp.zeros((1 << 46,), jnp.float32).block_until_ready())  # 256 TiB
    case("overflowing_dims", lambda: jnp.zeros((1 << 62, 8), jnp.float32).block_until_ready())
    case("deleted_array", deleted)
    case("donated_then_read", donated_then_read)
    case("object_dtype", lambda: jax.device_put(np.array([object()], dtype=object)))
    case("unregistered_ffi_target", lambda: jax.jit(lambda v: jax.ffi.ffi_call(
        "pjrtkit_no_such_target", jax.ShapeDtypeStruct((4,), jnp.float32))(v))(
            np.ones(4, np.float32)))
    case("unknown_memory_kind", lambda: jax.device_put(
        np.ones(4, np.float32), SingleDeviceSharding(devices[0], memory_kind="hbm_of_mars")))
    case("wrong_argument_count", lambda: jax.jit(lambda a, b: a + b)(np.ones(2)))
    case("arguments_on_two_devices", lambda: jax.jit(lambda a, b: a + b)(x0, x1))
    out["still_works"] = np.asarray(jax.jit(lambda v: v * 3)(np.arange(4, dtype=np.float32))).tolist()
    print(json.dumps(out))
"""

_LAMBDA = "<lambda>.<locals>.<lambda>"
EXPECTED = {
    "allocation_beyond_memory": "JaxRuntimeError: RESOURCE_EXHAUSTED: XLA:CPU "
                                "PJRT_LoadedExecutable_Execute: Out of memory allocating "
                                "281474976710656 bytes.",
    "overflowing_dims": "RuntimeError: Bad StatusOr access: INVALID_ARGUMENT: overflow in static "
                        "extent product: dimensions=[4611686018427387904, 8].",
    "deleted_array": "RuntimeError: Array has been deleted with shape=float32[4].",
    "donated_then_read": "RuntimeError: Array has been deleted with shape=float32[4].",
    "object_dtype": "TypeError: Dtype object is not a valid JAX array type. Only arrays of "
                    "numeric types are supported by JAX.",
    "unregistered_ffi_target": "JaxRuntimeError: NOT_FOUND: XLA:CPU PJRT_Client_Compile: No FFI "
                               "handler registered for pjrtkit_no_such_target on a platform Host "
                               "(canonical host)",
    "unknown_memory_kind": "ValueError: Could not find memory addressable by device pjrtkit_cpu. "
                           "Device pjrtkit_cpu can address the following memory kinds: device, "
                           "pinned_host, unpinned_host. Got memory kind: hbm_of_mars",
    "wrong_argument_count": f"TypeError: {_LAMBDA}() missing 1 required positional argument: 'b'",
    "arguments_on_two_devices": (
        "ValueError: Received incompatible devices for jitted computation. Got argument a of "
        f"{_LAMBDA} with shape float32[4] and with device ids [0] on platform PJRTKIT and "
        f"argument b of {_LAMBDA} with shape float32[4] and with device ids [1] on platform "
        "PJRTKIT"),
    "still_works": [0.0, 3.0, 6.0, 9.0],
}


def test_bad_input_through_jax_raises_and_the_client_keeps_working():
  got = run_python(_PROGRAM, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"), timeout=180)
  assert got == EXPECTED


if __name__ == "__main__":
  import pytest  # pylint: disable=g-import-not-at-top
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
