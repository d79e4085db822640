"""Generates gather_cases.inc: XLA:CPU's gather results for the C++ gather test.

The operand's elements are their own codes (element e: e + 1; 0 in the result means zero bytes),
so each case's result lists which operand element every result element holds. Two kinds of case:
- JAX patterns (x[i], jnp.take, take_along_axis, vmapped indexing, ...): the gather's dimension
  numbers are parsed from the program JAX lowers, its start indices built as JAX builds them, and
  the gather rerun alone on XLA:CPU must equal the JAX function's result;
- dimension numbers JAX does not produce (index_vector_dim = 0 or = rank, every index type with
  out-of-range indices, zero-sized slices, the spec's batching example), run as StableHLO.

Regenerate (from the repository root):
  JAX_PLATFORMS=cpu .venv/bin/python xla_plugin/devices/sim/kernels/gen_gather_cases.py
"""
import os
import re

import numpy as np

import jax
import jax.numpy as jnp

import movement_testgen as tg

CASES = []
FIELDS = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
          "start_indices_batching_dims", "start_index_map")


def codes(shape):
  return (np.arange(int(np.prod(shape)), dtype=np.int32) + 1).reshape(shape)


def attr(values):
  return "[" + ", ".join(str(v) for v in values) + "]"


def gather_text(p, operand_shape, indices, result_shape):
  dn = ", ".join(f"{f} = {attr(p[f])}" for f in FIELDS if p[f])
  dn += (", " if dn else "") + f"index_vector_dim = {p['index_vector_dim']}"
  sizes = "array<i64" + (": " + ", ".join(str(s) for s in p["slice_sizes"])
                         if p["slice_sizes"] else "") + ">"
  otype = tg.tensor_type(operand_shape, np.int32)
  itype = tg.tensor_type(indices.shape, indices.dtype)
  rtype = tg.tensor_type(result_shape, np.int32)
  return (f"func.func public @main(%o: {otype}, %i: {itype}) -> {rtype} {{\n"
          f'  %r = "stablehlo.gather"(%o, %i) <{{dimension_numbers = #stablehlo.gather<{dn}>, '
          f"indices_are_sorted = false, slice_sizes = {sizes}}}> : ({otype}, {itype}) -> {rtype}\n"
          f"  return %r : {rtype}\n}}")


def params(offset_dims=(), collapsed_slice_dims=(), operand_batching_dims=(),
           start_indices_batching_dims=(), start_index_map=(), index_vector_dim=0,
           slice_sizes=()):
  return dict(offset_dims=list(offset_dims), collapsed_slice_dims=list(collapsed_slice_dims),
              operand_batching_dims=list(operand_batching_dims),
              start_indices_batching_dims=list(start_indices_batching_dims),
              start_index_map=list(start_index_map), index_vector_dim=index_vector_dim,
              slice_sizes=list(slice_sizes))


def raw(name, p, operand_shape, indices, result_shape, expect=None):
  operand = codes(operand_shape)
  (out,) = tg.run(gather_text(p, operand_shape, indices, result_shape), operand, indices)
  assert out.shape == tuple(result_shape), (name, out.shape)
  if expect is not None:
    np.testing.assert_array_equal(out, expect, err_msg=name)
  CASES.append(dict(name=name, p=p, operand=list(operand_shape), indices=indices,
                    result=list(result_shape), expected=out.ravel().tolist()))


def parse_gather(text):
  """The dimension numbers, slice sizes and types of the one gather in a lowered program."""
  line = next(l for l in text.splitlines() if "stablehlo.gather" in l)
  dn = re.search(r"#stablehlo\.gather<(.*?)>", line).group(1)
  p = params()
  for field in FIELDS:
    m = re.search(rf"(?<![a-z_]){field} = \[([0-9, ]*)\]", dn)
    if m:
      p[field] = [int(v) for v in m.group(1).split(",") if v.strip()]
  p["index_vector_dim"] = int(re.search(r"index_vector_dim = (\d+)", dn).group(1))
  p["slice_sizes"] = [int(v) for v in
                      re.search(r"slice_sizes = array<i64: ([0-9, ]*)>", line).group(1).split(",")]
  shapes = re.search(r": \(tensor<([0-9x]*)x?[a-z0-9]+>, tensor<([0-9x]*)x?([a-z0-9]+)>\) -> "
                     r"tensor<([0-9x]*)x?[a-z0-9]+>", line)
  dims = lambda s: [int(v) for v in s.split("x") if v]
  return p, dims(shapes.group(2)), shapes.group(3), dims(shapes.group(4))


