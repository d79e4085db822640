"""JAX end to end on pjrtkit's xla_gpu device (NVIDIA GPUs through OpenXLA's CUDA plugin).

Skipped, with the reason, on a machine without an NVIDIA GPU and ``jax-cuda13-pjrt`` (or
``-cuda12-``): CI has none. ``tools/gpu/run_gpu_suite.sh`` runs it on a GPU machine. Every check
compares with a reference: numpy (float tolerances stated per test), jaxlib's ``cpu`` backend
(bit-exact random bits), or XLA's own implementation (cuDNN attention).

The process runs JAX on ``pjrtkit,cpu`` (the cpu backend is where JAX's host callbacks put their
arguments, on every GPU platform). With ``GPU_TEST_PLATFORM=cuda`` the same checks run on JAX's
own CUDA backend instead (the reference: a check failing there too is about JAX or the test, not
pjrtkit); the pjrtkit-only checks are skipped then.
"""

from __future__ import annotations

import functools
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

F32_RTOL = 1e-4
"""Relative tolerance of float32 results against numpy's float64 (cuSOLVER, cuFFT, cuBLAS)."""


def gpu() -> "jax.Device":
  return jax.devices(PLATFORM)[0]


pjrtkit_only = pytest.mark.skipif(PLATFORM != "pjrtkit", reason="checks pjrtkit itself")


def test_devices_are_the_gpus():
  devices = jax.devices(PLATFORM)
  assert devices and all(d.platform == ("gpu" if PLATFORM == "cuda" else PLATFORM)
                         for d in devices)
  d = devices[0]
  assert d.device_kind.startswith("NVIDIA"), d.device_kind
  major, minor = (int(p) for p in d.compute_capability.split("."))
  assert major >= 7 and minor >= 0
  assert d.core_count > 0
  assert [m.kind for m in d.addressable_memories()] == ["device", "pinned_host"]
  stats = d.memory_stats()
  assert stats["bytes_limit"] > 0 and stats["bytes_in_use"] >= 0
  assert jax.devices("gpu") == devices  # With JAX's cuda absent, the alias finds pjrtkit.


@pjrtkit_only
def test_pjrtkit_runs_on_the_xla_gpu_device_with_its_whole_integration():
  import jax_plugins.pjrtkit as pjrtkit  # pylint: disable=g-import-not-at-top

  d = gpu()
  assert d.backend == "xla_gpu"
  assert d.client.platform_version.startswith("pjrtkit 0.1.0 (xla_gpu ")
  status = pjrtkit.integration_status()
  assert (status.device, status.problems) == ("xla_gpu", ())
  assert status.installed == ("ffi", "cuda lowering", "pallas gpu", "gpu callbacks", "gpu alias",
                              "donation", "persistent cache")


def test_jit_matmul_matches_numpy():
  rng = np.random.default_rng(0)
  a = rng.standard_normal((256, 128), np.float32)
  b = rng.standard_normal((128, 64), np.float32)
  f = jax.jit(lambda x, y: jnp.dot(x, y, precision=jax.lax.Precision.HIGHEST))
  out = f(jax.device_put(a, gpu()), jax.device_put(b, gpu()))
  assert out.devices() == {gpu()}
  np.testing.assert_allclose(np.asarray(out), a.astype(np.float64) @ b, rtol=F32_RTOL, atol=1e-4)


