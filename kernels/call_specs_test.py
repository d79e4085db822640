"""Every op folder's ``arg_specs.py``: names unique, tags known; every "ci" call runs on this
device with ``implementation=None`` and agrees with "xla" (the same call); every other call is
checked abstractly (``jax.eval_shape``: shapes and dtypes, nothing allocated)."""

from __future__ import annotations

import sys

import importlib
from pathlib import Path

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import call_specs  # noqa: E402

OPS = sorted(p.parent.name for p in Path(pk.__path__[0]).glob("*/arg_specs.py"))


def _specs(op: str) -> tuple[call_specs.CallSpec, ...]:
  return importlib.import_module(f"pjrtkit.kernels.{op}.arg_specs").CALL_SPECS


def test_every_new_op_has_argument_specs() -> None:
  for op in ("ragged_dot", "gated_linear_unit", "linear_softmax_cross_entropy_loss",
             "triangle_multiplication"):
    assert op in OPS


@pytest.mark.parametrize("op", OPS)
def test_names_are_unique_and_every_call_is_tagged(op: str) -> None:
  specs = _specs(op)
  names = [s.name for s in specs]
  assert len(names) == len(set(names)), names
  assert all(s.tags for s in specs)
  assert call_specs.tagged(specs, "ci"), f"{op} has no 'ci' call"
  with pytest.raises(KeyError, match="no call spec 'nope'"):
    call_specs.by_name(specs, "nope")


@pytest.mark.parametrize("op", OPS)
def test_ci_calls_run_and_agree_with_xla(op: str) -> None:
  fn = getattr(pk, op)
  for spec in call_specs.tagged(_specs(op), "ci"):
    args, kwargs = spec.arguments(0)
    got = jax.jit(lambda *a: fn(*a, **kwargs, implementation=None))(*args)
    want = jax.jit(lambda *a: fn(*a, **kwargs, implementation="xla"))(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
      testing.assert_close(g, w, str(w.dtype), "fwd")


@pytest.mark.parametrize("op", OPS)
def test_other_calls_have_valid_shapes(op: str) -> None:
  """Traced abstractly: the arguments are built and the op called inside ``jax.eval_shape``."""
  fn = getattr(pk, op)
  for spec in _specs(op):
    if "ci" in spec.tags:
      continue

    def call(spec=spec):
      args, kwargs = spec.arguments(0)
      return fn(*args, **kwargs)

    out = jax.eval_shape(call)
    assert all(leaf.size >= 1 for leaf in jax.tree.leaves(out)), (op, spec.name)


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
