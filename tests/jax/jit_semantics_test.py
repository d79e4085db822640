"""jit semantics on pjrtkit: tracing, caching and recompilation, Python control flow vs lax control
flow, vmap of cond, program size of loops, padding to one shape.

Compilations are counted through jax.monitoring's '/jax/core/compile/backend_compile_duration'
events (one per backend compile, filtered by the function's name), never through timing.
Everything runs in one child whose default backend is pjrtkit (cpu is there only because host
callbacks need it).
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from tests.testing.plugin_env import plugin_env, run_python

_CHILD = """
import json
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
from jax.experimental import io_callback

assert jax.default_backend() == "pjrtkit"
events = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, duration, **kwargs: events.append((event, kwargs.get("fun_name"))))
COMPILE = "/jax/core/compile/backend_compile_duration"

def count(kind, name):  # `kind` events of function `name` (inputs are made by other jits).
  return sum(e in ((kind, name), (kind, f"jit({name})")) for e in events)

def arr(values, dtype=np.float32):  # Strongly typed (jnp.full etc. would be weakly typed).
  return jax.device_put(np.asarray(values, dtype))

out = {}

# Trace-time side effects run once per signature; compiles follow new signatures only.
traced = []
def f(x, y):
  traced.append((x.shape, str(x.dtype)))
  return x * 2 + y
jf = jax.jit(f)
a3, b3, a4, i4 = arr([1, 1, 1]), arr([7, 7, 7]), arr([1, 1, 1, 1]), arr([1, 1, 1, 1], np.int32)
steps = {}
def step(name, *args):
  jf(*args).block_until_ready()
  steps[name] = (len(traced), count(COMPILE, "f"))
step("first", a3, 1.0)
step("new_values", b3, 2.0)
step("new_shape", a4, 1.0)
step("new_dtype", i4, 1)
step("old_signature", a3, 5.0)
out["signatures"] = steps
out["value"] = jf(arr([0, 1, 2]), 1.0).tolist()

# Static argument values and pytree structure are part of the signature.
def g(tree, n):
  return sum(jnp.sum(v) for v in jax.tree.leaves(tree)) * n
jg = jax.jit(g, static_argnums=1)
ones, zeros = arr([1, 1]), arr([0, 0])
jg({"a": ones}, 2); jg({"a": zeros}, 2)
after_values = count(COMPILE, "g")
jg({"a": ones}, 3)
after_static = count(COMPILE, "g")
jg({"a": ones, "b": ones}, 3)
after_structure = count(COMPILE, "g")
jg((ones, ones), 3)
after_container = count(COMPILE, "g")
out["static_and_pytree"] = [after_values, after_static, after_structure, after_container]
out["static_value"] = float(jg({"a": ones, "b": ones}, 3))

# A Python `if` on a traced value cannot be traced.
def branchy(x):
  if x > 0:
    return x
  return -x
try:
  jax.jit(branchy)(1.0)
  out["python_if"] = None
except jax.errors.TracerBoolConversionError as e:
  out["python_if"] = type(e).__name__

# jnp.where and lax.cond give the values.
x = jnp.array([-2.0, -0.5, 0.0, 1.5], jnp.float32)
out["where"] = jax.jit(lambda v: jnp.where(v > 0, v, -v))(x).tolist()
out["cond"] = [float(jax.jit(lambda v: lax.cond(v > 0, lambda a: a, lambda a: -a, v))(s))
               for s in (3.0, -4.0)]

# Under lax.cond only the taken branch runs on the device: a host counter per branch.
calls = {"taken": 0, "other": 0}
def bump(name):
  def host(v):
    calls[name] += 1
    return v
  return lambda v: io_callback(host, jax.ShapeDtypeStruct((), jnp.float32), v)
h = jax.jit(lambda p, v: lax.cond(p, bump("taken"), bump("other"), v))
for _ in range(3):
  h(True, 1.0)
