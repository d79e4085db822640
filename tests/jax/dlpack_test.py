"""DLPack on the xla_cpu device: pjrtkit arrays to NumPy zero-copy, and NumPy arrays back.

jaxlib's own DLPack refuses any platform but cpu/cuda/rocm/oneapi; ``_dlpack`` exports pjrtkit
arrays itself. Checked here in one child on ``pjrtkit,cpu`` (4 pjrtkit devices): NumPy sees the
buffer's own memory (same address) with exact values and strides; the memory outlives the
``jax.Array`` and is released when the consumer (or an unconsumed capsule) goes; ``copy=True``
copies; the eight float8 types go out with DLPack 1.1's codes and come back bit-exact through
jaxlib's import; zero-size arrays go both ways; sharded arrays, sub-byte dtypes and foreign devices are refused naming what is accepted;
``jnp.from_dlpack`` brings NumPy arrays (and pjrtkit's own exports) back. ``gpu_device_test.py``
checks PyTorch and CuPy on the xla_gpu device.
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_CHILD = """
import gc, json
import numpy as np, ml_dtypes
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)  # int64, float64 and complex128 as they are.
from jax_plugins.pjrtkit import _dlpack
out = {}
dev = jax.devices()[0]
assert dev.platform == "pjrtkit"
x = jax.device_put(np.arange(12, dtype=np.float32).reshape(3, 4), dev)
out["device"] = [int(k) for k in x.__dlpack_device__()]
view = np.from_dlpack(x)
out["zero_copy"] = view.ctypes.data == x.unsafe_buffer_pointer()
out["view"] = [view.tolist(), list(view.strides), view.dtype.name]
out["held_while_viewed"] = _dlpack.held_count()
del x; gc.collect()
out["after_array_deleted"] = [float(view.sum()), _dlpack.held_count()]
del view; gc.collect()
out["after_view_deleted"] = _dlpack.held_count()
capsule = jnp.ones(3).__dlpack__()
out["unconsumed"] = [_dlpack.held_count()]
del capsule; gc.collect()
out["unconsumed"].append(_dlpack.held_count())
dtypes = {}
for name in ("bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64",
             "complex64", "complex128"):
  a = (np.arange(5) % 2 == 1) if name == "bool" else np.arange(5).astype(name)
  got = np.from_dlpack(jax.device_put(a, dev))
  dtypes[name] = [got.dtype.name == name, np.array_equal(got, a)]
out["dtypes"] = dtypes
float8 = {}
for name in _dlpack.FLOAT8_CODES:  # DLPack 1.1's kDLFloat8_* codes, read back by jaxlib's import.
  a = (np.arange(6, dtype=np.float32) / 4 + 0.25).astype(getattr(ml_dtypes, name))
  x8 = jax.device_put(a, dev)
  cpu, here = jnp.from_dlpack(x8), jnp.from_dlpack(x8, device=dev)
  float8[name] = [int(_dlpack.dl_data_type(a.dtype).code), cpu.dtype.name, here.dtype.name,
                  [d.platform for d in cpu.devices()], [d.platform for d in here.devices()],
                  np.asarray(cpu).view(np.uint8).tolist() == a.view(np.uint8).tolist(),
                  np.asarray(here).view(np.uint8).tolist() == a.view(np.uint8).tolist()]
out["float8"] = float8
empty = jax.device_put(np.zeros((0, 3), np.float32), dev)
out["empty"] = [list(np.from_dlpack(empty).shape), list(jnp.from_dlpack(empty).shape),
                list(jnp.from_dlpack(np.zeros((2, 0), np.int8), device=dev).shape)]
y = jax.device_put(np.arange(4, dtype=np.int32), dev)
copied = np.from_dlpack(y, copy=True)
out["copy"] = [copied.tolist(), copied.ctypes.data != y.unsafe_buffer_pointer()]
refused = {}
sharded = jax.device_put(np.arange(8.0), jax.sharding.NamedSharding(
    jax.make_mesh((4,), ("i",)), jax.sharding.PartitionSpec("i")))
int4 = jax.device_put(np.array([1, 2], ml_dtypes.int4), dev)
for name, call in (("sharded", lambda: np.from_dlpack(sharded)),
                   ("int4", lambda: np.from_dlpack(int4)),
                   ("cuda", lambda: y.__dlpack__(dl_device=(2, 0)))):
  try:
    call()
    refused[name] = None
  except BufferError as e:
    refused[name] = str(e)