@pytest.mark.parametrize("nbytes", [1 << 10, 1 << 20, 64 << 20, 1 << 30])
@pytest.mark.parametrize("aligned", [True, False])
def test_transfers_both_ways_are_exact(nbytes, aligned):
  # A cheap non-repeating pattern (Knuth's multiplicative hash of the index).
  raw = (np.arange(nbytes // 4 + 32, dtype=np.uint32) * np.uint32(2654435761)).view(np.uint8)
  offset = 0 if aligned else 16  # 16 bytes past a 64-byte boundary, as numpy's big arrays are.
  start = (-raw.ctypes.data) % 64 + offset
  host = raw[start:start + nbytes].view(np.float32)
  assert (host.ctypes.data % 64 == 0) == aligned
  dev = jax.device_put(host, gpu())
  back = np.asarray(dev)
  np.testing.assert_array_equal(back.view(np.uint32), host.view(np.uint32))  # Bit for bit.
  flipped = np.asarray(jax.jit(lambda x: x.view(np.uint32) ^ np.uint32(0xFFFFFFFF))(dev))
  np.testing.assert_array_equal(flipped, host.view(np.uint32) ^ np.uint32(0xFFFFFFFF))


def test_donation_deletes_the_argument_and_keeps_values():
  f = jax.jit(lambda x: x * 2 + 1, donate_argnums=0)
  x = jax.device_put(np.arange(1024, dtype=np.float32), gpu())
  y = f(x)
  assert x.is_deleted()
  np.testing.assert_array_equal(np.asarray(y), np.arange(1024, dtype=np.float32) * 2 + 1)


def test_memory_kinds_pinned_host_round_trip():
  pinned = jax.sharding.SingleDeviceSharding(gpu(), memory_kind="pinned_host")
  device = jax.sharding.SingleDeviceSharding(gpu(), memory_kind="device")
  host = np.arange(4096, dtype=np.float32)
  x = jax.device_put(host, pinned)
  assert x.sharding.memory_kind == "pinned_host"
  y = jax.device_put(x, device)
  assert y.sharding.memory_kind == "device"
  z = jax.jit(lambda v: v + 1, out_shardings=pinned)(y)
  assert z.sharding.memory_kind == "pinned_host"
  np.testing.assert_array_equal(np.asarray(z), host + 1)


def _spd(n: int) -> np.ndarray:
  m = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
  return (m @ m.T + n * np.eye(n)).astype(np.float32)


def test_linalg_through_cusolver_matches_numpy():
  a = _spd(64)
  m = np.random.default_rng(1).standard_normal((64, 48)).astype(np.float32)
  on = lambda v: jax.device_put(v, gpu())
  chol = np.asarray(jnp.linalg.cholesky(on(a)))
  np.testing.assert_allclose(chol, np.linalg.cholesky(a.astype(np.float64)), rtol=F32_RTOL,
                             atol=1e-3)
  q, r = (np.asarray(t) for t in jnp.linalg.qr(on(m)))
  np.testing.assert_allclose(q @ r, m, rtol=F32_RTOL, atol=1e-4)
  w = np.asarray(jnp.linalg.eigh(on(a))[0])
  np.testing.assert_allclose(w, np.linalg.eigvalsh(a.astype(np.float64)), rtol=F32_RTOL)
  s = np.asarray(jnp.linalg.svd(on(m), compute_uv=False))
  np.testing.assert_allclose(s, np.linalg.svd(m.astype(np.float64), compute_uv=False),
                             rtol=F32_RTOL)
  b = np.arange(64, dtype=np.float32)
  x = np.asarray(jnp.linalg.solve(on(a), on(b)))
  np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), rtol=1e-3, atol=1e-5)


def test_fft_matches_numpy():
  x = np.random.default_rng(2).standard_normal(1024).astype(np.float32)
  got = np.asarray(jnp.fft.fft(jax.device_put(x, gpu())))
  np.testing.assert_allclose(got, np.fft.fft(x.astype(np.float64)), rtol=F32_RTOL, atol=1e-3)
  got = np.asarray(jnp.fft.irfft(jnp.fft.rfft(jax.device_put(x, gpu()))))
  np.testing.assert_allclose(got, x, rtol=F32_RTOL, atol=1e-5)


def test_random_bits_equal_the_cpu_backends():
  key = jax.random.key(42)
  bits = jax.jit(lambda k: jax.random.bits(k, (1000,)))
  on_gpu = bits(jax.device_put(key, gpu()))
  on_cpu = bits(jax.device_put(key, jax.devices("cpu")[0]))
  assert on_gpu.devices() == {gpu()} and on_cpu.devices() == {jax.devices("cpu")[0]}
  on_gpu, on_cpu = np.asarray(on_gpu), np.asarray(on_cpu)
  np.testing.assert_array_equal(on_gpu, on_cpu)