jax.effects_barrier()
out["cond_counts"] = dict(calls)

# Under vmap a cond on a batched predicate becomes a select.
def cf(p, v):
  return lax.cond(p, lambda a: a + 1.0, lambda a: a - 1.0, v)
jaxpr = str(jax.make_jaxpr(jax.vmap(cf))(jnp.array([True, False]), jnp.array([1.0, 2.0])))
out["vmap_cond"] = {"select_n": "select_n" in jaxpr, "cond": "cond[" in jaxpr,
                    "values": jax.jit(jax.vmap(cf))(jnp.array([True, False]),
                                                    jnp.array([1.0, 2.0])).tolist()}

# Loop primitives keep the program size independent of the trip count; a Python loop unrolls.
def lowered_size(fn, n):
  return len(jax.jit(fn, static_argnums=1).lower(jnp.arange(4, dtype=jnp.int32), n).as_text())
def with_scan(v, n):
  return lax.scan(lambda c, _: (c * 3 + v, None), v, None, length=n)[0]
def with_fori(v, n):
  return lax.fori_loop(0, n, lambda i, c: c * 3 + v, v)
def with_while(v, n):
  return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 3 + v), (0, v))[1]
def with_python(v, n):
  c = v
  for _ in range(n):
    c = c * 3 + v
  return c
sizes = {name: [lowered_size(fn, n) for n in (10, 100)]
         for name, fn in [("scan", with_scan), ("fori_loop", with_fori),
                          ("while_loop", with_while), ("python", with_python)]}
out["sizes"] = sizes
v = jnp.arange(4, dtype=jnp.int32)
out["loop_values"] = {name: jax.jit(fn, static_argnums=1)(v, 20).tolist()
                      for name, fn in [("scan", with_scan), ("fori_loop", with_fori),
                                       ("while_loop", with_while), ("python", with_python)]}

# Padding with a mask: one compiled executable serves every length up to the padded size.
def masked_sum(padded, length):
  mask = jnp.arange(padded.shape[0]) < length
  return jnp.sum(jnp.where(mask, padded, 0))
jm = jax.jit(masked_sum)
padded_results = []
for n in (3, 5, 8, 1):
  padded = np.zeros(8, np.int32)
  padded[:n] = np.arange(1, n + 1)
  padded_results.append(int(jm(jax.device_put(padded), n)))
out["padding"] = {"compiles": count(COMPILE, "masked_sum"), "values": padded_results,
                  "unpadded": [int(np.arange(1, n + 1).sum()) for n in (3, 5, 8, 1)]}

# make_jaxpr shows the primitives.
def prims(fn, *args):
  return sorted({eqn.primitive.name for eqn in jax.make_jaxpr(fn)(*args).jaxpr.eqns})
out["jaxpr_elementwise"] = prims(lambda a: jnp.sin(a) * 2.0 + jnp.sum(a), jnp.ones(3))
out["jaxpr_control"] = prims(lambda a: lax.fori_loop(0, 3, lambda i, c: c + a, a), jnp.ones(3))
out["jaxpr_cond"] = prims(lambda p, a: lax.cond(p, jnp.sin, jnp.cos, a), True, jnp.ones(3))
out["platform"] = jf(a3, 1.0).devices().pop().platform

# lax.platform_dependent takes the cpu branch on the xla_cpu device (JAX chooses by platform
# name), inside a cond too, and jnp's platform-dependent code with it.
dependent = lambda v: lax.platform_dependent(v, cpu=lambda a: a + 1.0, cuda=lambda a: a + 2.0,
                                             default=lambda a: a + 3.0)