out["refused"] = refused
host = np.arange(6, dtype=np.float32) * 1.5
back = jnp.from_dlpack(host, device=dev)
out["from_numpy"] = [back.tolist(), [d.platform for d in back.devices()]]
again = jnp.from_dlpack(jax.device_put(host, dev))
out["round_trip"] = again.tolist()
# The xla_gpu device's __cuda_array_interface__, installed here over the CPU device's memory
# (the dict it answers names the buffer's own address; jaxlib's arrays keep jaxlib's answer).
undo = _dlpack.install("pjrtkit", gpu=True)
x = jax.device_put(np.arange(6, dtype=np.float32).reshape(2, 3), dev)
cai = dict(x.__cuda_array_interface__)
cai["data"] = [cai["data"][0] == x.unsafe_buffer_pointer(), cai["data"][1]]
transposed = jax.device_put(np.arange(6, dtype=np.int16).reshape(2, 3), dev).T
cai_refused = {}
for name, array in (("bfloat16", jax.device_put(np.ones(2, ml_dtypes.bfloat16), dev)),
                    ("cpu", jax.device_put(np.ones(2, np.float32), jax.devices("cpu")[0])),
                    ("sharded", sharded)):
  try:
    array.__cuda_array_interface__
    cai_refused[name] = None
  except (AttributeError, ValueError) as e:
    cai_refused[name] = [type(e).__name__, str(e)]
out["cai"] = [cai, transposed.__cuda_array_interface__["strides"],
              jax.device_put(np.zeros((0, 2), np.int8), dev).__cuda_array_interface__["data"][0],
              cai_refused]
undo()
try:
  x.__cuda_array_interface__
  out["cai_after_undo"] = None
except AttributeError as e:
  out["cai_after_undo"] = str(e)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results() -> dict:
  return run_python(_CHILD, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))


def test_numpy_sees_the_buffers_own_memory_with_exact_values(results):
  assert results["device"] == [1, 0]  # kDLCPU
  assert results["zero_copy"] is True
  assert results["view"] == [[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]],
                             [16, 4], "float32"]
  assert all(v == [True, True] for v in results["dtypes"].values()), results["dtypes"]
  assert len(results["dtypes"]) == 10


def test_float8_types_carry_dlpack_codes_and_come_back_bit_exact(results):
  codes = {"float8_e3m4": 7, "float8_e4m3": 8, "float8_e4m3b11fnuz": 9, "float8_e4m3fn": 10,
           "float8_e4m3fnuz": 11, "float8_e5m2": 12, "float8_e5m2fnuz": 13, "float8_e8m0fnu": 14}
  assert results["float8"] == {
      name: [code, name, name, ["cpu"], ["pjrtkit"], True, True] for name, code in codes.items()}


def test_zero_size_arrays_go_both_ways(results):
  assert results["empty"] == [[0, 3], [0, 3], [2, 0]]


def test_the_gpu_devices_cuda_array_interface(results):
  cai, transposed_strides, empty_pointer, refused = results["cai"]
  assert cai == {"shape": [2, 3], "typestr": "<f4", "data": [True, False], "strides": None,
                 "version": 3}
  assert transposed_strides is None  # JAX's transpose is a new row-major array.
  assert empty_pointer == 0
  assert refused == {
      "bfloat16": ["AttributeError", "__cuda_array_interface__ is not supported for BF16 "
                   "buffers: no typestr for dtype bfloat16; accepted: bool, (u)int8-64, "
                   "float16/32/64, complex64/128 (use __dlpack__ for bfloat16 and float8)"],
      "cpu": ["AttributeError", "__cuda_array_interface__ is only defined for GPU buffers."],
      "sharded": ["ValueError", "__cuda_array_interface__() is supported only for unsharded "
                  "arrays."],
  }
  assert results["cai_after_undo"] == "__cuda_array_interface__ is only defined for GPU buffers."


def test_the_memory_outlives_the_array_and_is_released_with_the_consumer(results):
  assert results["held_while_viewed"] == 1
  assert results["after_array_deleted"] == [66.0, 1]
  assert results["after_view_deleted"] == 0
  assert results["unconsumed"] == [1, 0]


def test_copy_true_copies(results):
  assert results["copy"] == [[0, 1, 2, 3], True]


def test_what_dlpack_cannot_carry_is_refused_naming_what_is_accepted(results):
  assert results["refused"] == {
      "sharded": "__dlpack__ only supported for unsharded arrays.",
      "int4": ("pjrtkit: dtype int4 has no DLPack type; DLPack takes bool, (u)int8-64, "
               "float16/32/64, bfloat16, complex64/128 and float8_e3m4, float8_e4m3, "
               "float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, "
               "float8_e5m2fnuz, float8_e8m0fnu"),
      "cuda": ("pjrtkit: __dlpack__ cannot export an array on DLPack device (1, 0) to (2, 0); "
               "accepted: (1, 0)"),
  }


def test_jnp_from_dlpack_brings_arrays_back(results):
  assert results["from_numpy"] == [[0.0, 1.5, 3.0, 4.5, 6.0, 7.5], ["pjrtkit"]]
  assert results["round_trip"] == [0.0, 1.5, 3.0, 4.5, 6.0, 7.5]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v"] + sys.argv[1:]))