def jax_pattern(name, f, x_shape, idx, to_start_indices):
  """A gather JAX emits for f(x, idx); `to_start_indices` builds the indices it passes."""
  x = codes(x_shape)
  text = jax.jit(f).lower(x, idx).as_text()
  assert text.count("\"stablehlo.gather\"") == 1, name
  p, indices_shape, indices_type, result_shape = parse_gather(text)
  indices = np.asarray(to_start_indices(idx))
  assert list(indices.shape) == indices_shape, (name, indices.shape, indices_shape)
  assert tg.MLIR_TYPES[indices.dtype] == indices_type, (name, indices.dtype, indices_type)
  expect = np.asarray(f(x, idx)).reshape(result_shape)
  raw("jax/" + name, p, x_shape, indices, result_shape, expect)


def build():
  i3 = np.array([2, 0, 3], np.int32)
  jax_pattern("row_gather_x[i]", lambda x, i: x[i], [4, 6], i3, lambda i: i[:, None])
  jax_pattern("row_gather_rank3", lambda x, i: x[i], [4, 3, 5], i3, lambda i: i[:, None])
  jax_pattern("take_axis1", lambda x, i: jnp.take(x, i, axis=1), [4, 6], i3,
              lambda i: i[:, None])
  jax_pattern("take_axis1_clip", lambda x, i: jnp.take(x, i, axis=1, mode="clip"), [4, 6], i3,
              lambda i: i[:, None])
  jax_pattern("x[i,1]", lambda x, i: x[i, 1], [4, 6], i3,
              lambda i: np.stack([i, np.ones_like(i)], axis=1))
  jax_pattern("x[i,i]", lambda x, i: x[i, i], [4, 6], i3, lambda i: np.stack([i, i], axis=1))
  jax_pattern("x[i2d]", lambda x, i: x[i], [4, 6], i3.reshape(3, 1), lambda i: i[..., None])
  idx2 = np.array([[5, 0, 1, 1, 2, 4], [0, 0, 0, 0, 0, 0], [3, 2, 1, 0, 5, 4],
                   [1, 3, 5, 0, 2, 4]], np.int32)
  jax_pattern("take_along_axis1", lambda x, i: jnp.take_along_axis(x, i, axis=1), [4, 6], idx2,
              lambda i: i[..., None])
  jax_pattern("take_along_axis0",
              lambda x, i: jnp.take_along_axis(x, i, axis=0), [6, 4], idx2.T.copy(),
              lambda i: i[..., None])
  jax_pattern("vmap_row_pick", lambda x, i: jax.vmap(lambda r, j: r[j])(x, i), [4, 6],
              np.array([5, 0, 2, 3], np.int32), lambda i: i[:, None])
  jax_pattern("vmap_rows_of_3d", lambda x, i: jax.vmap(lambda a, b: a[b])(x, i), [3, 4, 5],
              np.array([[0, 1], [2, 3], [1, 1]], np.int32), lambda i: i[..., None])
  jax_pattern("vmap_take_axis1",
              lambda x, i: jax.vmap(lambda a, b: jnp.take(a, b, axis=1))(x, i), [3, 4, 5],
              np.array([[0, 4, 2], [1, 1, 3], [4, 0, 0]], np.int32), lambda i: i[..., None])
  jax_pattern("take_2d_indices_axis0", lambda x, i: jnp.take(x, i, axis=0), [7, 3],
              np.array([[6, 0], [3, 3], [1, 2]], np.int32), lambda i: i[..., None])

  # The spec's example: batching dimensions, index_vector_dim in the middle of the batch dims.
  spec_indices = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                           [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int64)
  raw("spec_example", params(offset_dims=[3, 4], collapsed_slice_dims=[1],
                             operand_batching_dims=[0], start_indices_batching_dims=[1],
                             start_index_map=[2, 1], index_vector_dim=3,
                             slice_sizes=[1, 1, 2, 2]),
      [2, 3, 4, 2], spec_indices, [2, 2, 3, 2, 2])
  # index_vector_dim = rank(start_indices): an implicit trailing vector of one index.
  raw("implicit_index_vector", params(offset_dims=[2], collapsed_slice_dims=[0],
                                      start_index_map=[0], index_vector_dim=2,
                                      slice_sizes=[1, 5]),
      [4, 5], np.array([[3, 0, 1], [2, 2, 9]], np.int32), [2, 3, 5])
  raw("scalar_index", params(offset_dims=[0], collapsed_slice_dims=[0], start_index_map=[0],
                             index_vector_dim=0, slice_sizes=[1, 5]),
      [4, 5], np.array(2, np.int32), [5])
  # index_vector_dim = 0: the vectors run along the first dimension.
  raw("leading_index_vector", params(offset_dims=[1], collapsed_slice_dims=[1],
                                     start_index_map=[1, 0], index_vector_dim=0,
                                     slice_sizes=[2, 1]),
      [5, 6], np.array([[0, 5, 2, 7], [1, 3, 4, -2]], np.int16), [4, 2])
  # Windows clamped at both ends; offset dims before and after the batch dims.
  raw("clamped_windows", params(offset_dims=[0, 2], start_index_map=[0, 1], index_vector_dim=1,
                                slice_sizes=[2, 3]),
      [4, 5], np.array([[-1, 1], [3, 4], [1, 2]], np.int32), [2, 3, 3])
  raw("offset_dims_first", params(offset_dims=[0], collapsed_slice_dims=[0, 2],
                                  start_index_map=[0, 2], index_vector_dim=1,
                                  slice_sizes=[1, 3, 1]),
      [3, 3, 4], np.array([[2, 3], [0, 0], [1, 9]], np.int32), [3, 3])
  # Every index type, with negative and too-large values (unsigned values above INT64_MAX too).
  for dtype, values in [(np.int8, [-128, 127, 1]), (np.uint8, [255, 0, 2]),
                        (np.int16, [-300, 300, 3]), (np.uint16, [65535, 1, 0]),
                        (np.int32, [-(2**31), 2**31 - 1, 2]),
                        (np.uint32, [2**32 - 1, 3, 1]),
                        (np.int64, [-(2**63), 2**63 - 1, 1]),
                        (np.uint64, [2**64 - 1, 2**63, 2])]:
    raw(f"index_type_{np.dtype(dtype).name}",
        params(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
               index_vector_dim=1, slice_sizes=[1, 2]),
        [4, 2], np.array(values, dtype=dtype).reshape(3, 1), [3, 2])
  # Batching dims only (no start_index_map entries for them), two of them, unsorted indices dims.
  raw("two_batching_dims", params(offset_dims=[2], collapsed_slice_dims=[2],
                                  operand_batching_dims=[0, 1],
                                  start_indices_batching_dims=[1, 0], start_index_map=[2],
                                  index_vector_dim=2, slice_sizes=[1, 1, 1, 3]),
      [2, 3, 4, 3], np.array([[[1], [3]], [[0], [2]], [[3], [3]]], np.uint8), [3, 2, 3])
  # Zero sizes: no indices; an empty offset slice; a collapsed slice of size 0 (XLA:CPU: zeros).
  raw("no_indices", params(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
                           index_vector_dim=1, slice_sizes=[1, 3]),
      [4, 3], np.zeros((0, 1), np.int32), [0, 3])
  raw("empty_offset_slice", params(offset_dims=[1], collapsed_slice_dims=[0],
                                   start_index_map=[0], index_vector_dim=1, slice_sizes=[1, 0]),
      [4, 3], np.array([[1], [2]], np.int32), [2, 0])
  raw("collapsed_size_zero", params(offset_dims=[1], collapsed_slice_dims=[0],
                                    start_index_map=[0], index_vector_dim=1, slice_sizes=[0, 3]),
      [4, 3], np.array([[1], [9]], np.int32), [2, 3])
  raw("collapsed_size_zero_empty_operand",
      params(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0], index_vector_dim=1,
             slice_sizes=[0, 3]),
      [0, 3], np.array([[1], [0]], np.int32), [2, 3])
  raw("batching_size_zero", params(offset_dims=[1], operand_batching_dims=[0],
                                   start_indices_batching_dims=[0], start_index_map=[1],
                                   index_vector_dim=1, slice_sizes=[0, 2]),
      [3, 4], np.array([[1], [2], [3]], np.int32), [3, 2])
  # A scalar operand: empty index vectors, every result element is the operand.
  raw("scalar_operand", params(index_vector_dim=1), [], np.zeros((3, 0), np.int32), [3])
  # A full slice (no collapsed dims): the start is always clamped to 0.
  raw("full_slice", params(offset_dims=[1, 2], start_index_map=[0], index_vector_dim=1,
                           slice_sizes=[3, 2]),
      [3, 2], np.array([[2], [-1]], np.int64), [2, 3, 2])


def main():
  build()
  lines = ["const GatherCase kGatherCases[] = {"]
  for c in CASES:
    p = c["p"]
    dn = ", ".join(tg.cc_ints(p[f]) for f in FIELDS)
    idx = c["indices"]
    lines.append(f'    {{"{c["name"]}", {{{dn}, {p["index_vector_dim"]}, '
                 f'{tg.cc_ints(p["slice_sizes"])}, false}},')
    bits = idx.ravel().astype(np.int64).view(np.uint64) if idx.dtype.kind == "i" else idx.ravel()
    lines.append(f"     {tg.cc_ints(c['operand'])}, ElementType::{tg.CC_TYPES[idx.dtype]}, "
                 f"{tg.cc_ints(idx.shape)}, {tg.cc_u64s(bits)},")
    lines.append(f"     {tg.cc_ints(c['result'])}, {tg.cc_ints(c['expected'])}}},")
  lines.append("};")
  tg.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gather_cases.inc"),
           "gen_gather_cases.py", lines)
  print(f"{len(CASES)} cases")


if __name__ == "__main__":
  main()
