"""Writes the JAX-made part of the fuzzers' seed corpus (tests/fuzz/corpus/).

Run once by hand when the seeds should change (the files are checked in):

  JAX_PLATFORMS=pjrtkit .venv/bin/python tests/fuzz/make_seeds.py
  PJRTKIT_XLA_CPU_PLUGIN=... PJRTKIT_FUZZ_WRITE_SEED=tests/fuzz/corpus/executable_fuzzer/add_one \
      bazel-bin/tests/fuzz/executable_fuzzer

Then run this script again: it derives the near-valid executable seeds from that file (one bit
flipped, cut in half, a version-1 header, the header alone). Program seeds start with the format
byte of program_fuzzer.cc (0: "mlir", 1: "hlo").
"""

from __future__ import annotations

import pathlib
import struct
import sys

import jax
import jax.numpy as jnp
from jax._src import compiler

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus"


def write(target: str, name: str, data: bytes) -> None:
  """Writes one seed file, CORPUS/target/name."""
  path = CORPUS / target / name
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_bytes(data)
  print(f"{path.relative_to(CORPUS.parent)}: {len(data)} bytes")


# The known option names of create_options_fuzzer.cc's kNames, by index.
_NAMES = ["device_count", "xla_cpu_plugin_path", "host_buffer_cache_mib",
          "process_join_timeout_s", "node_id", "num_nodes", "device", "xla_gpu_plugin_path"]
_ADD_ONE = b"""
module @add_one attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %cst : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
# tests/conformance's compile options: 1 x 1, 2 replicas x 1, 1 x 1 portable.
_OPTIONS_1X1 = bytes([0x1a, 0x0f, 0x08] + [0xff] * 9 + [0x01, 0x20, 0x01, 0x28, 0x01])
_OPTIONS_2X1 = bytes([0x1a, 0x0f, 0x08] + [0xff] * 9 + [0x01, 0x20, 0x02, 0x28, 0x01])
_OPTIONS_PORTABLE = _OPTIONS_1X1 + bytes([0x20, 0x01])


def option(name: str, kind: str, value: object) -> bytes:
  """One record of create_options_fuzzer.cc's encoding."""
  out = bytes([_NAMES.index(name)])
  if kind == "string":
    data = value if isinstance(value, bytes) else str(value).encode()
    return out + bytes([0, len(data)]) + data
  if kind == "int":
    return out + bytes([1]) + struct.pack("<q", value)
  if kind == "list":
    return out + bytes([2, len(value)]) + b"".join(struct.pack("<q", v) for v in value)
  if kind == "float":
    return out + bytes([3]) + struct.pack("<f", value) + bytes(4)
  return out + bytes([4, int(bool(value))])


def write_fixed_seeds() -> None:
  """Writes the seeds that need no JAX: programs, compile options and create options."""
  write("program_fuzzer", "add_one.mlir", b"\0" + _ADD_ONE)
  write("program_fuzzer", "truncated.mlir", b"\0" + _ADD_ONE[:120])
  write("compile_options_fuzzer", "conformance_1x1", _OPTIONS_1X1)
  write("compile_options_fuzzer", "conformance_2x1", _OPTIONS_2X1)
  write("compile_options_fuzzer", "conformance_portable", _OPTIONS_PORTABLE)
  real_path = b"\0"  # PathValue's first choice: $PJRTKIT_XLA_CPU_PLUGIN.
  write("create_options_fuzzer", "two_devices",
        option("device_count", "int", 2) + option("xla_cpu_plugin_path", "string", real_path))
  write("create_options_fuzzer", "jax_string_form",
        option("device_count", "string", "3") + option("host_buffer_cache_mib", "string", "0")
        + option("xla_cpu_plugin_path", "string", real_path))
  write("create_options_fuzzer", "one_node",
        option("node_id", "int", 0) + option("num_nodes", "int", 1)
        + option("device", "string", "xla_cpu") + option("xla_cpu_plugin_path", "string", real_path))
  write("create_options_fuzzer", "ill_typed",
        option("device_count", "float", 2.0) + option("process_join_timeout_s", "list", [1, 2]))
  write("create_options_fuzzer", "gpu_choice",
        option("device", "string", "xla_gpu") + option("xla_gpu_plugin_path", "string", real_path))


def write_executable_variants() -> None:
  """Writes near-valid executable seeds derived from corpus/executable_fuzzer/add_one."""
  path = CORPUS / "executable_fuzzer" / "add_one"
  if not path.exists():
    print(f"{path} is missing: write it with executable_fuzzer first (see the docstring)")
    return
  valid = path.read_bytes()
  write("executable_fuzzer", "add_one_corrupted", valid[:-1] + bytes([valid[-1] ^ 1]))
  write("executable_fuzzer", "add_one_truncated", valid[:len(valid) // 2])
  # Format version 1: magic, version, device count, then XLA:CPU's bytes (no checksum).
  write("executable_fuzzer", "add_one_version1", valid[:28] + b"\1" + valid[29:33] + valid[41:])
  write("executable_fuzzer", "header_only", valid[:41])


def main() -> int:
  """Writes every seed but the serialized executable (see the module docstring)."""
  write_fixed_seeds()
  write_executable_variants()
  x = jnp.zeros((2, 3), jnp.float32)

  def two_ops(v: jax.Array) -> jax.Array:
    return jnp.tanh(v) @ v.T + jnp.sum(v)

  lowered = jax.jit(two_ops).lower(x)
  write("program_fuzzer", "jax_text.mlir", b"\0" + lowered.as_text().encode())
  exported = jax.export.export(jax.jit(two_ops))(x)
  write("program_fuzzer", "jax_portable_artifact", b"\0" + exported.mlir_module_serialized)
  write("program_fuzzer", "jax_hlo_proto",
        b"\1" + lowered.compiler_ir("hlo").as_serialized_hlo_module_proto())
  options = compiler.get_compile_options(num_replicas=1, num_partitions=1)
  write("compile_options_fuzzer", "jax_1x1", options.SerializeAsString())
  options = compiler.get_compile_options(num_replicas=1, num_partitions=2)
  write("compile_options_fuzzer", "jax_1x2", options.SerializeAsString())
  return 0


if __name__ == "__main__":
  sys.exit(main())
