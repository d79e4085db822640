"""Rules registered for ``cpu`` after ``initialize()`` lower on pjrtkit's CPU device too.

``_rule_table.FollowingRules`` (pjrtkit's lowering-rule table follows cpu's) and
``_callback_rules.follow_emit_python_callback`` (a rule that calls JAX's ``emit_python_callback``
lowers for pjrtkit as for cpu), each checked in a child against jaxlib's cpu backend: a
library's own primitive, ``jax.experimental.sparse.linalg.spsolve`` (its cpu rule is a host
callback to SciPy, registered when the module is imported), and the table's rules in-process.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_PRELUDE = """
import json
import numpy as np
import jax, jax.numpy as jnp
from jax._src import core, dispatch
from jax.interpreters import mlir
x = jnp.arange(3, dtype=jnp.float32)   # Creates the backends: initialize() has run.
cpu_x = jax.device_put(np.arange(3, dtype=np.float32), jax.devices("cpu")[0])
def primitive(name):
  p = core.Primitive(name)
  p.def_abstract_eval(lambda v: v)
  dispatch.simple_impl(p)
  return p
def on_both(fn):
  got = jax.jit(fn)(x)
  return {"pjrtkit": got.tolist(), "platform": got.devices().pop().platform,
          "cpu": jax.jit(fn)(cpu_x).tolist()}
"""


def _run(code: str) -> dict:
  return run_python(_PRELUDE + textwrap.dedent(code), env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))


def test_a_cpu_rule_registered_later_lowers_on_pjrtkit_and_pjrtkit_rules_win():
  got = _run("""
      double = primitive("pjrtkit_test_double")
      mlir.register_lowering(double, mlir.lower_fun(lambda v: v * 2, multiple_results=False),
                             platform="cpu")
      both = primitive("pjrtkit_test_both")
      mlir.register_lowering(both, mlir.lower_fun(lambda v: v * 2, multiple_results=False),
                             platform="cpu")
      mlir.register_lowering(both, mlir.lower_fun(lambda v: v * 3, multiple_results=False),
                             platform="pjrtkit")
      absent = primitive("pjrtkit_test_cuda_only")
      mlir.register_lowering(absent, mlir.lower_fun(lambda v: v, multiple_results=False),
                             platform="cuda")
      try:
        jax.jit(absent.bind)(x)
        missing = None
      except NotImplementedError as e:
        missing = str(e)
      print(json.dumps({"double": on_both(double.bind), "both": on_both(both.bind),
                        "missing": missing}))
  """)
  assert got["double"] == {"pjrtkit": [0.0, 2.0, 4.0], "platform": "pjrtkit",
                           "cpu": [0.0, 2.0, 4.0]}
  assert got["both"] == {"pjrtkit": [0.0, 3.0, 6.0], "platform": "pjrtkit",
                         "cpu": [0.0, 2.0, 4.0]}
  assert got["missing"] == ("MLIR translation rule for primitive 'pjrtkit_test_cuda_only' not "
                            "found for platform pjrtkit")


def test_a_cpu_rule_registered_again_after_initialize_replaces_the_copy():
  got = run_python("""
      import json
      import jax, jax.numpy as jnp
      from jax._src import core, dispatch
      from jax.interpreters import mlir
      p = core.Primitive("pjrtkit_test_again")
      p.def_abstract_eval(lambda v: v)
      dispatch.simple_impl(p)
      mlir.register_lowering(p, mlir.lower_fun(lambda v: v * 2, multiple_results=False),
                             platform="cpu")
      x = jnp.arange(3, dtype=jnp.float32)   # initialize() copies the cpu rule: v * 2.
      before = jax.jit(p.bind)(x).tolist()
      mlir.register_lowering(p, mlir.lower_fun(lambda v: v * 5, multiple_results=False),
                             platform="cpu")
      print(json.dumps({"before": before, "after": jax.jit(p.bind)(x).tolist()}))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))
  assert got == {"before": [0.0, 2.0, 4.0], "after": [0.0, 5.0, 10.0]}


def test_a_rule_emitting_a_python_callback_runs_on_pjrtkit():
  got = _run("""
      from jax._src import callback as cb
      calls = []
      def plus_one(v):
        calls.append(np.asarray(v).tolist())
        return (np.asarray(v) + 1,)
      def rule(ctx, v):
        out, _, _ = cb.emit_python_callback(ctx, plus_one, None, [v], ctx.avals_in,
                                            ctx.avals_out, has_side_effect=False,
                                            returns_token=False)
        return out
      generic = primitive("pjrtkit_test_callback")
      mlir.register_lowering(generic, rule)
      cpu_only = primitive("pjrtkit_test_cpu_callback")   # As jax.experimental.sparse does.
      mlir.register_lowering(cpu_only, lambda ctx, v: mlir.emit_python_callback(
          ctx, plus_one, None, [v], ctx.avals_in, ctx.avals_out, has_side_effect=False,
          returns_token=False)[0], platform="cpu")
      print(json.dumps({"generic": on_both(generic.bind), "cpu_only": on_both(cpu_only.bind),
                        "calls": calls}))
  """)
  expected = {"pjrtkit": [1.0, 2.0, 3.0], "platform": "pjrtkit", "cpu": [1.0, 2.0, 3.0]}
  assert got["generic"] == expected
  assert got["cpu_only"] == expected
  assert got["calls"] == [[0.0, 1.0, 2.0]] * 4


