"""JAX's features beyond jit on pjrtkit's xla_gpu device: host callbacks in every control-flow
form, jax.export for ``cuda``, DLPack with PyTorch and CuPy, explicit backends, transfers to
and from numpy, and ahead-of-time compilation for a topology.

Skipped, with the reason, without an NVIDIA GPU and ``jax-cuda13-pjrt`` (CI has none);
``tools/gpu/run_gpu_suite.sh`` runs it with ``gpu_device_test.py`` (whose module docstring says
how the process is set up), on pjrtkit and, for reference, on JAX's CUDA backend
(``GPU_TEST_PLATFORM=cuda``).
"""

from __future__ import annotations

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


def gpu() -> "jax.Device":
  return jax.devices(PLATFORM)[0]


pjrtkit_only = pytest.mark.skipif(PLATFORM != "pjrtkit", reason="checks pjrtkit itself")


def test_callbacks_in_every_control_flow_form():
  from jax.experimental import io_callback  # pylint: disable=g-import-not-at-top

  lax, f32 = jax.lax, jax.ShapeDtypeStruct((), jnp.float32)
  seen = []
  pure = lambda v: jax.pure_callback(lambda a: np.float32(a + 1), f32, v)
  io = lambda v: io_callback(lambda a: np.float32(a * 2), f32, v, ordered=True)
  show = lambda v: (jax.debug.callback(lambda a: seen.append(float(a)), v), v)[1]
  forms = {
      "cond": (lambda v: lax.cond(v > 0, pure, lambda a: a, v), 4.0),
      "switch": (lambda v: lax.switch(1, [pure, io, show], v), 6.0),
      "while_body": (lambda v: lax.while_loop(lambda a: a < 10, pure, v), 10.0),
      "while_cond": (lambda v: lax.while_loop(lambda a: pure(a) < 10, lambda a: a + 2, v), 9.0),
      "scan": (lambda v: lax.scan(lambda c, _: (io(c), None), v, None, length=3)[0], 24.0),
      "fori_loop": (lambda v: lax.fori_loop(0, 3, lambda i, a: show(a) + 1, v), 6.0),
      "cond_in_while": (lambda v: lax.while_loop(
          lambda a: a < 10, lambda a: lax.cond(a > 4, pure, io, a), v), 10.0),
  }
  x = jax.device_put(np.float32(3), gpu())
  got = {name: float(jax.jit(f)(x)) for name, (f, _) in forms.items()}
  jax.effects_barrier()
  assert got == {name: want for name, (_, want) in forms.items()}
  assert seen == [3.0, 4.0, 5.0]


def test_buffer_callback_gets_device_buffers_and_the_stream():
  # On the GPU the function gets device pointers (__cuda_array_interface__) and the call's stream;
  # it copies on that stream here with the CUDA runtime (a user would use CuPy or a kernel).
  from jax.experimental import buffer_callback  # pylint: disable=g-import-not-at-top
  from jax_plugins.pjrtkit import _cuda_runtime  # pylint: disable=g-import-not-at-top

  cuda = _cuda_runtime.load()
  seen = {}

  def triple(ctx, out, arg):
    stream = ctx.stream
    seen["stream_is_int"] = isinstance(stream, int)
    seen["stage"] = str(ctx.stage)
    src, dst = arg.__cuda_array_interface__, out.__cuda_array_interface__
    seen["interfaces"] = [src["shape"], src["typestr"], src["data"][1], dst["data"][1]]
    host = np.empty(src["shape"], np.float32)
    cuda.copy_to_host(host.ctypes.data, src["data"][0], host.nbytes, stream)
    cuda.synchronize(stream)
    host *= 3
    cuda.copy_to_device(dst["data"][0], host.ctypes.data, host.nbytes, stream)
    cuda.synchronize(stream)

  data = np.arange(6, dtype=np.float32).reshape(2, 3)
  f = jax.jit(buffer_callback.buffer_callback(triple, jax.ShapeDtypeStruct.like(data)))
  got = f(jax.device_put(data, gpu()))
  assert np.asarray(got).tolist() == (data * 3).tolist()
  assert seen == {"stream_is_int": True, "stage": "ExecutionStage.EXECUTE",
                  "interfaces": [(2, 3), "<f4", True, False]}


