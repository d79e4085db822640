"""jax.experimental.buffer_callback on pjrtkit's CPU device: the function gets XLA's buffers in
place (operands read only, results written), inside jit, scan and cond, aliased, in every JAX
dtype a numpy view can hold, with jaxlib's context (stage EXECUTE; no GPU stream); errors in the
function reach the caller; sub-byte buffers refuse a numpy view by name. Values are exact.

JAX's own buffer_callback_test.py passes on this device wherever it passes on jaxlib's cpu
(tools/jax_suite; docs/gpu.md has the GPU device's run). The GPU device's variant
(DeviceBuffer, __cuda_array_interface__, ctx.stream) runs in gpu_features_test.
"""

from __future__ import annotations

import sys

import pytest

from tests.testing import callback_child
from tests.testing.plugin_env import run_python_failing

_SETUP = """
from jax.experimental import buffer_callback
import ml_dtypes
"""


@pytest.fixture(scope="module")
def results() -> dict:
  """Most checks, in one child."""
  return callback_child.run("""
      jax.config.update("jax_enable_x64", True)  # The 64-bit dtypes as they are.
      out = {}
      before = _host_callbacks.call_count()
      seen = {}

      def double(ctx, out_buf, arg):
        try:
          ctx.stream
        except jax.errors.JaxRuntimeError as e:
          seen["stream"] = str(e)
        seen["stage"] = str(ctx.stage)
        seen["arg"] = [list(arg.shape), str(arg.dtype), arg.ndim, arg.writeable, repr(arg)]
        seen["out"] = [list(out_buf.shape), str(out_buf.dtype), out_buf.writeable]
        x = np.asarray(arg)
        seen["arg_view_writeable"] = bool(x.flags.writeable)
        np.asarray(out_buf)[...] = x * 2
        seen["dlpack_sum"] = int(np.from_dlpack(arg).sum())
        seen["dlpack_device"] = list(arg.__dlpack_device__())

      data = np.arange(12, dtype=np.int32).reshape(3, 4)
      f = buffer_callback.buffer_callback(double, jax.ShapeDtypeStruct.like(data))
      y = jax.jit(f)(data)
      out["double"] = y.tolist()
      out["double_platform"] = y.devices().pop().platform
      out["seen"] = seen

      # Every dtype a numpy view holds: the bytes come back as they went (copy through out).
      def copy(ctx, out_buf, arg):
        np.asarray(out_buf)[...] = np.asarray(arg)
      dtypes = {}
      for name in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                   "uint64", "float16", "bfloat16", "float32", "float64", "complex64",
                   "complex128", "float8_e4m3fn", "float8_e5m2"]:
        dtype = np.dtype(getattr(ml_dtypes, name, None) or name)
        value = (np.arange(10) % 7).astype(dtype).reshape(2, 5)
        got = np.asarray(jax.jit(buffer_callback.buffer_callback(
            copy, jax.ShapeDtypeStruct.like(value)))(value))
        dtypes[name] = [str(got.dtype), got.tobytes() == value.tobytes()]
      out["dtypes"] = dtypes

      # Two operands, two results (a tuple of buffers); a scalar; an empty array.
      def two(ctx, outs, a, b):
        total, empty = outs
        np.asarray(total)[...] = np.asarray(a) + np.float32(1.5)
        np.asarray(empty)[...] = np.asarray(b)
      shapes = (jax.ShapeDtypeStruct((), jnp.float32), jax.ShapeDtypeStruct((0, 3), jnp.int32))
      total, empty = jax.jit(buffer_callback.buffer_callback(two, shapes))(
          jnp.float32(2.25), jnp.zeros((0, 3), jnp.int32))
      out["scalar"] = float(total)
      out["empty"] = list(empty.shape)

      # In place: the operand aliased to the result.
      def increment(ctx, out_buf, arg):
        np.asarray(out_buf)[...] += 1
      inc = buffer_callback.buffer_callback(increment, jax.ShapeDtypeStruct((4,), jnp.int32),
                                            input_output_aliases={0: 0})
      out["aliased"] = jax.jit(inc)(jnp.arange(4, dtype=jnp.int32)).tolist()

      # Inside scan and cond.
      def step(carry, _):
        return jax.jit(inc)(carry), None
      out["scan"] = jax.lax.scan(step, jnp.zeros(4, jnp.int32), None, length=5)[0].tolist()
      pick = jax.jit(lambda p, x: jax.lax.cond(p, inc, lambda v: v - 10, x))
      out["cond"] = [pick(True, jnp.arange(4, dtype=jnp.int32)).tolist(),
                     pick(False, jnp.arange(4, dtype=jnp.int32)).tolist()]
      out["calls"] = _host_callbacks.call_count() - before
      print(json.dumps(out))
      """, setup=_SETUP)


def test_values_and_context(results):
  assert results["double"] == [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18, 20, 22]]
  assert results["double_platform"] == "pjrtkit"
  seen = results["seen"]
  assert seen["stream"] == "XLA FFI GPU context is not available"
  assert seen["stage"] == "ExecutionStage.EXECUTE"
  assert seen["arg"] == [[3, 4], "int32", 2, False, "HostBuffer(operand int32[3, 4])"]
  assert seen["out"] == [[3, 4], "int32", True]
  assert seen["arg_view_writeable"] is False
  assert seen["dlpack_sum"] == 66
  assert seen["dlpack_device"] == [1, 0]


def test_every_dtype_round_trips(results):
  for name, (dtype, same) in results["dtypes"].items():
    assert same, name
    assert dtype == name


def test_shapes_aliasing_and_control_flow(results):
  assert results["scalar"] == 3.75
  assert results["empty"] == [0, 3]
  assert results["aliased"] == [1, 2, 3, 4]
  assert results["scan"] == [5, 5, 5, 5]
  assert results["cond"] == [[1, 2, 3, 4], [-10, -9, -8, -7]]
  # double, 17 dtypes, two, aliased, 5 scan steps, one cond branch taken.
  assert results["calls"] == 1 + 17 + 1 + 1 + 5 + 1


def test_an_error_in_the_function_reaches_the_caller():
  out = run_python_failing(callback_child.PRELUDE + _SETUP + """
def broken(ctx, out_buf, arg):
  raise ValueError("no such luck")
f = buffer_callback.buffer_callback(broken, jax.ShapeDtypeStruct((2,), jnp.float32))
jax.block_until_ready(jax.jit(f)(jnp.ones(2)))
""", env=callback_child.env())
  assert "pjrtkit host callback failed: ValueError('no such luck')" in out


def test_a_packed_sub_byte_buffer_refuses_a_numpy_view():
  out = run_python_failing(callback_child.PRELUDE + _SETUP + """
def view(ctx, out_buf, arg):
  np.asarray(arg)
f = buffer_callback.buffer_callback(view, jax.ShapeDtypeStruct((2,), jnp.int8))
jax.block_until_ready(jax.jit(f)(jnp.ones(4, jnp.int4)))
""", env=callback_child.env())
  assert ("TypeError('a int4 buffer holds 4-bit elements packed, which numpy cannot view in "
          "place; pass it to buffer_callback as a wider type')") in out


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
