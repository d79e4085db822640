"""ragged_dot: every CPU implementation against the float64 row-by-row definition
(`base.reference`) and against ``jax.lax.ragged_dot_general``; argument checks; the schedule;
autotuning with representative group sizes; export. "native" (pjrtkit's CPU device only; skipped
elsewhere) also on shapes that cross its tiles, its output dtypes and epilogues, and its
refusals.

Tolerances: `pjrtkit.kernels.testing.TOLERANCES`. Tokamax parity: ``kernels/tokamax_parity_test.py``.
"""

from __future__ import annotations

import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import markers  # noqa: E402
from pjrtkit.kernels.core.device import DeviceInfo  # noqa: E402
from pjrtkit.kernels.ragged_dot import api, base, schedule, xla  # noqa: E402
from pjrtkit.kernels.ragged_dot.triton import TritonRaggedDot  # noqa: E402
from pjrtkit.kernels.ragged_dot.xla_grouped import GroupedConfig  # noqa: E402

_float32 = pytest.fixture(autouse=True)(testing.full_float32_products)

CPU_IMPLEMENTATIONS = ("xla", "xla_grouped", "native")
CASES = [  # (m, k, n, sizes, tile): rows that span tiles, tiles shared by groups, empty groups
    (70, 24, 20, (0, 33, 1, 0, 30), 16),   # leading / inner empty groups, 6 rows past the sum
    (64, 16, 8, (64,), 16),                # one group over every tile
    (40, 8, 12, (3, 3, 3, 3, 3, 3, 3), 8),  # many small groups in one tile
    (5, 4, 6, (0, 0, 0), 8),               # every group empty: all zeros
]


def _operands(case: int, dtype: str, transposed: bool = False):
  m, k, n, sizes, _ = CASES[case]
  rng = np.random.default_rng(case)
  lhs = jnp.asarray(rng.standard_normal((m, k)), dtype)
  rhs = jnp.asarray(rng.standard_normal((len(sizes), k, n)) * 0.5, dtype)
  if transposed:
    rhs = jnp.swapaxes(rhs, 1, 2)
  return lhs, rhs, jnp.asarray(sizes, jnp.int32)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("impl", CPU_IMPLEMENTATIONS)
def test_forward_and_gradient_match_the_definition(impl: str, case: int, dtype: str) -> None:
  testing.skip_unless_runnable(impl)
  lhs, rhs, gs = _operands(case, dtype)
  spec, _ = base.make_spec(lhs, rhs, gs, base.DEFAULT_RAGGED_DOT_DIM_NUMS, None, None, None,
                           None, False, None)
  implementation = api.FAMILY.implementations[impl]
  # The grouped loop with the case's small tile, so tiles are shared and spanned.
  cfg = GroupedConfig(CASES[case][4]) if impl == "xla_grouped" else \
      implementation.default_config(spec)
  out, res = jax.jit(lambda a, b: implementation.forward((a, b, gs, None), spec, cfg))(lhs, rhs)
  testing.assert_close(out, base.reference(lhs, rhs, gs), dtype, "fwd")
  assert out.dtype == jnp.dtype(dtype)
  dout = jnp.asarray(np.random.default_rng(9).standard_normal(out.shape), dtype)
  dlhs, drhs, _, _ = jax.jit(lambda r, d: implementation.backward(r, d, spec, cfg))(res, dout)
  f = lambda a, b: jax.lax.ragged_dot(a.astype(jnp.float32), b.astype(jnp.float32), gs,  # noqa
                                      precision=jax.lax.Precision.HIGHEST)
  _, vjp = jax.vjp(f, lhs, rhs)
  want_l, want_r = vjp(dout.astype(jnp.float32))
  testing.assert_close(dlhs, want_l, dtype, "grad")
  testing.assert_close(drhs, want_r, dtype, "grad")
  # Through the public function (custom VJP, choice): the same values.
  got = pk.ragged_dot(lhs, rhs, gs, implementation=impl)
  testing.assert_close(got, base.reference(lhs, rhs, gs), dtype, "fwd")