def test_exports_are_for_cuda_and_run_and_exports_for_cpu_are_refused():
  from jax import export  # pylint: disable=g-import-not-at-top

  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  f = jax.jit(lambda v: jnp.sin(v) * 2 + jnp.linalg.cholesky(v @ v.T + 3 * jnp.eye(2)).sum())
  assert export.default_export_platform() == "cuda"
  exp = export.deserialize(export.export(f)(x).serialize())
  assert exp.platforms == ("cuda",)
  on_gpu = jax.device_put(x, gpu())
  np.testing.assert_array_equal(np.asarray(exp.call(on_gpu)), np.asarray(f(on_gpu)))
  with pytest.raises(ValueError, match=r"was exported for platforms '\('cpu',\)' but it is used"):
    export.export(f, platforms=["cpu"])(x).call(on_gpu)


def test_dlpack_both_ways_with_torch_and_cupy_zero_copy():
  torch = pytest.importorskip("torch")
  cupy = pytest.importorskip("cupy")
  values = np.arange(12, dtype=np.float32).reshape(3, 4)
  x = jax.device_put(values, gpu())
  t = torch.from_dlpack(x)
  assert (t.device.type, t.data_ptr()) == ("cuda", x.unsafe_buffer_pointer())
  np.testing.assert_array_equal(t.cpu().numpy(), values)
  c = cupy.from_dlpack(x)
  assert c.data.ptr == x.unsafe_buffer_pointer()
  np.testing.assert_array_equal(cupy.asnumpy(c), values)
  half = torch.from_dlpack(jax.device_put(jnp.arange(4, dtype=jnp.bfloat16), gpu()))
  assert (half.dtype, half.float().cpu().tolist()) == (torch.bfloat16, [0.0, 1.0, 2.0, 3.0])
  # Back: views of the producers' memory, alive after the producer let go.
  src = torch.arange(10, dtype=torch.int32, device="cuda") * 3
  y = jnp.from_dlpack(src)
  assert y.devices() == {gpu()} and y.unsafe_buffer_pointer() == src.data_ptr()
  cs = cupy.arange(6, dtype=cupy.float16).reshape(2, 3)
  z = jnp.from_dlpack(cs)
  assert z.devices() == {gpu()} and z.unsafe_buffer_pointer() == cs.data.ptr
  del src, cs
  torch.cuda.synchronize()
  np.testing.assert_array_equal(np.asarray(y), np.arange(10, dtype=np.int32) * 3)
  np.testing.assert_array_equal(np.asarray(z), np.arange(6, dtype=np.float16).reshape(2, 3))
  np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a + 1)(y)), np.arange(10) * 3 + 1)


def test_dlpack_zero_size_and_float8_with_torch():
  """A zero-size CUDA tensor (null data pointer) becomes an empty array on the GPU and back;
  float8 arrays go to PyTorch with DLPack 1.1's codes and come back bit-exact."""
  torch = pytest.importorskip("torch")
  empty = jnp.from_dlpack(torch.zeros((0, 4), dtype=torch.float32, device="cuda"))
  assert (empty.shape, empty.dtype, empty.devices()) == ((0, 4), jnp.float32, {gpu()})
  assert np.asarray(jax.jit(lambda a: a * 2)(empty)).shape == (0, 4)
  out = torch.from_dlpack(jax.device_put(np.zeros((3, 0), np.int8), gpu()))
  assert (tuple(out.shape), out.dtype, out.device.type) == ((3, 0), torch.int8, "cuda")
  values = np.arange(8, dtype=np.float32) / 4 - 1
  for name in ("float8_e4m3fn", "float8_e5m2"):
    if not hasattr(torch, name):
      continue
    x = jax.device_put(values.astype(getattr(jnp, name)), gpu())
    t = torch.from_dlpack(x)
    assert t.dtype == getattr(torch, name) and t.data_ptr() == x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(t.float().cpu().numpy(), np.asarray(x).astype(np.float32))
    back = jnp.from_dlpack(t.clone())
    assert back.dtype == x.dtype and back.devices() == {gpu()}
    np.testing.assert_array_equal(np.asarray(back).view(np.uint8), np.asarray(x).view(np.uint8))


def test_cuda_array_interface_with_cupy():
  """CuPy takes a GPU array through ``__cuda_array_interface__`` zero-copy; a CuPy array comes
  into JAX through it (``jnp.asarray``) on the default backend's GPU."""
  cupy = pytest.importorskip("cupy")
  x = jax.device_put(np.arange(6, dtype=np.float32).reshape(2, 3), gpu())
  cai = x.__cuda_array_interface__
  assert (cai["shape"], cai["typestr"], cai["data"][0]) == ((2, 3), "<f4",
                                                             x.unsafe_buffer_pointer())
  c = cupy.asarray(x)
  assert c.data.ptr == x.unsafe_buffer_pointer()
  np.testing.assert_array_equal(cupy.asnumpy(c), np.asarray(x))
  src = cupy.arange(5, dtype=cupy.int32) * 7
  with jax.default_device(gpu()):
    y = jnp.asarray(src)
  assert y.devices() == {gpu()}
  np.testing.assert_array_equal(np.asarray(y), np.arange(5) * 7)


