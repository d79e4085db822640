"""Generates data_movement_cases.inc: expected results of the data movement kernels from XLA:CPU.

Every case runs one StableHLO op on s32 operands whose elements are their own codes (operand a,
element e: a * 100000 + e; the padding value -1), so the result lists, per element, which operand
element lands there. The C++ test replays each case for every element size (data movement copies
bytes), with distinct byte patterns standing for the codes.

Regenerate (from the repository root):
  JAX_PLATFORMS=cpu .venv/bin/python xla_plugin/devices/sim/kernels/gen_data_movement_cases.py
"""
import os

import numpy as np

import movement_testgen as tg

CASES = []


def arr(shape, a=0):
  return (a * 100000 + np.arange(int(np.prod(shape)), dtype=np.int32)).reshape(shape)


def attr(values):
  return "array<i64" + (": " + ", ".join(str(v) for v in values) if values else "") + ">"


def add(kind, name, operand_shapes, result_shape, params, body, index_dtype=None,
        index_values=()):
  """Runs `body` (an op writing %r from %a0.. and index scalars %i0..) and records the case."""
  args = [arr(s, a) for a, s in enumerate(operand_shapes)]
  sig = [f"%a{a}: {tg.tensor_type(s, np.int32)}" for a, s in enumerate(operand_shapes)]
  if kind == "pad":
    args.append(np.array(-1, np.int32))
    sig.append(f"%pv: {tg.tensor_type((), np.int32)}")
  for k, v in enumerate(index_values):
    dt = np.dtype(index_dtype)
    args.append(np.array(v & (2**64 - 1) if dt.kind == "u" else v, dtype=dt))
    sig.append(f"%i{k}: {tg.tensor_type((), dt)}")
  rtype = tg.tensor_type(result_shape, np.int32)
  op_text = body.replace("{r}", rtype)
  text = (f"func.func public @main({', '.join(sig)}) -> {rtype} {{\n  {op_text}\n"
          f"  return %r : {rtype}\n}}")
  (out,) = tg.run(text, *args)
  assert out.shape == tuple(result_shape), (name, out.shape)
  CASES.append(dict(kind=kind, name=name, operands=operand_shapes, result=list(result_shape),
                    params=params, index_type=index_dtype, index_values=list(index_values),
                    expected=out.ravel().tolist()))


def types(shapes):
  return ", ".join(tg.tensor_type(s, np.int32) for s in shapes)


def copy(name, shape, result_shape):
  add("copy", name, [shape], result_shape, [],
      f'%r = "stablehlo.reshape"(%a0) : ({types([shape])}) -> {{r}}')


def transpose(name, shape, perm):
  rshape = [shape[p] for p in perm]
  add("transpose", name, [shape], rshape, [perm],
      f'%r = "stablehlo.transpose"(%a0) <{{permutation = {attr(perm)}}}> : '
      f"({types([shape])}) -> {{r}}")