@pytest.mark.parametrize("impl", CPU_IMPLEMENTATIONS)
def test_rhs_laid_out_g_n_k(impl: str) -> None:
  testing.skip_unless_runnable(impl)
  lhs, rhs_t, gs = _operands(0, "float32", transposed=True)
  dn = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [2]), ([], [])),
                                         lhs_ragged_dimensions=[0], rhs_group_dimensions=[0])
  got = pk.ragged_dot_general(lhs, rhs_t, gs, dn, implementation=impl)
  testing.assert_close(got, base.reference(lhs, jnp.swapaxes(rhs_t, 1, 2), gs), "float32", "fwd")
  loss = lambda a, b: jnp.sum(jnp.sin(pk.ragged_dot_general(a, b, gs, dn, implementation=impl)))
  want = jax.grad(lambda a, b: jnp.sum(jnp.sin(jax.lax.ragged_dot_general(
      a, b, gs, dn, precision=jax.lax.Precision.HIGHEST))), (0, 1))(lhs, rhs_t)
  for g, w in zip(jax.grad(loss, (0, 1))(lhs, rhs_t), want):
    testing.assert_close(g, w, "float32", "grad")


@pytest.mark.parametrize("impl", CPU_IMPLEMENTATIONS)
def test_group_offset_uses_the_local_groups_and_zeroes_the_rest(impl: str) -> None:
  testing.skip_unless_runnable(impl)
  lhs, rhs, gs = _operands(0, "float32")  # 5 groups: rhs keeps groups 1..3
  local = rhs[1:4]
  off = jnp.asarray([1], jnp.int32)
  f = lambda a, b: pk.ragged_dot(a, b, gs, group_offset=off, implementation=impl)  # noqa: E731
  got = jax.jit(f)(lhs, local)
  want = base.reference(lhs, local, gs, group_offset=1)
  testing.assert_close(got, want, "float32", "fwd")
  assert not np.any(np.asarray(got)[:0])  # rows of group 0: none (size 0)
  np.testing.assert_array_equal(np.asarray(got)[34:], 0.0)  # group 4 and past the sum: zero
  # Gradient: rows of non-local groups get none; the dense definition differentiated by JAX.
  full = jnp.concatenate([jnp.zeros_like(rhs[:1]), local, jnp.zeros_like(rhs[:1])])
  dense = lambda a, b: jax.lax.ragged_dot(  # noqa: E731
      a, jnp.concatenate([full[:1], b, full[4:]]), gs, precision=jax.lax.Precision.HIGHEST)
  want = jax.grad(lambda a, b: jnp.sum(jnp.sin(dense(a, b))), (0, 1))(lhs, local)
  got = jax.grad(lambda a, b: jnp.sum(jnp.sin(f(a, b))), (0, 1))(lhs, local)
  for g, w in zip(got, want):
    testing.assert_close(g, w, "float32", "grad")


def test_group_sizes_as_a_sequence_and_as_group_sizes() -> None:
  lhs, rhs, gs = _operands(0, "float32")
  want = pk.ragged_dot(lhs, rhs, gs)
  got = pk.ragged_dot(lhs, rhs, list(CASES[0][3]))
  np.testing.assert_array_equal(got, want)
  rep = pk.RaggedDotGroupSizes(gs, CASES[0][3])
  np.testing.assert_array_equal(pk.ragged_dot(lhs, rhs, rep), want)
  abstract = pk.RaggedDotGroupSizes(jax.ShapeDtypeStruct((5,), jnp.int32), 64)
  assert sum(abstract.representative_value) == 64 and abstract.value.shape == (5,)


def test_preferred_element_type_precision_and_integers() -> None:
  lhs, rhs, gs = _operands(0, "bfloat16")
  out = pk.ragged_dot(lhs, rhs, gs, preferred_element_type=jnp.float32)
  assert out.dtype == jnp.float32
  testing.assert_close(out, base.reference(lhs, rhs, gs), "float32", "grad")
  hi = pk.ragged_dot(lhs.astype(jnp.float32), rhs.astype(jnp.float32), gs,
                     precision=jax.lax.Precision.HIGHEST)
  testing.assert_close(hi, base.reference(lhs, rhs, gs), "float32", "fwd")
  ints = pk.ragged_dot(jnp.ones((6, 3), jnp.int8), jnp.ones((2, 3, 4), jnp.int8),
                       jnp.asarray([2, 3], jnp.int32), preferred_element_type=jnp.int32)
  np.testing.assert_array_equal(ints, np.array([[3] * 4] * 5 + [[0] * 4], np.int32))


