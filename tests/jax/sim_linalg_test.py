"""Linear algebra on pjrtkit's sim device: ``jnp.linalg`` / ``jax.scipy.linalg`` lower as on
jaxlib's cpu, to LAPACK's typed FFI custom calls (column-major operands), which the device runs
with jaxlib's LAPACK handlers on its own memory. Values against jaxlib's cpu backend in the same
test, float32 and float64 (x64), batched, and through gradients.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.testing.plugin_env import plugin_env, run_python

_PROGRAMS = """
import json, os
import jax
jax.config.update("jax_enable_x64", os.environ["X64"] == "1")
import jax.numpy as jnp, numpy as np
dtype = np.float64 if os.environ["X64"] == "1" else np.float32
rng = np.random.default_rng(0)
a = rng.standard_normal((5, 5)).astype(dtype)
spd = (a @ a.T + 5 * np.eye(5)).astype(dtype)
b = rng.standard_normal((5, 3)).astype(dtype)
c = (rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4))).astype(
    np.complex128 if dtype == np.float64 else np.complex64)
cases = {
  "solve": (jnp.linalg.solve, a, b),
  "inv": (jnp.linalg.inv, a),
  "det": (jnp.linalg.det, a),
  "slogdet": (lambda x: jnp.linalg.slogdet(x)[1], a),
  "cholesky": (jnp.linalg.cholesky, spd),
  "qr_r": (lambda x: jnp.abs(jnp.linalg.qr(x)[1]), a),
  "eigh_values": (lambda x: jnp.linalg.eigh(x)[0], spd),
  "svd_values": (lambda x: jnp.linalg.svd(x, compute_uv=False), a),
  "eig_abs": (lambda x: jnp.sort(jnp.abs(jnp.linalg.eigvals(x))), a),
  "lu_u": (lambda x: jax.scipy.linalg.lu(x)[2], a),
  "solve_triangular": (lambda x, y: jax.scipy.linalg.solve_triangular(x, y, lower=True),
                       np.tril(spd), b),
  "cho_solve": (lambda x, y: jax.scipy.linalg.cho_solve((jnp.linalg.cholesky(x), True), y),
                spd, b),
  "batched_complex_inv": (jnp.linalg.inv, c),
  "pinv": (jnp.linalg.pinv, a[:, :3]),
  "grad_logdet": (jax.grad(lambda x: jnp.linalg.slogdet(x)[1]), spd),
  "grad_eigh": (jax.grad(lambda x: jnp.linalg.eigh(x)[0].sum()), spd),
  # Empty matrices: LAPACK refuses n = 0 (it aborts the process), so the call must not be made.
  "eig_0x0": (lambda x: jnp.linalg.eig(x)[1], np.zeros((0, 0), dtype)),
  "solve_0x0": (jnp.linalg.solve, np.zeros((0, 0), dtype), np.zeros((0, 2), dtype)),
  "eigh_batch_of_0x0": (lambda x: jnp.linalg.eigh(x)[0], np.zeros((3, 0, 0), dtype)),
}
out = {"platform": jax.devices()[0].platform}
for name, (f, *args) in cases.items():
  value = np.asarray(jax.jit(f)(*args))
  out[name] = [value.real.ravel().tolist(), value.imag.ravel().tolist(),
               str(value.dtype) + str(value.shape)]
print(json.dumps(out))
"""


@pytest.mark.parametrize("x64", ["0", "1"])
def test_linalg_matches_jaxlib_cpu(x64):
  sim = run_python(_PROGRAMS, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu", PJRTKIT_DEVICE="sim",
                                             X64=x64))
  cpu = run_python(_PROGRAMS, env=plugin_env(JAX_PLATFORMS="cpu", X64=x64))
  assert (sim.pop("platform"), cpu.pop("platform")) == ("pjrtkit", "cpu")
  assert sorted(sim) == sorted(cpu)
  # The same LAPACK routines on the same bytes; the ops around them (transposes, symmetrizing,
  # products) are the sim's own: a few ulps.
  rtol = 1e-5 if x64 == "0" else 1e-12
  for name in cpu:
    (sim_re, sim_im, sim_dtype), (cpu_re, cpu_im, cpu_dtype) = sim[name], cpu[name]
    assert sim_dtype == cpu_dtype, name
    np.testing.assert_allclose(sim_re, cpu_re, rtol=rtol, atol=rtol, err_msg=name)
    np.testing.assert_allclose(sim_im, cpu_im, rtol=rtol, atol=rtol, err_msg=name)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
