"""Sub-byte dtypes to host on pjrtkit: the layouts jaxlib really sends.

``np.asarray`` / ``repr`` of an int4, uint4, int2, uint2 or float4_e2m1fn array (and of the
result of ``lax.bitcast_convert_type`` to uint4) copy it to host through
``PJRT_Buffer_ToHostBuffer`` with a host layout built by XLA's ``ConvertToBufferMemoryLayoutData``,
whose struct_size fields jaxlib 0.11.2 and 0.12.0.1 leave unset. The expected values are jaxlib's
cpu backend's, checked with both releases. Each case runs in a fresh interpreter.
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_ENV = {"JAX_PLATFORMS": "pjrtkit"}

# dtype -> (values, repr) of a 2x3 array of it.
_CASES = {
    "int4": ([[0, 1, 2], [-1, -8, 7]], "Array([[0, 1, 2],\n       [-1, -8, 7]], dtype=int4)"),
    "uint4": ([[0, 1, 2], [15, 8, 7]], "Array([[0, 1, 2],\n       [15, 8, 7]], dtype=uint4)"),
    "int2": ([[0, 1, -2], [-1, 1, 0]], "Array([[0, 1, -2],\n       [-1, 1, 0]], dtype=int2)"),
    "uint2": ([[0, 1, 2], [3, 1, 0]], "Array([[0, 1, 2],\n       [3, 1, 0]], dtype=uint2)"),
    "float4_e2m1fn": ([[0.0, 1.0, 2.0], [-0.5, -2.0, 6.0]],
                      "Array([[0, 1, 2],\n       [-0.5, -2, 6]], dtype=float4_e2m1fn)"),
}


@pytest.mark.parametrize("dtype", sorted(_CASES))
def test_subbyte_array_to_host_exact(dtype):
  values, expected_repr = _CASES[dtype]
  got = run_python(f"""
      import json, numpy as np, jax, jax.numpy as jnp
      x = jnp.array({values!r}, dtype=jnp.{dtype})
      host = np.asarray(x)
      odd = np.asarray(x.reshape(-1)[1:6])          # 5 elements: an odd count of nibbles.
      print(json.dumps({{
          "platform": x.devices().pop().platform,
          "dtype": str(host.dtype), "shape": list(host.shape),
          "values": host.astype(np.float32).tolist(),
          "odd": odd.astype(np.float32).tolist(),
          "repr": repr(x),
          "sum": float(jnp.sum(x.astype(jnp.float32))),
      }}))
  """, env=plugin_env(**_ENV))
  flat = [float(v) for row in values for v in row]
  assert got["platform"] == "pjrtkit"
  assert got["dtype"] == dtype
  assert got["shape"] == [2, 3]
  assert got["values"] == [[float(v) for v in row] for row in values]
  assert got["odd"] == flat[1:6]
  assert got["repr"] == expected_repr
  assert got["sum"] == sum(flat)


def test_bitcast_convert_type_to_uint4_exact():
  got = run_python("""
      import json, numpy as np, jax, jax.numpy as jnp
      from jax import lax
      y = lax.bitcast_convert_type(jnp.array([0x12, 0x34, 0xF0], jnp.uint8), jnp.uint4)
      print(json.dumps({"values": np.asarray(y).tolist(), "shape": list(y.shape),
                        "repr": repr(y)}))
  """, env=plugin_env(**_ENV))
  # Little-endian nibbles: 0x12 -> [2, 1].
  assert got == {
      "values": [[2, 1], [4, 3], [0, 15]],
      "shape": [3, 2],
      "repr": "Array([[2, 1],\n       [4, 3],\n       [0, 15]], dtype=uint4)",
  }


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