def test_schedule_lists_each_group_tile_pair_once() -> None:
  sizes = jnp.asarray([0, 5, 0, 20, 3, 0], jnp.int32)
  s = jax.jit(lambda g: schedule.make(g, None, 6, 40, 8))(sizes)
  count = int(s.count)
  items = list(zip(np.asarray(s.group)[:count], np.asarray(s.tile)[:count],
                   np.asarray(s.row_lo)[:count], np.asarray(s.row_hi)[:count]))
  # group 1 rows [0, 5) tile 0; group 3 rows [5, 25) tiles 0-3; group 4 rows [25, 28) tile 3.
  assert items == [(1, 0, 0, 5), (3, 0, 5, 25), (3, 1, 5, 25), (3, 2, 5, 25), (3, 3, 5, 25),
                   (4, 3, 25, 28)]
  assert schedule.max_items(40, 6, 8) == 10 and len(s.group) == 10
  assert np.all(np.asarray(s.row_lo)[count:] == np.asarray(s.row_hi)[count:])  # padding: no rows


@pytest.mark.parametrize("kwargs, error, match", [
    ({"lhs": "x"}, TypeError, "lhs must be an array"),
    ({"group_sizes": jnp.ones((3,), jnp.float32)}, TypeError, "group_sizes must be a 1-D integer"),
    ({"group_sizes": jnp.ones((4,), jnp.int32)}, ValueError, "group_sizes has 4 groups but rhs"),
    ({"rhs": jnp.ones((3, 5, 2))}, ValueError, "lhs dimension 1 .4. does not match rhs dimension 1"),
    ({"group_offset": jnp.ones((2,), jnp.int32)}, TypeError, "group_offset must be an integer"),
    ({"fuse_gateup_activation": "relu"}, ValueError, "fuse_gateup_activation must be one of"),
    ({"activation": 3}, TypeError, "activation must be a callable"),
    ({"precision": "fast"}, ValueError, "precision must be None"),
    ({"preferred_element_type": "nope"}, TypeError, "preferred_element_type must be None or a"),
    ({"preferred_element_type": jnp.bool_}, TypeError, "preferred_element_type must be a float"),
    ({"group_sizes": jnp.ones((2, 3), jnp.int32)}, TypeError, "batched group sizes"),
    ({"implementation": "pallas"}, ValueError, "unknown implementation='pallas'; accepted: 'xla'"),
    ({"manual_axis_type": "x"}, ValueError, "manual_axis_type is not supported"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, match) -> None:
  args = {"lhs": jnp.ones((6, 4)), "rhs": jnp.ones((3, 4, 2)),
          "group_sizes": jnp.asarray([1, 2, 3], jnp.int32)}
  call = {k: kwargs.pop(k) for k in list(kwargs) if k in args}
  args.update(call)
  with pytest.raises(error, match=match):
    pk.ragged_dot(args["lhs"], args["rhs"], args["group_sizes"], **kwargs)


def test_bad_dimension_numbers_are_refused() -> None:
  lhs, rhs, gs = jnp.ones((6, 4)), jnp.ones((3, 4, 2)), jnp.asarray([1, 2, 3], jnp.int32)
  no_group = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [1]), ([], [])),
                                               lhs_ragged_dimensions=[0], rhs_group_dimensions=[])
  with pytest.raises(ValueError, match="needs an rhs group dimension"):
    pk.ragged_dot_general(lhs, rhs, gs, no_group)
  with pytest.raises(TypeError, match="must be a jax.lax.RaggedDotDimensionNumbers"):
    pk.ragged_dot_general(lhs, rhs, gs, ((([1], [1]), ([], []))))
  with pytest.raises(pk.UnsupportedImplementationError, match="only lhs .m, k. with rhs"):
    dn = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([0], [0]), ([], [])),
                                           lhs_ragged_dimensions=[0], rhs_group_dimensions=[])
    pk.ragged_dot_general(jnp.ones((6, 4)), jnp.ones((6, 5)), gs, dn,
                          implementation="xla_grouped")