def test_sparse_spsolve_imported_after_initialize_matches_scipy():
  got = _run("""
      import scipy.sparse, scipy.sparse.linalg
      from jax.experimental.sparse import linalg as sparse_linalg
      a = (scipy.sparse.random(6, 6, density=0.4, random_state=0, format="csr")
           + 4 * scipy.sparse.eye(6)).tocsr().astype(np.float32)
      b = np.arange(1, 7, dtype=np.float32)
      got = sparse_linalg.spsolve(jnp.asarray(a.data), jnp.asarray(a.indices),
                                  jnp.asarray(a.indptr), jnp.asarray(b))
      want = scipy.sparse.linalg.spsolve(a, b)
      print(json.dumps({"platform": got.devices().pop().platform,
                        "err": float(np.max(np.abs(np.asarray(got) - want))),
                        "scale": float(np.max(np.abs(want)))}))
  """)
  assert got["platform"] == "pjrtkit"
  # The same SciPy solve on the host, in float32: equal to float32 rounding.
  assert got["err"] <= 1e-6 * got["scale"]


class _Entry:
  """A stand-in for JAX's LoweringRuleEntry (rule, inline)."""

  def __init__(self, rule, inline):
    self.rule, self.inline = rule, inline


class _Prim:

  def __init__(self, name):
    self.name = name


def test_following_rules_lookup_order_skip_and_rewrap():
  from jax_plugins.pjrtkit import _rule_table

  mine, theirs, skipped, other = _Prim("mine"), _Prim("theirs"), _Prim("debug_print"), _Prim("x")
  source = {theirs: _Entry("cpu_theirs", False), skipped: _Entry("cpu_print", True),
            mine: _Entry("cpu_mine", True)}
  wraps = []
  table = _rule_table.FollowingRules({mine: _Entry("own_mine", True)}, source,
                                     skip={"debug_print"},
                                     wrap=lambda rule: wraps.append(rule) or f"wrapped {rule}")
  assert table[mine].rule == "own_mine"
  assert table[theirs].rule == "wrapped cpu_theirs" and table[theirs].inline is False
  assert theirs in table and skipped not in table and other not in table
  assert table.get(other, "none") == "none" and table.get(skipped) is None
  with pytest.raises(KeyError):
    table[skipped]  # pylint: disable=pointless-statement
  assert wraps == ["cpu_theirs"]  # Wrapped once, however often it is looked up.
  source[theirs] = _Entry("cpu_theirs_again", True)  # Registered again for the source.
  assert table[theirs].rule == "wrapped cpu_theirs_again"
  assert dict(table) == {mine: table[mine]}  # Its own items are only its own.
  # An own entry holding the source's current rule itself (JAX's "gpu" alias writes one) reads
  # as the source's, wrapped.
  dict.__setitem__(table, theirs, _Entry("cpu_theirs_again", True))
  assert table[theirs].rule == "wrapped cpu_theirs_again"


def test_follow_replaces_the_table_and_undo_puts_it_back():
  from jax._src.interpreters import mlir
  from jax_plugins.pjrtkit import _rule_table

  table = mlir._platform_specific_lowerings  # pylint: disable=protected-access
  before = table.get("pjrtkit_test_platform")
  cpu_primitive, cpu_entry = next(iter(table["cpu"].items()))
  own_primitive, own_entry = object(), _Entry("own", True)
  table["pjrtkit_test_platform"] = {cpu_primitive: cpu_entry, own_primitive: own_entry}
  undo = _rule_table.follow("pjrtkit_test_platform", "cpu")
  following = table["pjrtkit_test_platform"]
  assert isinstance(following, _rule_table.FollowingRules)
  # The copy of cpu's rule is dropped (followed instead), the platform's own entry kept.
  assert dict(following) == {own_primitive: own_entry}
  assert following[cpu_primitive].rule is cpu_entry.rule  # Followed (wrap is the identity).
  assert following.source is table["cpu"]
  assert len(table["cpu"]) > 0 and all(p in following for p in table["cpu"])
  undo()
  assert table["pjrtkit_test_platform"] == {cpu_primitive: cpu_entry, own_primitive: own_entry}
  if before is None:
    del table["pjrtkit_test_platform"]
  else:
    table["pjrtkit_test_platform"] = before


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