def slice_(name, shape, start, limit, strides):
  rshape = [(l - s + st - 1) // st for s, l, st in zip(start, limit, strides)]
  add("slice", name, [shape], rshape, [start, limit, strides],
      f'%r = "stablehlo.slice"(%a0) <{{start_indices = {attr(start)}, limit_indices = '
      f"{attr(limit)}, strides = {attr(strides)}}}> : ({types([shape])}) -> {{r}}")


def dynamic_slice(name, shape, sizes, index_dtype, starts):
  idx = ", ".join(f"%i{k}" for k in range(len(starts)))
  itypes = ", ".join(tg.tensor_type((), index_dtype) for _ in starts)
  add("dynamic_slice", name, [shape], sizes, [sizes],
      f'%r = "stablehlo.dynamic_slice"(%a0{", " if idx else ""}{idx}) <{{slice_sizes = '
      f"{attr(sizes)}}}> : ({types([shape])}{', ' if idx else ''}{itypes}) -> {{r}}",
      index_dtype, starts)


def dynamic_update_slice(name, shape, update_shape, index_dtype, starts):
  idx = ", ".join(f"%i{k}" for k in range(len(starts)))
  itypes = ", ".join(tg.tensor_type((), index_dtype) for _ in starts)
  add("dynamic_update_slice", name, [shape, update_shape], shape, [],
      f'%r = "stablehlo.dynamic_update_slice"(%a0, %a1{", " if idx else ""}{idx}) : '
      f"({types([shape, update_shape])}{', ' if idx else ''}{itypes}) -> {{r}}",
      index_dtype, starts)


def concatenate(name, shapes, dim):
  rshape = list(shapes[0])
  rshape[dim] = sum(s[dim] for s in shapes)
  ops = ", ".join(f"%a{a}" for a in range(len(shapes)))
  add("concatenate", name, shapes, rshape, [[dim]],
      f'%r = "stablehlo.concatenate"({ops}) <{{dimension = {dim} : i64}}> : '
      f"({types(shapes)}) -> {{r}}")


def pad(name, shape, low, high, interior):
  rshape = [d + lo + hi + max(d - 1, 0) * it for d, lo, hi, it in zip(shape, low, high, interior)]
  add("pad", name, [shape], rshape, [low, high, interior],
      f'%r = "stablehlo.pad"(%a0, %pv) <{{edge_padding_high = {attr(high)}, edge_padding_low = '
      f"{attr(low)}, interior_padding = {attr(interior)}}}> : ({types([shape])}, tensor<i32>) "
      f"-> {{r}}")


def reverse(name, shape, dims):
  add("reverse", name, [shape], shape, [dims],
      f'%r = "stablehlo.reverse"(%a0) <{{dimensions = {attr(dims)}}}> : ({types([shape])}) '
      f"-> {{r}}")


def build():
  copy("reshape_2x3_to_3x2", [2, 3], [3, 2])
  copy("scalar", [], [])
  copy("to_rank0_of_one", [1, 1], [])
  copy("empty", [0, 4], [4, 0])

  transpose("rank0", [], [])
  transpose("rank1", [5], [0])
  transpose("identity_2d", [3, 4], [0, 1])
  transpose("2d_small", [3, 5], [1, 0])
  transpose("2d_tiled_ragged", [37, 45], [1, 0])
  transpose("2d_tiled_even", [32, 64], [1, 0])
  transpose("3d_swap_outer", [4, 5, 6], [1, 0, 2])
  transpose("3d_swap_inner", [4, 5, 6], [0, 2, 1])
  transpose("3d_rotate", [3, 4, 5], [2, 0, 1])
  transpose("3d_rotate_back", [3, 4, 5], [1, 2, 0])
  transpose("3d_reverse_tiled", [3, 36, 33], [2, 1, 0])
  transpose("4d_mixed", [2, 3, 4, 5], [3, 1, 0, 2])
  transpose("4d_unit_dims", [1, 6, 1, 7], [3, 2, 0, 1])
  transpose("5d", [2, 3, 2, 3, 2], [4, 2, 0, 3, 1])
  transpose("empty_dim", [3, 0, 2], [2, 0, 1])

  slice_("rank0", [], [], [], [])
  slice_("full", [3, 4], [0, 0], [3, 4], [1, 1])
  slice_("rows", [5, 6], [1, 0], [4, 6], [1, 1])
  slice_("window", [5, 6], [1, 2], [4, 5], [1, 1])
  slice_("strided", [7, 9], [1, 0], [7, 9], [2, 3])
  slice_("strided_ragged", [10], [1], [10], [4])
  slice_("stride_past_end", [6, 5], [5, 4], [6, 5], [7, 9])
  slice_("empty_result", [4, 5], [2, 0], [2, 5], [1, 1])
  slice_("3d", [4, 5, 6], [1, 0, 2], [4, 5, 6], [2, 2, 1])

  for dt, starts in [(np.int8, [-3, 2]), (np.uint8, [255, 1]), (np.int16, [1, -1]),
                     (np.uint16, [2, 60000]), (np.int32, [0, 9]), (np.uint32, [4294967295, 0]),
                     (np.int64, [-(2**63), 2**63 - 1]), (np.uint64, [2**64 - 1, 1])]:
    dynamic_slice(f"2d_{np.dtype(dt).name}", [5, 7], [2, 3], dt, starts)
    dynamic_update_slice(f"2d_{np.dtype(dt).name}", [5, 7], [2, 3], dt, starts)
  dynamic_slice("rank0", [], [], np.int32, [])
  dynamic_slice("3d_in_range", [4, 5, 6], [2, 1, 3], np.int32, [1, 3, 2])
  dynamic_slice("full_size", [3, 4], [3, 4], np.int32, [2, 7])
  dynamic_slice("zero_size", [3, 4], [0, 2], np.int32, [1, 1])
  dynamic_slice("from_empty", [0, 4], [0, 4], np.int64, [5, -5])
  dynamic_slice("rows", [6, 8], [2, 8], np.uint32, [3, 0])
  dynamic_update_slice("rank0", [], [], np.int32, [])
  dynamic_update_slice("3d_in_range", [4, 5, 6], [2, 1, 3], np.int32, [1, 3, 2])
  dynamic_update_slice("full_size", [3, 4], [3, 4], np.int32, [2, 7])
  dynamic_update_slice("zero_size", [3, 4], [0, 2], np.int32, [1, 1])
  dynamic_update_slice("rows", [6, 8], [2, 8], np.uint16, [3, 0])

  concatenate("dim0", [[2, 3], [4, 3]], 0)
  concatenate("dim1", [[2, 3], [2, 1], [2, 4]], 1)
  concatenate("dim1_of_3d", [[2, 3, 4], [2, 2, 4]], 1)
  concatenate("last_dim_3d", [[2, 3, 1], [2, 3, 2], [2, 3, 1]], 2)
  concatenate("with_empty", [[2, 0], [2, 3], [2, 0]], 1)
  concatenate("single", [[3, 2]], 0)
  concatenate("rank1", [[3], [4], [1]], 0)

  pad("rank0", [], [], [], [])
  pad("edges", [2, 3], [1, 0], [2, 1], [0, 0])
  pad("interior", [2, 3], [0, 1], [2, 1], [1, 2])
  pad("negative_low_high", [5, 6], [-1, -2], [-2, 0], [0, 0])
  pad("negative_with_interior", [4, 5], [-3, 1], [-2, -4], [2, 1])
  pad("crop_everything", [3, 3], [-3, 0], [0, 0], [0, 0])
  pad("negative_past_operand", [3, 4], [-5, 0], [6, 0], [0, 0])
  pad("empty_operand", [0, 2], [2, 1], [1, 0], [3, 1])
  pad("unit_dim_interior", [1, 3], [1, 0], [0, 0], [5, 0])
  pad("3d", [2, 3, 4], [1, -1, 0], [0, 2, -1], [1, 0, 2])

  reverse("rank0", [], [])
  reverse("none", [3, 4], [])
  reverse("rank1", [7], [0])
  reverse("dim0", [3, 4], [0])
  reverse("dim1", [3, 4], [1])
  reverse("both_unsorted", [3, 4], [1, 0])
  reverse("3d_middle", [2, 3, 4], [1])
  reverse("empty", [0, 3], [0, 1])


def main():
  build()
  lines = ["const MovementCase kMovementCases[] = {"]
  for c in CASES:
    itype = tg.CC_TYPES[np.dtype(c["index_type"])] if c["index_type"] else "kS32"
    lines.append(
        f'    {{MoveKind::k{"".join(p.title() for p in c["kind"].split("_"))}, '
        f'"{c["kind"]}/{c["name"]}", {tg.cc_dims_list(c["operands"])}, '
        f'{tg.cc_ints(c["result"])}, {tg.cc_dims_list(c["params"])}, ElementType::{itype}, '
        f'{tg.cc_u64s(c["index_values"])}, {tg.cc_ints(c["expected"])}}},')
  lines.append("};")
  tg.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data_movement_cases.inc"),
           "gen_data_movement_cases.py", lines)
  print(f"{len(CASES)} cases")


if __name__ == "__main__":
  main()