def test_rule_takes_native_on_the_cpu_device_triton_on_a_gpu_else_the_grouped_loop() -> None:
  lhs, rhs, gs = _operands(0, "float32")
  f = jax.jit(jax.value_and_grad(lambda a, b: jnp.sum(pk.ragged_dot(a, b, gs)), (0, 1)))
  calls = pk.find_kernel_calls(f, lhs, rhs)
  assert {(c.phase, c.requested) for c in calls} == {("fwd", markers.AUTO), ("bwd", markers.AUTO)}
  dev = pk.current_device()
  chosen = api.FAMILY.choose(calls[0].spec, None, "fwd", dev)
  first = "native" if dev.is_pjrtkit_cpu else ("triton" if dev.is_gpu else "xla_grouped")
  assert chosen.op.implementation == first
  # float16 is not native's: the grouped loop takes it (the Triton kernels on a GPU).
  half, _ = base.make_spec(lhs.astype(jnp.float16), rhs.astype(jnp.float16), gs,
                           base.DEFAULT_RAGGED_DOT_DIM_NUMS, None, None, None, None, False, None)
  assert api.FAMILY.choose(half, None, "bwd", dev).op.implementation == (
      "triton" if dev.is_gpu else "xla_grouped")


def test_autotune_uses_representative_group_sizes_and_export_round_trips() -> None:
  lhs, rhs, gs = _operands(0, "float32")
  rep = pk.RaggedDotGroupSizes(gs, CASES[0][3])
  f = jax.jit(lambda a, b: pk.ragged_dot(a, b, rep))
  result = pk.autotune(f, lhs, rhs, iterations=1)
  (choice,) = [c for c in result.choices if c.phase == "fwd"]
  assert choice.implementation in CPU_IMPLEMENTATIONS
  assert choice.spec.param("representative") == "[0,33,1,0,30]"
  with result:
    tuned = f(lhs, rhs)
  testing.assert_close(tuned, base.reference(lhs, rhs, gs), "float32", "fwd")
  g = jax.jit(lambda a, b, s: pk.ragged_dot(a, b, s))
  exported = jax.export.export(g, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)(
      *(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in (lhs, rhs, gs)))
  back = jax.export.deserialize(exported.serialize())
  np.testing.assert_array_equal(back.call(lhs, rhs, gs), g(lhs, rhs, gs))


def test_vmap_over_a_batch_of_token_sets() -> None:
  lhs, rhs, gs = _operands(0, "float32")
  batch = jnp.stack([lhs, lhs * 2])
  got = jax.vmap(lambda a: pk.ragged_dot(a, rhs, gs))(batch)
  testing.assert_close(got[1], 2 * base.reference(lhs, rhs, gs), "float32", "fwd")


@pytest.mark.parametrize("impl", CPU_IMPLEMENTATIONS + (None,))
def test_negative_group_sizes_refused_when_concrete_read_as_zero_when_traced(impl) -> None:
  """Concrete sizes (a sequence, numpy, a jax.Array, RaggedDotGroupSizes) with a negative entry
  are a ValueError naming group_sizes; traced ones are read with the entry as 0 by every
  implementation ("xla" included, where ``jax.lax.ragged_dot`` alone gives other values)."""
  testing.skip_unless_runnable(impl)
  rng = np.random.default_rng(0)
  lhs = jnp.asarray(rng.standard_normal((50, 12)), jnp.float32)
  rhs = jnp.asarray(rng.standard_normal((4, 12, 7)), jnp.float32)
  sizes = [-5, 30, 10, 10]
  for gs in (sizes, np.asarray(sizes, np.int32), jnp.asarray(sizes, jnp.int32),
             pk.RaggedDotGroupSizes(jnp.asarray(sizes, jnp.int32), 45)):
    with pytest.raises(ValueError, match=r"ragged_dot: group_sizes must hold sizes >= 0 \(the "
                       r"number of rows of each group\), got group_sizes\[0\] = -5 in "
                       r"\[-5, 30, 10, 10\]"):
      pk.ragged_dot(lhs, rhs, gs, implementation=impl)
  f = lambda a, b, s: pk.ragged_dot(a, b, s, implementation=impl)  # noqa: E731
  grad = jax.jit(jax.grad(lambda a, b, s: jnp.sum(jnp.sin(f(a, b, s))), (0, 1)))
  traced, zeroed = (jnp.asarray(s, jnp.int32) for s in (sizes, [0, 30, 10, 10]))
  np.testing.assert_array_equal(jax.jit(f)(lhs, rhs, traced), jax.jit(f)(lhs, rhs, zeroed))
  for a, b in zip(grad(lhs, rhs, traced), grad(lhs, rhs, zeroed)):
    np.testing.assert_array_equal(a, b)
  testing.assert_close(jax.jit(f)(lhs, rhs, traced), base.reference(lhs, rhs, [0, 30, 10, 10]),
                       "float32", "fwd")
  # The contracting mode (ragged_dot_general, rhs [m, n]; "xla" serves it): the same rule.
  dn = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([0], [0]), ([], [])),
                                         lhs_ragged_dimensions=[0], rhs_group_dimensions=[])
  if impl in ("xla", None):
    y = lhs[:, :5] * 0.5
    with pytest.raises(ValueError, match=r"group_sizes\[0\] = -5"):
      pk.ragged_dot_general(lhs, y, np.asarray(sizes), dn, implementation=impl)
    g = jax.jit(lambda s: pk.ragged_dot_general(lhs, y, s, dn, implementation=impl))
    np.testing.assert_array_equal(g(traced), g(zeroed))


