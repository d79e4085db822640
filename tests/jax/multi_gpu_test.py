"""JAX's multi-device features on two devices of one process, with exact values, on any backend.

The same checks run on four backends, chosen with ``MULTI_GPU_TEST_BACKEND``:

* ``pjrtkit_cpu`` (the default; CI): pjrtkit's xla_cpu device with 2 devices;
* ``pjrtkit_gpu``: pjrtkit's xla_gpu device on the first two GPUs (skipped with the reason on a
  machine without 2 NVIDIA GPUs and the CUDA plugin);
* ``cuda``: JAX's own CUDA backend on the same GPUs, the reference (a check failing there too is
  about JAX or the test, not pjrtkit);
* ``cpu``: jaxlib's own CPU backend with 2 devices, the CPU reference (the default run checks
  that the file passes there too).

``tools/gpu/run_multi_gpu.sh`` runs it with ``pjrtkit_gpu`` and ``cuda`` on a machine with 2 GPUs.
Checked: ``pmap`` and ``shard_map`` with ``psum``, ``all_gather``, ``ppermute`` and
``all_to_all``; a ``NamedSharding`` over a 2-device mesh with sharded matmuls (rows, and the
contraction dimension); ``io_callback(ordered=True)`` and ``jax.debug.print`` inside a jit sharded
over both devices (values, and the ordered callbacks' order; JAX refuses an ordered debug.print
over 2 devices) and per shard in a ``shard_map``; donation of a sharded array; transfers between
the two devices. Values are small integers (exact in float32, TF32 and every summation order).
``multi_device_test.py`` covers the same APIs and more collectives on the CPU device's 4 devices;
this file is the one that also runs on GPUs.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

BACKEND = os.environ.get("MULTI_GPU_TEST_BACKEND", "pjrtkit_cpu")
"""The backend under test: pjrtkit_cpu, pjrtkit_gpu, cuda or cpu."""
_PLATFORMS = {"pjrtkit_cpu": "pjrtkit", "pjrtkit_gpu": "pjrtkit", "cuda": "cuda", "cpu": "cpu"}
if BACKEND not in _PLATFORMS:
  raise ValueError(f"MULTI_GPU_TEST_BACKEND must be one of {sorted(_PLATFORMS)}, got {BACKEND!r}")
PLATFORM = _PLATFORMS[BACKEND]
"""The JAX platform under test."""


def _prepare() -> str:
  """Sets the environment for BACKEND before JAX starts; the reason to skip, or ""."""
  from tests.testing.plugin_env import plugin_library, runfiles_root  # pylint: disable=g-import-not-at-top
  sys.path.insert(0, str(runfiles_root() / "python"))  # Bazel's runfiles, a checkout or a kit.
  if PLATFORM == "pjrtkit" and "PJRTKIT_PLUGIN_LIBRARY" not in os.environ:
    os.environ["PJRTKIT_PLUGIN_LIBRARY"] = str(plugin_library())  # Runfiles or bazel-bin.
  if BACKEND in ("pjrtkit_gpu", "cuda"):
    from jax_plugins.pjrtkit import _device  # pylint: disable=g-import-not-at-top
    if not _device.nvidia_gpu_visible():
      return "needs 2 GPUs, this machine has none (no NVIDIA GPU is visible)"
    if BACKEND == "pjrtkit_gpu" and _device.cuda_plugin_path() is None:
      return "OpenXLA's CUDA PJRT plugin is not installed (pip install jax-cuda13-pjrt)"
    os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.4")
  if BACKEND == "pjrtkit_gpu":
    os.environ["PJRTKIT_DEVICE"] = "xla_gpu"
  # The cpu backend is where JAX's host callbacks put their arguments, on every platform.
  os.environ["JAX_PLATFORMS"] = "cpu" if PLATFORM == "cpu" else f"{PLATFORM},cpu"
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  return ""


_WHY_NOT = _prepare()
if _WHY_NOT:
  pytest.skip(_WHY_NOT, allow_module_level=True)

import jax  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
import jax.numpy as jnp  # noqa: E402  pylint: disable=g-import-not-at-top,wrong-import-position
from jax.experimental import io_callback  # noqa: E402  pylint: disable=g-import-not-at-top
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402  pylint: disable=g-import-not-at-top

_ON_CPU = BACKEND in ("pjrtkit_cpu", "cpu")
if BACKEND == "pjrtkit_cpu":
  jax.config.update("jax_pjrt_client_create_options", {"device": "xla_cpu", "device_count": 2})
if BACKEND == "cpu":
  jax.config.update("jax_num_cpu_devices", 2)

_N = len(jax.devices(PLATFORM))
if not _ON_CPU and _N < 2:
  pytest.skip(f"needs 2 GPUs, this machine has {_N}", allow_module_level=True)

DEVICES = jax.devices(PLATFORM)[:2]
"""The two devices under test."""
MESH = Mesh(np.array(DEVICES), ("i",))
ROWS = NamedSharding(MESH, P("i"))


def _values(x: jax.Array) -> list:
  return np.asarray(x).tolist()


def _shards(x: jax.Array) -> list:
  """[device position in DEVICES, start index of axis 0, values] of each shard, in device order."""
  return sorted([DEVICES.index(s.device), s.index[0].start or 0, np.asarray(s.data).tolist()]
                for s in x.addressable_shards)


def test_the_devices_under_test():
  assert len(DEVICES) == 2 and DEVICES[0] != DEVICES[1]
  expected = {"pjrtkit_cpu": "pjrtkit", "pjrtkit_gpu": "pjrtkit", "cuda": "gpu", "cpu": "cpu"}
  assert [d.platform for d in DEVICES] == [expected[BACKEND]] * 2
  if _ON_CPU:
    assert _N == 2
    assert DEVICES[0].device_kind == ("pjrtkit_cpu" if BACKEND == "pjrtkit_cpu" else "cpu")
  else:
    assert all(d.device_kind.startswith("NVIDIA") for d in DEVICES), DEVICES


def test_pmap_collectives_exact_values():
  pmap = lambda f: jax.pmap(f, axis_name="i", devices=DEVICES)
  x = np.array([1.0, 2.0], np.float32)
  m = np.arange(4, dtype=np.float32).reshape(2, 2)  # Device d holds row d.
  assert _values(pmap(lambda a: jax.lax.psum(a, "i"))(x)) == [3.0, 3.0]
  assert _values(pmap(lambda a: a + jax.lax.psum(a, "i"))(x)) == [4.0, 5.0]
  assert _values(pmap(lambda a: jax.lax.all_gather(a, "i"))(x)) == [[1.0, 2.0], [1.0, 2.0]]
  assert _values(pmap(lambda a: jax.lax.ppermute(a, "i", [(0, 1), (1, 0)]))(x)) == [2.0, 1.0]
  assert _values(pmap(lambda a: a * 0 + jax.lax.axis_index("i"))(x)) == [0.0, 1.0]
  # all_to_all over axis 0 of a 2x2 split one row per device is a transpose.
  assert _values(pmap(lambda a: jax.lax.all_to_all(a, "i", 0, 0))(m)) == [[0.0, 2.0], [1.0, 3.0]]
  out = pmap(lambda a: a * 10)(x)
  assert [DEVICES.index(s.device) for s in out.addressable_shards] == [0, 1]


def test_shard_map_collectives_exact_values():
  def smap(f):
    return jax.jit(jax.shard_map(f, mesh=MESH, in_specs=P("i"), out_specs=P("i")))

  x = jax.device_put(np.arange(8, dtype=np.float32), ROWS)  # [0..3] on device 0, [4..7] on 1.
  assert _values(smap(lambda a: jax.lax.psum(a, "i"))(x)) == [4.0, 6.0, 8.0, 10.0] * 2
  assert _values(smap(lambda a: jax.lax.all_gather(a, "i", tiled=True))(x)) == \
      [float(v) for v in range(8)] * 2
  assert _values(smap(lambda a: jax.lax.ppermute(a, "i", [(0, 1), (1, 0)]))(x)) == \
      [4.0, 5.0, 6.0, 7.0, 0.0, 1.0, 2.0, 3.0]
  # Device d receives block d of both devices' 4-element slices.
  assert _values(smap(lambda a: jax.lax.all_to_all(a, "i", 0, 0, tiled=True))(x)) == \
      [0.0, 1.0, 4.0, 5.0, 2.0, 3.0, 6.0, 7.0]
  assert _values(smap(lambda a: jax.lax.psum_scatter(a, "i", tiled=True))(x)) == \
      [4.0, 6.0, 8.0, 10.0]
  assert _values(smap(lambda a: a * 0 + jax.lax.axis_index("i"))(x)) == [0.0] * 4 + [1.0] * 4


def test_named_sharding_matmuls_over_the_two_devices():
  a = (np.arange(48) % 7).reshape(8, 6).astype(np.float32)
  b = (np.arange(24) % 5).reshape(6, 4).astype(np.float32)
  want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32)
  dot = lambda p, q: jnp.dot(p, q, precision=jax.lax.Precision.HIGHEST)
  replicated = NamedSharding(MESH, P())
  # Rows of a on each device, b on both: each device computes its rows.
  by_rows = jax.jit(dot, out_shardings=ROWS)(jax.device_put(a, ROWS),
                                             jax.device_put(b, replicated))
  assert by_rows.sharding.spec == P("i")
  assert _shards(by_rows) == [[0, 0, want[:4].tolist()], [1, 4, want[4:].tolist()]]
  # The contraction dimension split over the devices: partial products, then an all-reduce.
  by_k = jax.jit(dot, out_shardings=replicated)(
      jax.device_put(a, NamedSharding(MESH, P(None, "i"))),
      jax.device_put(b, NamedSharding(MESH, P("i", None))))
  assert by_k.sharding.is_fully_replicated
  assert _shards(by_k) == [[0, 0, want.tolist()], [1, 0, want.tolist()]]
  # The same contraction written with shard_map and psum.
  psum_k = jax.jit(jax.shard_map(lambda p, q: jax.lax.psum(dot(p, q), "i"), mesh=MESH,
                                 in_specs=(P(None, "i"), P("i", None)), out_specs=P()))
  assert _values(psum_k(a, b)) == want.tolist()


def test_ordered_io_callback_and_debug_print_in_a_jit_sharded_over_both(capfd):
  seen = []

  def record(tag):
    def callback(v):
      seen.append((tag, int(v)))
      return np.asarray(v, np.int32)
    return callback

  scalar = jax.ShapeDtypeStruct((), jnp.int32)

  @jax.jit
  def f(v):
    s = io_callback(record("sum"), scalar, v.sum(), ordered=True)
    jax.debug.print("x = {}", v)
    t = io_callback(record("twice"), scalar, s * 2, ordered=True)
    jax.debug.print("s={s} t={t}", s=s, t=t)
    return v * 2 + t

  x = jax.device_put(np.arange(8, dtype=np.int32), ROWS)
  capfd.readouterr()
  first = f(x)
  second = f(x + 1)
  assert _values(first) == [2 * i + 56 for i in range(8)]
  assert _values(second) == [2 * (i + 1) + 72 for i in range(8)]
  assert {DEVICES.index(s.device) for s in first.addressable_shards} == {0, 1}
  jax.effects_barrier()
  # Automatic sharding: one call per callback with the whole value; the ordered ones in program
  # order across both calls.
  assert seen == [("sum", 28), ("twice", 56), ("sum", 36), ("twice", 72)]
  # Unordered prints: each once with the whole value (their order is not defined).
  lines = sorted(l for l in capfd.readouterr().out.splitlines() if l)
  assert lines == ["s=28 t=56", "s=36 t=72", "x = [0 1 2 3 4 5 6 7]", "x = [1 2 3 4 5 6 7 8]"]


def test_ordered_debug_print_over_two_devices_is_refused_by_jax():
  # JAX's own rule, on every backend: an ordered debug effect needs a one-device program.
  f = jax.jit(lambda v: (jax.debug.print("x = {}", v, ordered=True), v + 1)[1])
  with pytest.raises(ValueError, match="The following ordered effects are not supported for "
                     "more than 1 device"):
    f(jax.device_put(np.arange(8, dtype=np.int32), ROWS))


def test_debug_print_and_io_callback_per_shard_in_a_shard_map(capfd):
  spec = lambda v: jax.ShapeDtypeStruct(v.shape, v.dtype)

  def per_shard(b):
    jax.debug.print("shard {}", b)
    return io_callback(lambda a: np.asarray(a) * 3, spec(b), b)

  f = jax.jit(jax.shard_map(per_shard, mesh=MESH, in_specs=P("i"), out_specs=P("i")))
  x = jax.device_put(np.arange(8, dtype=np.int32), ROWS)
  capfd.readouterr()
  out = f(x)
  assert _values(out) == [3 * i for i in range(8)]
  jax.effects_barrier()
  # One call per device (their order between devices is not defined).
  lines = sorted(l for l in capfd.readouterr().out.splitlines() if l)
  assert lines == ["shard [0 1 2 3]", "shard [4 5 6 7]"]


def test_donation_of_a_sharded_array():
  # Made on the devices (a device_put of numpy data may alias host memory, which is then copied
  # rather than donated).
  xs = jax.jit(lambda: jnp.arange(8, dtype=jnp.float32), out_shardings=ROWS)()
  before = _shards(xs)
  pointers = sorted(s.data.unsafe_buffer_pointer() for s in xs.addressable_shards)
  ys = jax.jit(lambda a: a * 3 + 1, donate_argnums=0, out_shardings=ROWS)(xs)
  assert xs.is_deleted()
  assert before == [[0, 0, [0.0, 1.0, 2.0, 3.0]], [1, 4, [4.0, 5.0, 6.0, 7.0]]]
  assert _shards(ys) == [[0, 0, [1.0, 4.0, 7.0, 10.0]], [1, 4, [13.0, 16.0, 19.0, 22.0]]]
  # The output lives in the donated memory, on each device.
  assert sorted(s.data.unsafe_buffer_pointer() for s in ys.addressable_shards) == pointers
  with pytest.raises(RuntimeError, match="deleted"):
    np.asarray(xs)
  pm = jax.pmap(lambda a: a, devices=DEVICES)(np.arange(4, dtype=np.float32).reshape(2, 2))
  pm2 = jax.pmap(lambda a: a * 2, donate_argnums=0, devices=DEVICES)(pm)
  assert pm.is_deleted()
  assert _values(pm2) == [[0.0, 2.0], [4.0, 6.0]]


def test_transfers_between_the_two_devices():
  y = jax.device_put(np.arange(5, dtype=np.int32), DEVICES[0])
  hops = []
  for d in (1, 0, 1):
    y = jax.device_put(y, DEVICES[d])
    hops.append([DEVICES.index(next(iter(y.devices()))), _values(y)])
  assert hops == [[1, [0, 1, 2, 3, 4]], [0, [0, 1, 2, 3, 4]], [1, [0, 1, 2, 3, 4]]]
  z = jax.jit(lambda a: a * 5)(y)
  assert z.devices() == {DEVICES[1]} and _values(z) == [0, 5, 10, 15, 20]


if BACKEND == "pjrtkit_cpu":  # Only here: on the GPUs every test of the file runs, none skips.

  def test_the_same_checks_pass_on_jaxlibs_own_cpu_backend():
    env = dict(os.environ, MULTI_GPU_TEST_BACKEND="cpu")
    for name in ("JAX_PLATFORMS", "PJRTKIT_PLUGIN_LIBRARY", "PYTEST_ADDOPTS"):
      env.pop(name, None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           __file__], env=env, capture_output=True, text=True, timeout=240,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    summary = proc.stdout.strip().splitlines()[-1]
    assert summary.startswith("9 passed in "), summary


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v", "-p", "no:cacheprovider"] + sys.argv[1:]))