@pjrtkit_only
def test_host_callbacks_are_refused_at_lowering_on_pjrtkit():
  from jax.experimental import io_callback  # pylint: disable=g-import-not-at-top

  x = jax.device_put(np.arange(8, dtype=np.float32), gpu())
  spec = jax.ShapeDtypeStruct((), np.float32)
  programs = {
      "jax.pure_callback": lambda v: jax.pure_callback(lambda a: a.sum(), spec, v),
      "jax.experimental.io_callback": lambda v: io_callback(lambda a: a.sum(), spec, v),
      "jax.debug.print": lambda v: jax.debug.print("{}", v),
  }
  for what, program in programs.items():
    with pytest.raises(NotImplementedError) as error:
      jax.jit(program).lower(x)
    assert str(error.value).startswith(
        f"{what} is not supported on pjrtkit's xla_gpu device: XLA:GPU's host-callback handler "
        "finds the Python function through execute-context data that jaxlib attaches only for "
        "its own platforms"), str(error.value)


def test_host_callbacks_run_with_gpu_operands(capfd):
  if PLATFORM == "pjrtkit":
    pytest.skip("refused on pjrtkit's xla_gpu device (see the refusal test); this runs on JAX's "
                "cuda backend, the reference")
  seen = []
  f = jax.jit(lambda x: jax.pure_callback(lambda v: np.asarray(v) * 2,
                                          jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1)
  x = jax.device_put(np.arange(8, dtype=np.float32), gpu())
  np.testing.assert_array_equal(np.asarray(f(x)), np.arange(8, dtype=np.float32) * 2 + 1)
  from jax.experimental import io_callback  # pylint: disable=g-import-not-at-top

  record = lambda v: seen.append(float(v.sum())) or np.float32(v.sum())
  g = jax.jit(lambda x: io_callback(record, jax.ShapeDtypeStruct((), np.float32), x,
                                    ordered=True))
  assert float(g(x)) == 28.0 and seen == [28.0]
  jax.jit(lambda v: jax.debug.print("pjrtkit gpu x={}", v.sum()))(x)
  jax.jit(lambda v: jax.debug.callback(lambda s: seen.append(float(s)), v.sum()))(x)
  jax.effects_barrier()
  assert seen == [28.0, 28.0]
  assert "pjrtkit gpu x=28.0" in capfd.readouterr().out


def test_pallas_triton_kernels_match_references():
  from jax.experimental import pallas as pl  # pylint: disable=g-import-not-at-top

  def add(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]

  x = jax.device_put(np.arange(1024, dtype=np.float32), gpu())
  out = pl.pallas_call(add, out_shape=jax.ShapeDtypeStruct((1024,), jnp.float32))(x, x)
  np.testing.assert_array_equal(np.asarray(out), 2 * np.arange(1024, dtype=np.float32))

  def exp(x_ref, o_ref):
    o_ref[...] = jnp.exp(x_ref[...])

  v = np.linspace(-4, 4, 2048, dtype=np.float32)
  out = pl.pallas_call(exp, out_shape=jax.ShapeDtypeStruct(v.shape, v.dtype), grid=(2,),
                       in_specs=[pl.BlockSpec((1024,), lambda i: (i,))],
                       out_specs=pl.BlockSpec((1024,), lambda i: (i,)))(jax.device_put(v, gpu()))
  np.testing.assert_allclose(np.asarray(out), np.exp(v.astype(np.float64)), rtol=1e-6)

  def matmul(a_ref, b_ref, o_ref):
    o_ref[...] = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

  a = np.random.default_rng(3).standard_normal((128, 64)).astype(np.float16)
  b = np.random.default_rng(4).standard_normal((64, 128)).astype(np.float16)
  out = pl.pallas_call(matmul, out_shape=jax.ShapeDtypeStruct((128, 128), jnp.float32), grid=(2, 2),
                       in_specs=[pl.BlockSpec((64, 64), lambda i, j: (i, 0)),
                                 pl.BlockSpec((64, 64), lambda i, j: (0, j))],
                       out_specs=pl.BlockSpec((64, 64), lambda i, j: (i, j)))(
                           jax.device_put(a, gpu()), jax.device_put(b, gpu()))
  np.testing.assert_allclose(np.asarray(out), a.astype(np.float64) @ b.astype(np.float64),
                             rtol=1e-2, atol=1e-2)


def test_pallas_mosaic_gpu_kernels_match_references():
  from jax.experimental import pallas as pl  # pylint: disable=g-import-not-at-top
  from jax.experimental.pallas import mosaic_gpu as plgpu  # pylint: disable=g-import-not-at-top

  # plgpu.kernel (mpmd_map): a TMA copy GMEM -> SMEM -> GMEM.
  kernel = plgpu.kernel(functools.partial(_mgpu_tma_copy, plgpu=plgpu, pl=pl),
                        out_type=jax.ShapeDtypeStruct((128, 128), jnp.float32))
  y = np.arange(128 * 128, dtype=np.float32).reshape(128, 128)
  np.testing.assert_array_equal(np.asarray(kernel(jax.device_put(y, gpu()))), y)

  # pallas_call with Mosaic GPU parameters: add one.
  def add_one(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0

  x = jax.device_put(np.arange(256, dtype=np.float32), gpu())
  out = pl.pallas_call(add_one, out_shape=jax.ShapeDtypeStruct((256,), jnp.float32),
                       compiler_params=plgpu.CompilerParams())(x)
  np.testing.assert_array_equal(np.asarray(out), np.arange(256, dtype=np.float32) + 1)


def _mgpu_tma_copy(x_gmem, o_gmem, plgpu, pl):
  """A Mosaic GPU kernel body: GMEM -> SMEM by TMA, then SMEM -> GMEM."""

  def scoped(smem, barrier):
    plgpu.copy_gmem_to_smem(x_gmem, smem, barrier)
    plgpu.barrier_wait(barrier)
    plgpu.copy_smem_to_gmem(smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)

  pl.run_scoped(scoped, plgpu.SMEM((128, 128), jnp.float32), plgpu.Barrier(num_arrivals=1))


def test_cudnn_attention_matches_xla():
  rng = np.random.default_rng(5)
  q, k, v = (jax.device_put(rng.standard_normal((1, 128, 4, 64)).astype(jnp.bfloat16), gpu())
             for _ in range(3))
  cudnn = jax.nn.dot_product_attention(q, k, v, implementation="cudnn")
  xla = jax.nn.dot_product_attention(q, k, v, implementation="xla")
  np.testing.assert_allclose(np.asarray(cudnn, np.float32), np.asarray(xla, np.float32),
                             rtol=2e-2, atol=2e-2)


def test_platform_dependent_takes_the_cuda_branch():
  f = jax.jit(lambda x: jax.lax.platform_dependent(x, cpu=lambda v: v + 1.0,
                                                   cuda=lambda v: v + 2.0,
                                                   default=lambda v: v + 3.0))
  assert float(f(jax.device_put(np.float32(0), gpu()))) == 2.0


def test_pmap_psum_over_every_gpu():
  n = len(jax.devices(PLATFORM))
  if n < 2:
    pytest.skip(f"needs 2 GPUs, this machine has {n}")
  out = jax.pmap(lambda x: x + jax.lax.psum(x, "i"), axis_name="i",
                 devices=jax.devices(PLATFORM))(np.arange(n, dtype=np.float32))
  np.testing.assert_array_equal(np.asarray(out), np.arange(n) + n * (n - 1) / 2)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v", "-p", "no:cacheprovider"] + sys.argv[1:]))