@pytest.mark.parametrize("lhs_shape, rhs_shape, dn", [
    # lhs [m, k, x]: a second non-contracting lhs dimension.
    ((12, 4, 3), (3, 4, 5), (([1], [1]), ([], []))),
    # rhs [g, k, n, y]: a second output dimension of rhs.
    ((12, 4), (3, 4, 5, 2), (([1], [1]), ([], []))),
])
def test_layouts_past_the_grouped_kernels_go_to_xla(lhs_shape, rhs_shape, dn) -> None:
  rng = np.random.default_rng(3)
  lhs = jnp.asarray(rng.standard_normal(lhs_shape), jnp.float32)
  rhs = jnp.asarray(rng.standard_normal(rhs_shape), jnp.float32)
  gs = jnp.asarray([5, 0, 4], jnp.int32)
  dn = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=dn, lhs_ragged_dimensions=[0],
                                         rhs_group_dimensions=[0])
  spec, _ = base.make_spec(lhs, rhs, gs, dn, None, None, None, None, False, None)
  assert not base.dims_of(spec).is_plain
  with pytest.raises(pk.UnsupportedImplementationError, match="only lhs .m, k. with rhs"):
    pk.ragged_dot_general(lhs, rhs, gs, dn, implementation="xla_grouped")
  h200 = DeviceInfo("cuda", "NVIDIA H200", (9, 0))
  assert "only lhs [m, k] with rhs" in TritonRaggedDot().unsupported_reason(spec, h200)
  assert api.rule(spec, h200, "fwd")[0] == "triton"  # the rule lists it; the choice skips it
  assert api.FAMILY.choose(spec, None, "fwd", h200).op.implementation == "xla"
  want = jax.lax.ragged_dot_general(lhs, rhs, gs, dn, precision=jax.lax.Precision.HIGHEST)
  got = pk.ragged_dot_general(lhs, rhs, gs, dn)
  assert got.shape == want.shape
  testing.assert_close(got, want, "float32", "fwd")


@pytest.mark.parametrize("lhs_shape, rhs_shape, dn, ragged, group", [
    ((12, 4), (3, 4, 5), (([1], [1]), ([], [])), 0, 0),
    ((12, 4, 3), (3, 4, 5), (([1], [1]), ([], [])), 0, 0),
    ((12, 4), (3, 4, 5, 2), (([1], [1]), ([], [])), 0, 0),
    ((4, 12), (5, 3, 4), (([0], [2]), ([], [])), 1, 1),  # lhs [k, m], rhs [n, g, k]
    ((2, 12, 4), (2, 3, 4, 5), (([2], [2]), ([0], [0])), 1, 1),  # a batch dimension in front
])
@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_masked_rows_product_matches_ragged_dot(lhs_shape, rhs_shape, dn, ragged, group,
                                                dtype) -> None:
  """The form "xla" takes on a GPU for integer operands and for calls without groups (XLA:GPU
  sums every group's matrix into each row of an integer ragged_dot, and cannot lower one with no
  groups) equals ``jax.lax.ragged_dot_general`` on JAX's CPU backend, where that one is right;
  and "xla" itself serves both kinds of call on the device under test."""
  rng = np.random.default_rng(5)
  lhs = jnp.asarray(rng.integers(-3, 4, lhs_shape), dtype)
  rhs = jnp.asarray(rng.integers(-3, 4, rhs_shape), dtype)
  gs = jnp.asarray([5, 0, 4], jnp.int32)  # 3 rows past the last group
  dn = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=dn,
                                         lhs_ragged_dimensions=[ragged],
                                         rhs_group_dimensions=[group])
  acc = jnp.int32 if dtype == "int8" else jnp.float32
  spec, _ = base.make_spec(lhs, rhs, gs, dn, None, acc, None, None, False, None)
  cpu = jax.devices("cpu")[0]  # JAX's own CPU backend, where jax.lax gets integers right
  want = jax.jit(lambda a, b, g: jax.lax.ragged_dot_general(
      a, b, g, dn, preferred_element_type=acc, precision=jax.lax.Precision.HIGHEST))(
          *jax.device_put((lhs, rhs, gs), cpu))
  with jax.default_matmul_precision("highest"):
    got = xla.masked_rows_product(lhs, rhs, gs, spec)
  assert got.dtype == want.dtype
  np.testing.assert_array_equal(got, want)  # small integers: exact in float32 too
  served = pk.ragged_dot_general(lhs, rhs, gs, dn, preferred_element_type=acc,
                                 implementation="xla")
  np.testing.assert_array_equal(served, want)
  empty = jnp.zeros(rhs.shape[:group] + (0,) + rhs.shape[group + 1:], dtype)
  none = pk.ragged_dot_general(lhs, empty, jnp.zeros((0,), jnp.int32), dn,
                               preferred_element_type=acc, implementation="xla")
  np.testing.assert_array_equal(none, np.zeros(want.shape, want.dtype))


