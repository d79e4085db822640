"""Captures the programs JAX sends to PJRT_Client_Compile (xla_plugin/stablehlo/testdata).

Run with a capturing shim plugin (a PJRT plugin that forwards to XLA:CPU and writes every compiled
program to SHIM_DUMP_DIR as <SHIM_NAME>_<n>.mlir):
  SHIM_LIBRARY=<libshim.so> SHIM_INNER=<xla_cpu_pjrt.so> SHIM_DUMP_DIR=<dir> \
  SHIM_STABLEHLO_VERSION=1.19.0 .venv/bin/python capture.py
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import xla_bridge

xla_bridge.register_plugin("shim", library_path=os.environ["SHIM_LIBRARY"])
jax.config.update("jax_platforms", "shim")

x = np.arange(12, dtype=np.float32).reshape(3, 4)
big = np.arange(10000, dtype=np.float32)
programs = {
    "matmul_tanh_reduce": (lambda a, b: jnp.tanh(a @ b).sum(0),
                           (np.ones((4, 8), np.float32), np.ones((8, 3), np.float32))),
    "fori_loop": (lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0 + i, x), (x,)),
    "argsort_take": (lambda x: jnp.take(x, jnp.argsort(x[0]), axis=1), (x,)),
    "random_normal": (lambda x: x + jax.random.normal(jax.random.key(0), x.shape), (x,)),
    "conv": (lambda lhs, rhs: jax.lax.conv_general_dilated(
        lhs, rhs, window_strides=(1, 1), padding="SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC")),
             (np.ones((1, 5, 5, 2), np.float32), np.ones((3, 3, 2, 4), np.float32))),
    "scatter_add": (lambda x, i: x.at[i].add(1.0), (np.zeros(6, np.float32), np.int32(2))),
    "cond": (lambda p, x: jax.lax.cond(p, lambda v: v + 1.0, lambda v: v * 2.0, x),
             (np.bool_(True), np.ones(3, np.float32))),
    "large_constant": (lambda x: x + big, (np.ones(10000, np.float32),)),
    # JAX writes chlo ops as stablehlo.composite with a decomposition function at 1.19.0. XLA:CPU's
    # plugin (StableHLO 1.13.3) then fails to compile it; the shim has saved the bytes by then.
    "top_k": (lambda x: jax.lax.top_k(x, 3)[0], (np.arange(8, dtype=np.float32),)),
}
for name, (f, args) in programs.items():
    os.environ["SHIM_NAME"] = name
    try:
        print(name, np.asarray(jax.jit(f)(*args)).ravel()[:4])
    except Exception as error:  # Compiled by XLA:CPU after the capture.
        print(name, "not run:", str(error).splitlines()[0])