out["platform_dependent"] = [
    float(jax.jit(dependent)(2.0)),
    float(jax.jit(lambda v: lax.cond(v > 0, dependent, lambda a: a, v))(2.0)),
    float(jax.jit(lambda v: lax.platform_dependent(v, default=lambda a: a * 4.0))(2.0)),
]
# A branch for pjrtkit itself wins over its cpu branch (also on JAX's cpu device, a multi-platform
# export and in a cond); JAX's cpu device takes the cpu branch.
own = lambda v: lax.platform_dependent(v, cpu=lambda a: a + 1.0, pjrtkit=lambda a: a + 5.0,
                                       default=lambda a: a + 3.0)
both = jax.export.export(jax.jit(own), platforms=["pjrtkit", "cpu"])(
    jax.ShapeDtypeStruct((), jnp.float32))
on_cpu = jax.device_put(jnp.float32(2.0), jax.devices("cpu")[0])
out["platform_dependent_own"] = [
    float(jax.jit(own)(2.0)), float(jax.jit(lambda v: lax.cond(v > 0, own, lambda a: a, v))(2.0)),
    float(jax.jit(own)(on_cpu)), float(both.call(jnp.float32(2.0))), float(both.call(on_cpu))]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results() -> dict:
  return run_python(textwrap.dedent(_CHILD), env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))


def test_runs_on_pjrtkit(results):
  assert results["platform"] == "pjrtkit"


def test_trace_side_effects_once_per_signature_and_compiles_per_signature(results):
  # (trace side effects so far, compiles so far) after each call.
  assert results["signatures"] == {
      "first": [1, 1], "new_values": [1, 1], "new_shape": [2, 2], "new_dtype": [3, 3],
      "old_signature": [3, 3]}
  assert results["value"] == [1.0, 3.0, 5.0]


def test_recompiles_on_static_values_and_pytree_structure_only(results):
  # Compiles after: new values (none), a new static value, a new dict key, a tuple container.
  assert results["static_and_pytree"] == [1, 2, 3, 4]
  assert results["static_value"] == 12.0


def test_python_if_on_a_tracer_raises(results):
  assert results["python_if"] == "TracerBoolConversionError"


def test_where_and_cond_values(results):
  assert results["where"] == [2.0, 0.5, 0.0, 1.5]
  assert results["cond"] == [3.0, 4.0]


def test_only_the_taken_branch_runs(results):
  assert results["cond_counts"] == {"taken": 3, "other": 0}


def test_platform_dependent_takes_the_cpu_branch(results):
  assert results["platform_dependent"] == [3.0, 3.0, 8.0]


def test_platform_dependent_takes_a_pjrtkit_branch_where_one_is_given(results):
  assert results["platform_dependent_own"] == [7.0, 7.0, 3.0, 7.0, 3.0]


def test_cond_under_vmap_is_a_select(results):
  assert results["vmap_cond"] == {"select_n": True, "cond": False, "values": [2.0, 1.0]}


def test_loop_programs_do_not_grow_with_the_trip_count(results):
  sizes = results["sizes"]
  for name in ("scan", "fori_loop", "while_loop"):
    small, large = sizes[name]
    assert abs(large - small) <= 2, (name, sizes)  # Only the literal 10 -> 100 changes.
  small, large = sizes["python"]
  assert large > 5 * small, sizes
  values = results["loop_values"]
  assert values["scan"] == values["fori_loop"] == values["while_loop"] == values["python"]
  want = np.arange(4, dtype=np.int32)
  with np.errstate(over="ignore"):
    c = want.copy()
    for _ in range(20):
      c = c * np.int32(3) + want
  assert values["python"] == c.tolist()


def test_one_padded_executable_serves_many_lengths(results):
  padding = results["padding"]
  assert padding["compiles"] == 1
  assert padding["values"] == padding["unpadded"] == [6, 15, 36, 1]


def test_make_jaxpr_primitives(results):
  assert results["jaxpr_elementwise"] == ["add", "mul", "reduce_sum", "sin"]
  assert results["jaxpr_control"] == ["scan"]  # fori_loop with static bounds is a scan.
  assert results["jaxpr_cond"] == ["cond", "convert_element_type"]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