@pytest.mark.parametrize("impl", ("xla", "xla_grouped", "native", None))
def test_rows_outside_every_group_get_the_activation_of_zero(impl) -> None:
  testing.skip_unless_runnable(impl)
  lhs, rhs, gs = _operands(0, "float32")  # rows 64..69 past the sum
  got = np.asarray(pk.ragged_dot(lhs, rhs, gs, activation=jax.nn.sigmoid,
                                 implementation=impl))
  want = 1 / (1 + np.exp(-base.reference(lhs, rhs, gs)))
  testing.assert_close(got, want, "float32", "fwd")
  np.testing.assert_array_equal(got[64:], 0.5)
  # With group_offset: rows of the groups rhs does not hold too (group 0 is empty, group 4 is
  # rows 34..63).
  off = jnp.asarray([1], jnp.int32)
  got = np.asarray(pk.ragged_dot(lhs, rhs[1:4], gs, group_offset=off, activation=jax.nn.sigmoid,
                                 implementation=impl))
  np.testing.assert_array_equal(got[34:], 0.5)


@pytest.mark.parametrize("impl", ("xla", None))
def test_no_groups_and_no_rows(impl) -> None:
  lhs = jnp.ones((6, 4), jnp.float32)
  out = pk.ragged_dot(lhs, jnp.ones((0, 4, 3)), jnp.zeros((0,), jnp.int32), implementation=impl)
  np.testing.assert_array_equal(out, np.zeros((6, 3), np.float32))
  out = pk.ragged_dot(jnp.ones((0, 4)), jnp.ones((2, 4, 3)), jnp.zeros((2,), jnp.int32),
                      implementation=impl)
  assert out.shape == (0, 3)
  # rhs holds no local groups of two.
  out = pk.ragged_dot(lhs, jnp.ones((0, 4, 3)), jnp.asarray([2, 4], jnp.int32),
                      group_offset=jnp.asarray([1], jnp.int32), implementation=impl)
  np.testing.assert_array_equal(out, np.zeros((6, 3), np.float32))
  with pytest.raises(pk.UnsupportedImplementationError, match="an empty operand"):
    pk.ragged_dot(lhs, jnp.ones((0, 4, 3)), jnp.zeros((0,), jnp.int32),
                  implementation="xla_grouped")


@pytest.mark.parametrize("impl", CPU_IMPLEMENTATIONS)
@pytest.mark.parametrize("offset, clamped", [(7, 2), (-3, 0)])
def test_group_offset_out_of_range_is_clamped(impl, offset, clamped) -> None:
  testing.skip_unless_runnable(impl)
  lhs, rhs, gs = _operands(0, "float32")  # 5 groups, rhs keeps 3 of them
  local = rhs[1:4]
  got = pk.ragged_dot(lhs, local, gs, group_offset=jnp.asarray([offset], jnp.int32),
                      implementation=impl)
  testing.assert_close(got, base.reference(lhs, local, gs, group_offset=clamped), "float32",
                       "fwd")


