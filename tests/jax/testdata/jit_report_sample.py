"""A script with known recompiles, for //tests/jax:jit_report_test (see the comment per call)."""

import functools
import sys

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnums=1)
def scale(x, n):
  return x * n


@jax.jit
def total(tree):
  return sum(jnp.sum(v) for v in jax.tree_util.tree_leaves(tree))


def main() -> None:
  a3, a4, i3 = jnp.ones(3), jnp.ones(4), jnp.ones(3, jnp.int32)
  scale(a3, 2)                 # call 1: compile, first call
  scale(a3, 2)                 # call 2: in-memory hit
  scale(a4, 2)                 # call 3: compile, shape f32[3] -> f32[4]
  scale(a4, 3)                 # call 4: compile, static argument n 2 -> 3
  scale(a3, 2)                 # call 5: in-memory hit
  total({"a": a3})             # call 1: compile, first call
  total({"a": a3, "b": a4})    # call 2: compile, tree structure
  total({"a": a3})             # call 3: in-memory hit
  inc = jax.jit(lambda v: v + 1)
  inc(a3)                      # call 1: compile, first call
  inc(i3)                      # call 2: compile, dtype f32[3] -> i32[3]
  inc(a3)                      # call 3: in-memory hit
  bump = jax.jit(lambda v: v - 1)
  bump(1.0)                    # call 1: compile, first call
  bump(jnp.float32(1.0))       # call 2: compile, weak type
  bump(jax.device_put(jnp.float32(1.0), jax.devices()[1]))  # call 3: compile, placement
  print("sample done", sys.argv[1:])


if __name__ == "__main__":
  main()
  sys.exit(3)
