"""Generates rng_bit_generator_cases.inc: XLA:CPU's random bits and new states.

Cases through the public API (jax.lax.rng_bit_generator on a u64[2] key, each algorithm) and, for
what the API does not reach (u64[3] Philox states, signed and floating-point outputs), the
StableHLO op compiled directly; both run on jaxlib's CPU backend.

Regenerate (from the repository root):
  JAX_PLATFORMS=cpu .venv/bin/python xla_plugin/devices/sim/kernels/gen_rng_bit_generator_cases.py
"""
import os

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

import movement_testgen as tg

CASES = []

ALGORITHMS = {"DEFAULT": lax.RandomAlgorithm.RNG_DEFAULT,
              "THREE_FRY": lax.RandomAlgorithm.RNG_THREE_FRY,
              "PHILOX": lax.RandomAlgorithm.RNG_PHILOX}
CC_ALGORITHMS = {"DEFAULT": "kDefault", "THREE_FRY": "kThreeFry", "PHILOX": "kPhilox"}
# Element types the API cannot produce: StableHLO name, pjrtkit::ElementType, bytes.
RAW_TYPES = {"i8": ("kS8", 1), "i16": ("kS16", 2), "i32": ("kS32", 4), "i64": ("kS64", 8),
             "f16": ("kF16", 2), "bf16": ("kBF16", 2), "f32": ("kF32", 4), "f64": ("kF64", 8),
             "f8E4M3FN": ("kF8E4M3FN", 1), "ui32": ("kU32", 4), "ui64": ("kU64", 8)}


def add(algorithm, state, shape, cc_type, bytes_, new_state, bits):
  bits = np.asarray(bits).reshape(-1).view(f"u{bytes_}").astype(np.uint64)
  CASES.append((algorithm, list(state), list(shape), cc_type, [int(v) for v in new_state],
                [int(v) for v in bits]))


def api_case(algorithm, state, shape, dtype):
  f = jax.jit(lambda s: lax.rng_bit_generator(s, shape, dtype, algorithm=ALGORITHMS[algorithm]))
  new_state, bits = f(jnp.array(state, dtype=jnp.uint64))
  assert bits.shape == tuple(shape)
  add(algorithm, state, shape, tg.CC_TYPES[np.dtype(dtype)], np.dtype(dtype).itemsize,
      np.asarray(new_state), np.asarray(bits))


def raw_case(algorithm, state, shape, elem):
  cc_type, bytes_ = RAW_TYPES[elem]
  stype = tg.tensor_type([len(state)], np.uint64)
  btype = tg.tensor_type(shape, elem)
  text = (f"func.func public @main(%s: {stype}) -> ({stype}, {btype}) {{\n"
          f'  %ns, %b = "stablehlo.rng_bit_generator"(%s) <{{rng_algorithm = '
          f"#stablehlo<rng_algorithm {algorithm}>}}> : ({stype}) -> ({stype}, {btype})\n"
          f"  return %ns, %b : {stype}, {btype}\n}}")
  new_state, bits = tg.run(text, np.array(state, dtype=np.uint64))
  add(algorithm, state, shape, cc_type, bytes_, new_state, bits)


SHAPES = [[], [1], [3], [4], [7], [2, 3], [5, 3], [3, 5], [3, 1, 5], [1, 1], [0, 3], [3, 0],
          [2, 2, 3], [9, 7]]
STATES = [[0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFFE], [5, 7], [0, 0]]


def build():
  for algorithm in ALGORITHMS:
    # DEFAULT is PHILOX on XLA:CPU: one state shows it.
    states = STATES[:1] if algorithm == "DEFAULT" else STATES
    for state in states:
      for shape in SHAPES:
        for dtype in (np.uint32, np.uint64):
          if shape == [9, 7] and state != STATES[0]:
            continue
          api_case(algorithm, state, shape, dtype)
      for shape in ([], [5], [3, 5], [6, 1]):
        for dtype in (np.uint8, np.uint16):
          api_case(algorithm, state, shape, dtype)
  for algorithm in ("PHILOX", "DEFAULT"):
    for state in ([1, 2, 3], [0xAB, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF],
                  [7, 0xFFFFFFFFFFFFFFFD, 41]):
      for shape in ([], [5], [2, 3], [9, 2]):
        for elem in ("ui32", "ui64", "i8"):
          if algorithm == "DEFAULT" and shape not in ([5], [9, 2]):
            continue
          raw_case(algorithm, state, shape, elem)
  for algorithm in ALGORITHMS:
    for elem in ("i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "f8E4M3FN"):
      for shape in ([], [3, 5], [4, 2]):
        raw_case(algorithm, [0x243F6A8885A308D3, 0x13198A2E03707344], shape, elem)


def main():
  build()
  lines = ["const RngCase kRngCases[] = {"]
  for algorithm, state, shape, cc_type, new_state, bits in CASES:
    lines.append(f"    {{RngAlgorithm::{CC_ALGORITHMS[algorithm]}, {tg.cc_u64s(state)}, "
                 f"{tg.cc_ints(shape)}, ElementType::{cc_type}, {tg.cc_u64s(new_state)},")
    lines.append(f"     {tg.cc_u64s(bits)}}},")
  lines.append("};")
  tg.write(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rng_bit_generator_cases.inc"),
           "gen_rng_bit_generator_cases.py", lines)
  print(f"{len(CASES)} cases")


if __name__ == "__main__":
  main()
