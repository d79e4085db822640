"""Host callbacks inside jitted code on pjrtkit: pure_callback, io_callback (ordered and not),
jax.debug.print and jax.debug.callback, errors, counting and lifetime, the persistent cache,
sub-byte dtypes, refusal without the cpu backend. Callbacks on several devices (pmap, sharded
jits, shard_map) and callbacks that dispatch pjrtkit computations are in
host_callbacks_multi_device_test.py.

Children run with JAX_PLATFORMS=pjrtkit,cpu (JAX's callback implementations place arguments on
the cpu backend, as on GPU/TPU); the default device is pjrtkit, so every jitted function below
runs on pjrtkit. Values are exact: the callbacks compute with numpy on integers or on floats
produced by the same numpy call in the child.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.testing import callback_child
from tests.testing.plugin_env import plugin_env, run_python, run_python_failing

_PRELUDE = callback_child.PRELUDE
_env = callback_child.env
_run = callback_child.run


def _stdout(code: str) -> list[str]:
  """The child's stdout lines (for jax.debug.print)."""
  proc = subprocess.run([sys.executable, "-c", _PRELUDE + textwrap.dedent(code)], env=_env(),
                        capture_output=True, text=True, timeout=240, check=False)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  return [line for line in proc.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def results() -> dict:
  """Most callback checks, run in one child."""
  return _run("""
      out = {}
      before = _host_callbacks.call_count()

      # pure_callback: one output, exact (integer arithmetic on the host).
      f = jax.jit(lambda x: jax.pure_callback(lambda v: v * 3 + 1,
                                              jax.ShapeDtypeStruct(x.shape, x.dtype), x))
      y = f(jnp.arange(5, dtype=jnp.int32))
      out["pure"] = y.tolist()
      out["pure_device"] = str(y.devices().pop().platform)

      # Several outputs of several dtypes; floats computed by numpy in the callback and here.
      def host(a, b):
        return np.sin(a).astype(np.float32), (b % 2 == 0), b.astype(np.int32) * 2
      shapes = (jax.ShapeDtypeStruct((3,), jnp.float32), jax.ShapeDtypeStruct((4,), jnp.bool_),
                jax.ShapeDtypeStruct((4,), jnp.int32))
      s, even, twice = jax.jit(lambda a, b: jax.pure_callback(host, shapes, a, b))(
          jnp.array([0.5, 1.0, 2.0], jnp.float32), jnp.arange(4, dtype=jnp.int32))
      out["multi"] = [s.tolist(), even.tolist(), twice.tolist()]
      out["multi_expected_sin"] = np.sin(np.array([0.5, 1.0, 2.0], np.float32)).tolist()

      # vmap of a pure_callback, both vmap methods.
      cb = lambda v: jax.pure_callback(lambda a: a * a, jax.ShapeDtypeStruct(v.shape, v.dtype), v,
                                       vmap_method="sequential")
      out["vmap_sequential"] = jax.jit(jax.vmap(cb))(jnp.arange(6).reshape(3, 2)).tolist()
      cb2 = lambda v: jax.pure_callback(lambda a: a + 100, jax.ShapeDtypeStruct(v.shape, v.dtype),
                                        v, vmap_method="expand_dims")
      out["vmap_expand_dims"] = jax.jit(jax.vmap(cb2))(jnp.arange(3)).tolist()

      # io_callback, unordered: side effect and value.
      seen = []
      def record(v):
        seen.append(v.tolist())
        return v + 1
      z = jax.jit(lambda x: io_callback(record, jax.ShapeDtypeStruct(x.shape, x.dtype), x))(
          jnp.arange(3))
      out["io_value"] = z.tolist()
      out["io_seen"] = list(seen)

      # io_callback, ordered, in a loop: calls arrive in program order.
      order = []
      def step(i):
        order.append(int(i))
        return np.int32(i * 10)
      def body(i, acc):
        return acc + io_callback(step, jax.ShapeDtypeStruct((), jnp.int32), i, ordered=True)
      total = jax.jit(lambda: jax.lax.fori_loop(0, 5, body, jnp.int32(0)))()
      jax.effects_barrier()
      out["ordered_total"] = int(total)
      out["ordered_calls"] = order

      # jax.debug.callback receives the values.
      got = []
      jax.jit(lambda x: jax.debug.callback(lambda v: got.append(np.asarray(v).tolist()), x * 2))(
          jnp.arange(4))
      jax.effects_barrier()
      out["debug_callback"] = got

      # Only the taken branch of lax.cond calls back.
      calls = []
      def branch(tag):
        return lambda v: io_callback(lambda a: (calls.append(tag), a)[1],
                                     jax.ShapeDtypeStruct((), jnp.int32), v)
      g = jax.jit(lambda p, v: jax.lax.cond(p, branch("true"), branch("false"), v))
      out["cond_values"] = [int(g(True, 1)), int(g(False, 2)), int(g(True, 3))]
      jax.effects_barrier()
      out["cond_calls"] = calls

      # Callback on another pjrtkit device.
      dev2 = jax.devices("pjrtkit")[2]
      w = f(jax.device_put(jnp.arange(3, dtype=jnp.int32), dev2))
      out["device2"] = [w.tolist(), w.devices().pop().id]

      out["handler_calls"] = _host_callbacks.call_count() - before
      print(json.dumps(out))
  """)


def test_pure_callback_values(results):
  assert results["pure"] == [1, 4, 7, 10, 13]
  assert results["pure_device"] == "pjrtkit"


def test_pure_callback_several_outputs_and_dtypes(results):
  sin, even, twice = results["multi"]
  assert sin == results["multi_expected_sin"]
  assert even == [True, False, True, False]
  assert twice == [0, 2, 4, 6]


def test_pure_callback_under_vmap(results):
  assert results["vmap_sequential"] == [[0, 1], [4, 9], [16, 25]]
  assert results["vmap_expand_dims"] == [100, 101, 102]


def test_io_callback_unordered(results):
  assert results["io_value"] == [1, 2, 3]
  assert results["io_seen"] == [[0, 1, 2]]


def test_io_callback_ordered_calls_in_program_order(results):
  assert results["ordered_calls"] == [0, 1, 2, 3, 4]
  assert results["ordered_total"] == 100


def test_debug_callback_values(results):
  assert results["debug_callback"] == [[0, 2, 4, 6]]


def test_only_the_taken_cond_branch_calls_back(results):
  assert results["cond_values"] == [1, 2, 3]
  assert results["cond_calls"] == ["true", "false", "true"]


def test_callback_on_a_non_default_device(results):
  assert results["device2"] == [[1, 4, 7], 2]


def test_every_callback_went_through_pjrtkits_handler(results):
  # pure 1 + multi 1 + vmap sequential 3 + expand_dims 1 + io 1 + ordered 5 + debug 1 + cond 3
  # + device2 1.
  assert results["handler_calls"] == 17


def test_debug_print_output_and_order():
  lines = _stdout("""
      @jax.jit
      def f(x):
        jax.debug.print("x = {}", x)
        jax.debug.print("sum {s} max {m}", s=x.sum(), m=x.max(), ordered=True)
        def step(c, i):
          jax.debug.print("step {i} carry {c}", i=i, c=c, ordered=True)
          return c + i, None
        return jax.lax.scan(step, jnp.int32(0), jnp.arange(3, dtype=jnp.int32))[0]
      print("result", int(f(jnp.array([1, 2, 3], jnp.int32))))
      jax.effects_barrier()
  """)
  assert lines == ["x = [1 2 3]", "sum 6 max 3", "step 0 carry 0", "step 1 carry 0",
                   "step 2 carry 1", "result 3"]


def test_a_failing_callback_raises_with_its_message():
  out = run_python_failing(_PRELUDE + textwrap.dedent("""
      def bad(v):
        raise ValueError("callback says no")
      jax.jit(lambda x: jax.pure_callback(bad, jax.ShapeDtypeStruct((), jnp.float32), x))(
          1.0).block_until_ready()
  """), env=_env())
  assert "JaxRuntimeError" in out
  assert "pjrtkit host callback failed: ValueError('callback says no')" in out


def test_wrong_callback_output_shape_is_reported():
  out = run_python_failing(_PRELUDE + textwrap.dedent("""
      jax.jit(lambda x: jax.pure_callback(lambda v: np.zeros(3, np.float32),
                                          jax.ShapeDtypeStruct((2,), jnp.float32), x))(
          jnp.ones(2)).block_until_ready()
  """), env=_env())
  assert "Incorrect output shape for return value #0: Expected: (2,), Actual: (3,)" in out


def test_a_callback_outlives_its_dropped_executable_while_it_runs():
  # The jitted function and its executable are dropped while XLA:CPU is still computing the
  # callback's operand: the in-flight execution keeps the callback alive.
  got = _run("""
      import gc
      big = jnp.ones((1500, 1500), jnp.float32)
      def launch():
        f = jax.jit(lambda x: jax.pure_callback(
            lambda v: v + 1, jax.ShapeDtypeStruct((), x.dtype), ((x @ x) @ x).sum() * 0))
        return f(big)
      values = []
      for _ in range(3):
        r = launch()
        jax.clear_caches()
        gc.collect()
        values.append(float(r))
      print(json.dumps(values))
  """)
  assert got == [1.0, 1.0, 1.0]


def test_callbacks_are_released_with_their_executable():
  got = _run("""
      import gc
      base = len(_host_callbacks.BINDINGS)
      f = jax.jit(lambda x: jax.pure_callback(lambda v: v, jax.ShapeDtypeStruct((), x.dtype), x))
      f(1.0).block_until_ready()
      f(jnp.int32(1)).block_until_ready()
      alive = len(_host_callbacks.BINDINGS) - base
      del f
      jax.clear_caches()
      gc.collect()
      print(json.dumps({"alive": alive, "after": len(_host_callbacks.BINDINGS) - base}))
  """)
  assert got == {"alive": 2, "after": 0}


def test_the_program_is_jaxs_cpu_callback_and_holds_no_callback_identity():
  got = _run("""
      def step(cb):
        return jax.jit(lambda x: jax.pure_callback(cb, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
      x = jnp.arange(3, dtype=jnp.int32)
      texts = [step(cb).lower(x).as_text() for cb in (lambda v: v + 1, lambda v: v * 10)]
      line = [l for l in texts[0].splitlines() if "custom_call" in l][0]
      print(json.dumps({"same": texts[0] == texts[1], "line": line}))
  """)
  assert got["same"] is True
  assert "stablehlo.custom_call @xla_ffi_python_cpu_callback(" in got["line"]
  assert "mhlo.backend_config = {index = 0 : ui64}" in got["line"]


_CACHE = """
import os
from jax._src import monitoring
jax.config.update("jax_compilation_cache_dir", cache_dir)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
hits = []
monitoring.register_event_listener(
    lambda event, **kw: hits.append(event) if event == "/jax/compilation_cache/cache_hits"
    else None)
def jit_with(callback):
  def step(x):  # One name, so one module (and cache key) for every callback.
    return jax.pure_callback(callback, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
  return jax.jit(step)
x = jax.device_put(np.arange(4, dtype=np.int32))
def call(f):
  before, calls = len(hits), _host_callbacks.call_count()
  value = f(x).tolist()
  return [value, len(hits) - before, _host_callbacks.call_count() - calls]
entries = lambda: sorted(n.split("-")[0] for n in os.listdir(cache_dir) if n.startswith("jit_step"))
"""


def test_persistent_cache_hits_with_other_callbacks_and_each_calls_its_own(tmp_path):
  # As on jaxlib's cpu: a jit whose callback is another function of the same signature is a
  # persistent-cache hit, here and in a new process, and every executable calls its own function.
  setup = _PRELUDE + f"cache_dir = {str(tmp_path)!r}\n" + _CACHE
  first = run_python(setup + textwrap.dedent("""
      plus_one = jit_with(lambda v: v + 1)
      times_ten = jit_with(lambda v: v * 10)
      print(json.dumps({"plus_one": call(plus_one), "times_ten": call(times_ten),
                        "plus_one_again": call(plus_one), "entries": entries()}))
  """), env=_env())
  # [values, persistent-cache hits, callbacks run by pjrtkit's handler]
  assert first == {"plus_one": [[1, 2, 3, 4], 0, 1], "times_ten": [[0, 10, 20, 30], 1, 1],
                   "plus_one_again": [[1, 2, 3, 4], 0, 1], "entries": ["jit_step"]}
  second = run_python(setup + textwrap.dedent("""
      minus_five = jit_with(lambda v: v - 5)
      squared = jit_with(lambda v: v * v)
      print(json.dumps({"minus_five": call(minus_five), "squared": call(squared),
                        "minus_five_again": call(minus_five)}))
  """), env=_env())
  assert second == {"minus_five": [[-5, -4, -3, -2], 1, 1], "squared": [[0, 1, 4, 9], 1, 1],
                    "minus_five_again": [[-5, -4, -3, -2], 0, 1]}


def test_an_executable_destroyed_beside_a_live_one_of_the_same_program(tmp_path):
  # c1 and c2 hold the same program (c2 is a persistent-cache hit of c1's) with different
  # callbacks; c1 goes away and c2 keeps calling its own function.
  got = _run("""
      import gc
      jax.config.update("jax_compilation_cache_dir", cache_dir)
      jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
      jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
      def step(cb):
        return jax.jit(lambda x: jax.pure_callback(cb, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
      x = jnp.arange(3, dtype=jnp.int32)
      base = len(_host_callbacks.BINDINGS)
      c1 = step(lambda v: v + 1).lower(x).compile()
      c2 = step(lambda v: v * 10).lower(x).compile()
      out = {"c1": c1(x).tolist(), "c2": c2(x).tolist(), "alive": len(_host_callbacks.BINDINGS) - base}
      del c1
      gc.collect()
      out["after"] = len(_host_callbacks.BINDINGS) - base
      out["c2_again"] = [c2(x).tolist() for _ in range(3)]
      print(json.dumps(out))
  """, setup=f"cache_dir = {str(tmp_path)!r}\n")
  assert got == {"c1": [1, 2, 3], "c2": [0, 10, 20], "alive": 2, "after": 1,
                 "c2_again": [[0, 10, 20]] * 3}


def test_without_the_cpu_backend_callbacks_are_refused_at_lowering():
  # JAX's callbacks place their arguments on the cpu backend; without it pjrtkit refuses when
  # the program is lowered (nothing runs), with JAX's own error. checkify needs no cpu backend.
  got = run_python(textwrap.dedent("""
      import json
      import jax, jax.numpy as jnp
      from jax.experimental import io_callback, checkify
      f32 = jax.ShapeDtypeStruct((), jnp.float32)
      ran = []
      kinds = {
          "pure": lambda x: jax.pure_callback(lambda v: ran.append(1) or v, f32, x),
          "io": lambda x: io_callback(lambda v: ran.append(1) or v, f32, x),
          "io_ordered": lambda x: io_callback(lambda v: ran.append(1) or v, f32, x, ordered=True),
          "debug_callback": lambda x: (jax.debug.callback(lambda v: ran.append(1), x), x)[1],
          "debug_print": lambda x: (jax.debug.print("{}", x), x)[1],
      }
      out = {}
      for name, f in kinds.items():
        try:
          jax.jit(f).lower(1.0)
          out[name] = None
        except RuntimeError as e:
          out[name] = str(e)
      jax.config.update("jax_experimental_unsafe_xla_runtime_errors", True)
      def g(x):
        checkify.check(x > 0, "x must be positive, got {x}", x=x)
        return x + 1
      out["check_ok"] = float(jax.jit(g)(1.0))
      try:
        jax.jit(g)(-2.0).block_until_ready()
      except Exception as e:
        out["check_error"] = str(e)
      out["ran"] = ran
      print(json.dumps(out))
  """), env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  expected = ('failed to find a local CPU device to place the inputs on. Make sure "cpu" is '
              'listed in --jax_platforms or the JAX_PLATFORMS environment variable.')
  assert got["pure"] == "jax.pure_callback " + expected
  assert got["io"] == got["io_ordered"] == "jax.io_callback " + expected
  assert got["debug_callback"] == got["debug_print"] == "jax.debug.callback " + expected
  assert got["ran"] == []
  assert got["check_ok"] == 2.0
  assert "x must be positive, got -2.0" in got["check_error"]


_SUB_BYTE_DTYPES = {
    "int4": [-8, -1, 0, 3, 7], "uint4": [0, 1, 9, 15, 4], "int2": [-2, -1, 0, 1, 1],
    "uint2": [0, 1, 2, 3, 2], "float4_e2m1fn": [-6.0, -0.5, 0.0, 1.5, 4.0],
}


def test_sub_byte_dtypes_as_operands_and_results():
  # XLA:CPU passes 2- and 4-bit types packed; the callback sees them one element per byte. Odd
  # element counts (5, 3) leave a partly used last byte. Results are read back through a cast on
  # the device.
  got = _run(f"""
      out = {{}}
      for name, values in {_SUB_BYTE_DTYPES!r}.items():
        dt = getattr(jnp, name)
        seen = []
        def host(a):
          seen.append([str(a.dtype), list(a.shape), np.asarray(a).astype(np.float32).tolist()])
          a = np.asarray(a)
          return a[::-1].copy(), a.reshape(1, 5)[:, 1:4].copy(), np.zeros((0,), a.dtype)
        shapes = (jax.ShapeDtypeStruct((5,), dt), jax.ShapeDtypeStruct((1, 3), dt),
                  jax.ShapeDtypeStruct((0,), dt))
        f = jax.jit(lambda v: [r.astype(jnp.float32)
                               for r in jax.pure_callback(host, shapes, v.astype(dt))])
        reversed_, middle, empty = f(jnp.array(values, jnp.float32))
        out[name] = [seen, reversed_.tolist(), middle.tolist(), empty.tolist()]
      print(json.dumps(out))
  """)
  for name, values in _SUB_BYTE_DTYPES.items():
    floats = [float(v) for v in values]
    assert got[name] == [[[name, [5], floats]], floats[::-1], [floats[1:4]], []], name


def test_a_raising_ordered_callback_fails_its_execution_only():
  got = _run("""
      calls = []
      def flaky(v):
        calls.append(int(v))
        if int(v) == 2:
          raise KeyError("no two")
        return v
      f = jax.jit(lambda x: io_callback(flaky, jax.ShapeDtypeStruct((), jnp.int32), x,
                                        ordered=True))
      out = {"ok": int(f(jnp.int32(1)))}
      try:
        f(jnp.int32(2)).block_until_ready()
        jax.effects_barrier()
      except Exception as e:
        out["error"] = [type(e).__name__, str(e)]
      out["after"] = int(f(jnp.int32(3)))
      jax.effects_barrier()
      out["calls"] = calls
      print(json.dumps(out))
  """)
  assert got["ok"] == 1 and got["after"] == 3 and got["calls"] == [1, 2, 3]
  assert got["error"][0] == "JaxRuntimeError"
  assert "pjrtkit host callback failed: KeyError('no two')" in got["error"][1]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
