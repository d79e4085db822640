"""`standardize_function`: a function and its arguments as a function of its arrays alone.

``pk.benchmarking.standardize_function`` (and ``pk.standardize_function``) with Tokamax's
arguments and modes:

- ``"forward"``: ``f(*args, **kwargs)``.
- ``"forward_res"``: the output of ``jax.vjp(f, ...)``, the forward as a differentiated call runs
  it (pjrtkit's ops: `Op.forward`, with residuals).
- ``"vjp"``: the gradient alone. The forward runs once here and its residuals become constants
  of ``f_std``, whose arguments are the output's cotangents (returned: its own output values).
- ``"forward_and_vjp"``: ``(output, vjp(output))``, forward then gradient in one program, the
  output as its own cotangent, kept apart from the gradient by an optimization barrier.

A gradient is the pullback's result, as in Tokamax: a one-element tuple holding the tuple of the
arrays' cotangents.

``f_std`` takes the arrays as separate arguments, ``f_std(*arrays)`` (pjrtkit's form, which
``compile_benchmark(f_std, arrays)`` uses), or as one sequence, ``f_std(arrays)`` (Tokamax's form,
which ``benchmark(f_std, arrays)`` uses): an array argument is never a list or tuple, so the two
cannot be confused.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import jax
import numpy as np

MODES = ("forward", "forward_res", "vjp", "forward_and_vjp")
"""The modes `standardize_function` takes (Tokamax's)."""


def is_array(x: Any) -> bool:
  """Whether a leaf is an array argument (``jax.Array``, numpy array, ``jax.ShapeDtypeStruct``)."""
  return isinstance(x, (jax.Array, np.ndarray, jax.ShapeDtypeStruct))


@jax.custom_vjp
def _barrier(x: Any) -> Any:
  """``jax.lax.optimization_barrier`` whose gradient is the identity (the forward's output is
  computed in full before the gradient reads it, and the cotangent passes through)."""
  return jax.lax.optimization_barrier(x)


def _barrier_fwd(x: Any) -> tuple[Any, None]:
  return _barrier(x), None


def _barrier_bwd(_: None, cotangent: Any) -> tuple[Any]:
  return (cotangent,)


_barrier.defvjp(_barrier_fwd, _barrier_bwd)


def _two_forms(core: Callable[[tuple[Any, ...]], Any]) -> Callable[..., Any]:
  """``core`` (a function of the tuple of arrays) callable as ``f(*arrays)`` and ``f(arrays)``."""

  def f_std(*arrays: Any) -> Any:
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
      arrays = tuple(arrays[0])
    return core(tuple(arrays))

  return f_std


def _initialize(arrays: list[Any], seed: int | None) -> list[Any]:
  """`arrays` with each ``jax.ShapeDtypeStruct`` replaced by standard normal data of its shape
  and dtype (numpy's generator seeded with `seed`); unchanged for seed None."""
  if seed is None:
    return list(arrays)
  rng = np.random.default_rng(seed)
  out = []
  for x in arrays:
    if isinstance(x, jax.ShapeDtypeStruct):
      x = jax.numpy.asarray(rng.standard_normal(x.shape), x.dtype)
    out.append(x)
  return out


def standardize_function(f: Callable[..., Any], *args: Any,
                         kwargs: Mapping[str, Any] | None = None, mode: str = "forward",
                         seed: int | None = 0) -> tuple[Callable[..., Any], list[Any]]:
  """Turns ``f(*args, **kwargs)`` into ``f_std`` of its array arguments (see the module
  docstring for the modes and the two ways to call ``f_std``).

  Array leaves of `args` and `kwargs` (``jax.Array``, numpy arrays, ``jax.ShapeDtypeStruct``)
  become ``f_std``'s arguments; every other leaf is fixed.

  Args:
    f: a JAX function.
    *args: its positional arguments.
    kwargs: its keyword arguments.
    mode: "forward" (default), "forward_res", "vjp" or "forward_and_vjp".
    seed: seeds the random normal data that replaces each ``jax.ShapeDtypeStruct``; None keeps
      them as they are (``f_std`` can then be lowered, not run; mode "vjp" needs data).

  Returns:
    ``(f_std, arrays)``: the arrays of `args` and `kwargs` in order (mode "vjp": the output's
    cotangents, the forward's output leaves).

  Raises:
    ValueError: for an unknown mode, or mode "vjp" with seed None while an argument is a
      ``jax.ShapeDtypeStruct``.
  """
  if mode not in MODES:
    raise ValueError(f"unknown mode {mode!r}; accepted: {', '.join(MODES)}")
  leaves, tree = jax.tree.flatten((args, dict(kwargs or {})))
  positions = [i for i, x in enumerate(leaves) if is_array(x)]
  arrays = _initialize([leaves[i] for i in positions], seed)

  def forward(arrs: tuple[Any, ...]) -> Any:
    full = list(leaves)
    for i, a in zip(positions, arrs):
      full[i] = a
    a, kw = jax.tree.unflatten(tree, full)
    return f(*a, **kw)

  if mode == "forward":
    return _two_forms(forward), arrays
  if mode == "forward_res":
    return _two_forms(lambda arrs: jax.vjp(forward, arrs)[0]), arrays
  if mode == "forward_and_vjp":

    def forward_and_vjp(arrs: tuple[Any, ...]) -> Any:
      out, pullback = jax.vjp(lambda a: _barrier(forward(a)), arrs)
      return out, pullback(out)

    return _two_forms(forward_and_vjp), arrays
  if any(isinstance(x, jax.ShapeDtypeStruct) for x in arrays):
    raise ValueError("mode='vjp' runs the forward here and needs data: seed=None left "
                     "jax.ShapeDtypeStruct arguments uninitialised")
  out, pullback = jax.vjp(forward, tuple(arrays))
  cotangents, out_tree = jax.tree.flatten(out)
  return _two_forms(lambda arrs: pullback(jax.tree.unflatten(out_tree, list(arrs)))), cotangents