@pjrtkit_only
def test_explicit_backends_gpu_and_pjrtkit_name_the_gpu_device():
  import warnings  # pylint: disable=g-import-not-at-top

  with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # jit's backend= is deprecated
    on = {name: jax.jit(lambda v: v + 1, backend=name) for name in ("gpu", "pjrtkit", "cpu")}
  x = np.arange(6, dtype=np.float32)
  got = {name: (f(x).devices().pop().platform, np.asarray(f(x)).tolist()) for name, f in on.items()}
  assert got == {"gpu": ("pjrtkit", (x + 1).tolist()), "pjrtkit": ("pjrtkit", (x + 1).tolist()),
                 "cpu": ("cpu", (x + 1).tolist())}
  assert jax.devices("gpu") == jax.devices("pjrtkit")
  # Between the backends and back.
  back = on["gpu"](on["cpu"](on["gpu"](x)))
  assert (back.devices().pop().platform, np.asarray(back).tolist()) == ("pjrtkit",
                                                                        (x + 3).tolist())


def test_reads_into_numpy_are_exact_at_every_size_and_dtype():
  # Reads of 1 MiB and more go through pinned host memory on pjrtkit: sizes around that
  # threshold and the parallel copy's parts, every byte-sized dtype, and device_get.
  rng = np.random.default_rng(7)
  mib = 1 << 20
  for nbytes in (mib - 4, mib, mib + 4, 8 * mib + 12, 64 * mib, 200 * mib + 8):
    host = rng.integers(0, 256, nbytes, dtype=np.uint8)
    on_gpu = jax.device_put(host, gpu())
    np.testing.assert_array_equal(np.asarray(on_gpu), host)
    np.testing.assert_array_equal(jax.device_get(on_gpu), host)
  for dtype in (np.bool_, np.int8, np.int16, np.float16, jnp.bfloat16, np.int32, np.float32,
                np.complex64):
    host = (rng.standard_normal((1 << 18) + 3) * 100).astype(dtype)
    np.testing.assert_array_equal(np.asarray(jax.device_put(host, gpu())), host)
  # A computed result, a 2-D one read transposed, and a slice.
  x = jax.device_put(np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024), gpu())
  np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a.T * 2)(x)),
                                np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024).T * 2)
  np.testing.assert_array_equal(np.asarray(x[3:700]), np.asarray(x)[3:700])
  # copy_to_host_async, then the value: the same bytes, read-only, cached like JAX's own.
  y = jax.jit(lambda a: a + 1)(x)
  y.copy_to_host_async()
  value = np.asarray(y)
  want = np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024) + 1
  np.testing.assert_array_equal(value, want)
  assert not value.flags.writeable and np.asarray(y) is value
  if PLATFORM == "pjrtkit":
    from jax_plugins.pjrtkit import _host_values  # pylint: disable=g-import-not-at-top
    assert len(_host_values.PENDING) == 0  # The value took the copy copy_to_host_async started.



@pjrtkit_only
def test_compiled_for_a_topology_loads_and_runs():
  from jax.experimental import topologies  # pylint: disable=g-import-not-at-top
  from jax.experimental import serialize_executable as se  # pylint: disable=g-import-not-at-top

  gpus = jax.devices(PLATFORM)
  # XLA:GPU's topology of this machine's GPUs (no target_config: XLA:GPU asks the GPU), compiled
  # for without a client; a machine without a GPU passes target_config as well.
  topology = topologies.get_topology_desc("aot", platform="pjrtkit", topology=f"1x1x{len(gpus)}")
  assert [d.device_kind for d in topology.devices] == [d.device_kind for d in gpus]
  shape = jax.ShapeDtypeStruct((4,), jnp.float32,
                               sharding=jax.sharding.SingleDeviceSharding(topology.devices[0]))
  compiled = jax.jit(lambda a, b: a * 2 + b).trace(shape, shape).lower().compile()
  loaded = se.deserialize_and_load(*se.serialize(compiled), execution_devices=gpus[:1])
  a = np.arange(4, dtype=np.float32)
  out = loaded(jax.device_put(a, gpus[0]), jax.device_put(np.full(4, 0.5, np.float32), gpus[0]))
  np.testing.assert_array_equal(np.asarray(out), a * 2 + 0.5)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v"] + sys.argv[1:]))