# Native: shapes crossing its tiles (row chunks of up to 384 rows, contraction blocks of 256,
# column tiles of up to 256, register tiles of 12 x 32 with AVX-512, 6 x 16 with AVX2), uneven
# and empty groups, rows past the last group.
NATIVE_CASES = [  # (m, k, n, sizes)
    (900, 300, 530, (0, 410, 3, 0, 400, 7)),    # 80 rows past the sum; leading and inner empties
    (97, 513, 33, (97,)),                       # one group, contraction of 3 blocks
    (40, 7, 5, (1, 0, 38, 1)),                  # narrower than a vector, one-row groups
    (260, 64, 96, (0, 0, 0, 0)),                # every group empty: zero product, zero drhs
]


def _grads(impl: str, lhs, rhs, gs, dn=base.DEFAULT_RAGGED_DOT_DIM_NUMS, **kwargs):
  f = lambda a, b: pk.ragged_dot_general(a, b, gs, dn, implementation=impl, **kwargs)  # noqa
  loss = lambda a, b: jnp.sum(jnp.sin(f(a, b).astype(jnp.float32)))  # noqa: E731
  return jax.jit(f)(lhs, rhs), jax.jit(jax.grad(loss, (0, 1)))(lhs, rhs)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", NATIVE_CASES)
def test_native_values_and_gradients_match_xla(case, dtype: str, transposed: bool) -> None:
  """Against "xla" (tolerances: `testing.TOLERANCES`, relative to the largest value) and the
  float64 definition; rhs ``[g, k, n]`` and ``[g, n, k]``."""
  testing.skip_unless_runnable("native")
  m, k, n, sizes = case
  rng = np.random.default_rng(m)
  lhs = jnp.asarray(rng.standard_normal((m, k)), dtype)
  rhs = jnp.asarray(rng.standard_normal((len(sizes), k, n)) / np.sqrt(k), dtype)
  gs = jnp.asarray(sizes, jnp.int32)
  dn = base.DEFAULT_RAGGED_DOT_DIM_NUMS
  if transposed:
    rhs = jnp.swapaxes(rhs, 1, 2)
    dn = jax.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(([1], [2]), ([], [])),
                                           lhs_ragged_dimensions=[0], rhs_group_dimensions=[0])
  out, grads = _grads("native", lhs, rhs, gs, dn)
  want, want_grads = _grads("xla", lhs, rhs, gs, dn)
  assert out.dtype == jnp.dtype(dtype) and grads[1].dtype == jnp.dtype(dtype)
  testing.assert_close(out, want, dtype, "fwd")
  plain = jnp.swapaxes(rhs, 1, 2) if transposed else rhs
  testing.assert_close(out, base.reference(lhs, plain, gs), dtype, "fwd")
  np.testing.assert_array_equal(np.asarray(out, np.float32)[sum(sizes):], 0.0)
  for g, w in zip(grads, want_grads):
    testing.assert_close(g, w, dtype, "grad")
  for i, size in enumerate(sizes):  # an empty group's rhs gets no gradient
    if size == 0:
      np.testing.assert_array_equal(np.asarray(grads[1][i], np.float32), 0.0)


@pytest.mark.parametrize("kwargs", [
    {"preferred_element_type": jnp.float32},
    {"preferred_element_type": jnp.float16},
    {"activation": jax.nn.gelu},
    {"fuse_gateup_activation": "silu"},
])
def test_native_output_dtypes_and_epilogues_match_xla(kwargs) -> None:
  """bfloat16 operands: a float32 result written by the kernel; float16 and epilogues from its
  float32 product; gradients through them."""
  testing.skip_unless_runnable("native")
  lhs, rhs, gs = _operands(0, "bfloat16")
  out, grads = _grads("native", lhs, rhs, gs, **kwargs)
  want, want_grads = _grads("xla", lhs, rhs, gs, **kwargs)
  assert out.dtype == want.dtype
  what = "float32" if out.dtype == jnp.float32 else "bfloat16"
  testing.assert_close(out, want, what, "fwd")
  for g, w in zip(grads, want_grads):
    assert g.dtype == jnp.bfloat16
    testing.assert_close(g, w, "bfloat16", "grad")


