"""The CUDA plugin's extensions, forwarded by pjrtkit's xla_gpu device, as JAX uses them.

Skipped, with the reason, without an NVIDIA GPU and ``jax-cuda13-pjrt`` (CI has none);
``tools/gpu/run_gpu_suite.sh`` runs it on a GPU machine, on pjrtkit and (``GPU_TEST_PLATFORM=cuda``)
on JAX's own CUDA backend as the reference.

- Custom_Partitioner: a ``custom_partitioning`` function whose ``partition`` callback runs inside
  XLA:GPU's SPMD partitioner (JAX registers it with the plugin before any client exists). JAX
  inlines the function on a one-device mesh, so this needs two GPUs (skipped on one).
- Profiler: ``jax.profiler.trace`` collects the GPU's activity through the plugin's profiler.
- The plugin's attributes: JAX serializes programs for the CUDA plugin's StableHLO version, so a
  program using ``vhlo.composite_v2`` (from ``jax.lax.composite``) compiles.
"""

from __future__ import annotations

import glob
import gzip
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

from jax_plugins.pjrtkit import _device  # noqa: E402  pylint: disable=g-import-not-at-top

_WHY_NOT = ("no NVIDIA GPU is visible" if not _device.nvidia_gpu_visible() else
            "OpenXLA's CUDA PJRT plugin is not installed (pip install jax-cuda13-pjrt)"
            if _device.cuda_plugin_path() is None else "")
pytestmark = pytest.mark.skipif(bool(_WHY_NOT),
                                reason=f"the xla_gpu device needs a GPU machine: {_WHY_NOT}")

PLATFORM = os.environ.get("GPU_TEST_PLATFORM", "pjrtkit")
"""The platform under test: pjrtkit, or cuda for the reference run."""

if not _WHY_NOT:
  os.environ.setdefault("JAX_PLATFORMS", f"{PLATFORM},cpu")
  os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.5")
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  from jax.experimental.custom_partitioning import custom_partitioning  # pylint: disable=g-import-not-at-top
  from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # pylint: disable=g-import-not-at-top


def test_a_custom_partitioning_functions_partition_callback_runs():
  if len(jax.devices(PLATFORM)) < 2:
    pytest.skip("JAX inlines a custom_partitioning function on a one-device mesh: the partition "
                "callback runs with two GPUs or more")
  calls = []

  @custom_partitioning
  def double(x):
    return x * 2

  def partition(mesh, arg_shapes, result_shape):
    calls.append("partition")
    sharding = arg_shapes[0].sharding
    return mesh, lambda x: x * 2, sharding, (sharding,)

  def infer(mesh, arg_shapes, result_shape):
    calls.append("infer")
    return arg_shapes[0].sharding

  double.def_partition(partition=partition, infer_sharding_from_operands=infer,
                       sharding_rule="i -> i")
  mesh = Mesh(np.array(jax.devices(PLATFORM)[:2]), ("x",))
  sharding = NamedSharding(mesh, P("x"))
  x = jax.device_put(jnp.arange(8, dtype=jnp.float32), sharding)
  y = jax.jit(double, in_shardings=sharding, out_shardings=sharding)(x)
  np.testing.assert_array_equal(np.asarray(y), np.arange(8, dtype=np.float32) * 2)
  assert "partition" in calls, f"callbacks run: {calls}"


def test_the_profiler_records_the_gpus_activity(tmp_path):
  x = jax.device_put(jnp.ones((512, 512), jnp.float32), jax.devices(PLATFORM)[0])
  f = jax.jit(lambda a: a @ a)
  f(x).block_until_ready()
  with jax.profiler.trace(str(tmp_path)):
    f(x).block_until_ready()
  traces = glob.glob(str(tmp_path / "**" / "*.xplane.pb"), recursive=True)
  assert traces, f"no trace written under {tmp_path}"
  data = open(traces[0], "rb").read()
  assert b"/device:GPU:0" in data, "the trace has no GPU plane (the plugin's profiler)"


def test_a_composite_compiles_for_the_plugins_stablehlo_version():
  @jax.jit
  def f(x):
    return jax.lax.composite(lambda y: y + 1, name="pjrtkit.add_one")(x)

  out = f(jnp.arange(4, dtype=jnp.float32))
  np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0, 4.0])


def test_the_plugin_reports_the_gpu_devices_attributes():
  if PLATFORM != "pjrtkit":
    pytest.skip("checks pjrtkit itself")
  from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top
  backend = xla_bridge.get_backend(PLATFORM)
  assert backend.platform_version.startswith("pjrtkit ")
  assert "xla_gpu" in backend.platform_version


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v", "-rs"] + sys.argv[1:]))
