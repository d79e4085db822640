"""``jax.lax.dce_sink(x, prevent_mlir_dce=True)`` on pjrtkit (public on jax 0.11.2 and 0.12.0.1).

It lowers, on every platform, to a typed FFI custom call ``dce_sink`` with side effects that keeps
the computation of ``x`` alive. jaxlib registers its handler inside its own XLA, which the XLA:CPU
plugin pjrtkit runs on does not have: compiling failed with NOT_FOUND "No FFI handler registered
for dce_sink on a platform Host". The reference device now registers a built-in equivalent (a
no-op, as jaxlib's) at client creation. Each case runs in a fresh interpreter on ``pjrtkit``.
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python


def test_dce_sink_compiles_and_runs_exactly():
  got = run_python("""
      import json, numpy as np, jax, jax.numpy as jnp
      def f(x):
        y = x * 2.0
        jax.lax.dce_sink(y, prevent_mlir_dce=True)
        jax.lax.dce_sink({"a": y + 1, "b": jnp.int32(3)}, prevent_mlir_dce=True)  # a pytree
        return x + 1.0
      x = jnp.arange(4.0)
      compiled = jax.jit(f).lower(x).compile()
      print(json.dumps({
          "platform": x.devices().pop().platform,
          "jit": np.asarray(compiled(x)).tolist(),
          "custom_calls": compiled.as_text().count('custom_call_target="dce_sink"'),
          "vmap": np.asarray(jax.jit(jax.vmap(f))(jnp.ones((2, 3)))).tolist(),
          "grad": np.asarray(jax.grad(lambda v: jnp.sum(f(v) ** 2))(x)).tolist(),
          "eager": np.asarray(f(x)).tolist(),
      }))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  assert got == {
      "platform": "pjrtkit",
      "jit": [1.0, 2.0, 3.0, 4.0],
      "custom_calls": 3,  # y, and the two leaves of the pytree.
      "vmap": [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]],
      "grad": [2.0, 4.0, 6.0, 8.0],
      "eager": [1.0, 2.0, 3.0, 4.0],
  }


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