def test_native_refusals_name_the_parameter() -> None:
  lhs, rhs, gs = _operands(0, "float32")
  native = api.FAMILY.implementations["native"]
  dn = base.DEFAULT_RAGGED_DOT_DIM_NUMS

  def reason(a, b, device=None, **kwargs):
    spec, _ = base.make_spec(a, b, gs, dn, None, kwargs.get("preferred_element_type"), None,
                             None, False, None)
    return native.unsupported_reason(spec, device or DeviceInfo("pjrtkit", "pjrtkit_cpu", None))

  assert reason(lhs.astype(jnp.float16), rhs) == (
      "lhs dtype float16 is not supported (accepted: float32, bfloat16)")
  assert reason(lhs, rhs.astype(jnp.int8)).startswith("rhs dtype int8 is not supported")
  assert reason(lhs, rhs, preferred_element_type=jnp.int32).startswith(
      "preferred_element_type int32 is not supported")
  h200 = DeviceInfo("cuda", "NVIDIA H200", (9, 0))
  assert "pjrtkit's CPU device only" in reason(lhs, rhs, h200)
  with pytest.raises(pk.UnsupportedImplementationError, match="lhs dtype float16"):
    pk.ragged_dot(lhs.astype(jnp.float16), rhs, gs, implementation="native")
  with pytest.raises(pk.UnsupportedImplementationError, match="only lhs .m, k. with rhs"):
    pk.ragged_dot_general(jnp.ones((12, 4, 3)), jnp.ones((3, 4, 5)), jnp.asarray([5, 0, 4]),
                          dn, implementation="native")
  with pytest.raises(pk.UnsupportedImplementationError, match="an empty operand"):
    pk.ragged_dot(lhs, jnp.ones((0, 24, 20)), jnp.zeros((0,), jnp.int32),
                  implementation="native")


def test_group_sizes_equality_hash_and_refusals() -> None:
  a = pk.RaggedDotGroupSizes(jnp.asarray([1, 2], jnp.int32), (1, 2))
  b = pk.RaggedDotGroupSizes(jnp.asarray([2, 1], jnp.int32), [1, 2])
  c = pk.RaggedDotGroupSizes(jnp.asarray([2, 1], jnp.int32), 3)
  assert a == b and hash(a) == hash(b)  # the values are runtime data: not compared
  assert a != c and a.repr_value_or_total_size == (1, 2) and c.repr_value_or_total_size == 3
  assert sum(c.representative_value) == 3
  with pytest.raises(ValueError, match="value must have an integer dtype"):
    pk.RaggedDotGroupSizes(jnp.ones((2,)), (1, 1))
  with pytest.raises(ValueError, match="has 3 sizes for 2 groups"):
    pk.RaggedDotGroupSizes(jnp.ones((2,), jnp.int32), (1, 1, 1))
  with pytest.raises(ValueError, match="must hold ints >= 0"):
    pk.RaggedDotGroupSizes(jnp.ones((2,), jnp.int32), (1.5, 1))
  with pytest.raises(TypeError, match="repr_value_or_total_size must be an int"):
    pk.RaggedDotGroupSizes(jnp.ones((2,), jnp.int32), None)


def test_bypass_device_check_is_accepted_and_lifts_no_refusal() -> None:
  """Tokamax's option: the same values whatever it says; a refusal stays one, with a note."""
  lhs, rhs, gs = _operands(0, "float32")
  want = pk.ragged_dot(lhs, rhs, gs, implementation="xla")
  for bypass in (None, True, False):
    np.testing.assert_array_equal(
        pk.ragged_dot(lhs, rhs, gs, implementation="xla", bypass_device_check=bypass), want)
    np.testing.assert_array_equal(
        pk.ragged_dot_general(lhs, rhs, gs, base.DEFAULT_RAGGED_DOT_DIM_NUMS,
                              implementation="xla", bypass_device_check=bypass), want)
  refused = "native" if pk.current_device().is_gpu else "triton"  # This device's GPU/CPU kernel.
  with pytest.raises(pk.UnsupportedImplementationError) as error:
    pk.ragged_dot(lhs, rhs, gs, implementation=refused, bypass_device_check=True)
  assert error.value.__notes__ == [
      "bypass_device_check=True does not lift this refusal: pjrtkit checks an implementation "
      "against the device calls are traced for before tracing it, whatever bypass_device_check "
      "says"]
  with pytest.raises(pk.UnsupportedImplementationError) as error:
    pk.ragged_dot(lhs, rhs, gs, implementation=refused, bypass_device_check=False)
  assert not hasattr(error.value, "__notes__")
  with pytest.raises(TypeError) as error:
    pk.ragged_dot(lhs, rhs, gs, bypass_device_check="yes")
  assert str(error.value) == ("ragged_dot: bypass_device_check must be None, True or False, got "
                              "'yes'")


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
