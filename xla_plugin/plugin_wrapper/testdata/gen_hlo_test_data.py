"""Regenerates hlo_test_data.cc: real HloModuleProto bytes for the ParameterShapes tests.

Run from the repository root with the project venv (needs jax/jaxlib):

    .venv/bin/python xla_plugin/plugin_wrapper/testdata/gen_hlo_test_data.py

Each program below is MLIR text written here (no Python source locations end up in the HLO, so
the bytes do not depend on where this script lives). jaxlib's CPU backend compiles it and the
optimized HloModuleProto is taken from the executable, exactly the module XLA:CPU's
PJRT_Executable_OptimizedProgram wraps in an HloModuleProtoWithConfig. The script also writes:
  * one module wrapped as HloModuleProtoWithConfig { hlo_module = 1 } (format "hlo_with_config"),
  * one module with its host_program_shape (HloModuleProto field 4) removed, so the reader's
    fallback to the entry computation's program_shape is exercised.
It checks the field numbers it relies on by decoding the bytes it wrote (see check_layout()).
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # Only jaxlib's CPU backend; no plugins.

import jax  # noqa: E402
import jax.extend  # noqa: E402,F401  (registers jax.extend.backend)
from jax._src.lib import xla_client  # noqa: E402

# name -> (MLIR text, compile with parameter_is_tupled_arguments).
PROGRAMS: dict[str, tuple[str, bool]] = {
    # f32[4] -> f32[4].
    "AddOne": ("""\
module @add_one {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %one = stablehlo.constant dense<1.0> : tensor<4xf32>
    %0 = stablehlo.add %x, %one : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
""", False),
    # f32[4], s32[2,3], pred[], bf16[2], c64[1], u8[0] -> f32[4].
    "Mixed": ("""\
module @mixed {
  func.func public @main(%a: tensor<4xf32>, %b: tensor<2x3xi32>, %c: tensor<i1>,
                         %d: tensor<2xbf16>, %e: tensor<1xcomplex<f32>>, %f: tensor<0xui8>)
      -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}
""", False),
    # The same signature compiled with tupled arguments: one TUPLE parameter.
    "MixedTupled": ("", True),
    # f32[<=8] (bounded dynamic) -> f32[<=8].
    "Dynamic": ("""\
module @dynamic {
  func.func public @main(%x: tensor<?xf32, #stablehlo.bounds<8>>)
      -> tensor<?xf32, #stablehlo.bounds<8>> {
    return %x : tensor<?xf32, #stablehlo.bounds<8>>
  }
}
""", False),
    # token, f64[2] -> token, f64[2].
    "Token": ("""\
module @token {
  func.func public @main(%t: !stablehlo.token, %x: tensor<2xf64>)
      -> (!stablehlo.token, tensor<2xf64>) {
    return %t, %x : !stablehlo.token, tensor<2xf64>
  }
}
""", False),
}


def compile_module(text: str, tupled: bool) -> bytes:
  """The optimized HloModuleProto jaxlib's CPU backend makes of MLIR `text`."""
  backend = jax.extend.backend.get_backend("cpu")
  devices = xla_client.DeviceList(tuple(backend.devices()[:1]))
  options = xla_client.CompileOptions()
  options.parameter_is_tupled_arguments = tupled
  executable = backend.compile_and_load(text, devices, options)
  return executable.hlo_modules()[0].as_serialized_hlo_module_proto()


def _varint(value: int) -> bytes:
  out = bytearray()
  while True:
    low = value & 0x7F
    value >>= 7
    if value:
      out.append(low | 0x80)
    else:
      out.append(low)
      return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
  value = shift = 0
  while True:
    byte = data[pos]
    pos += 1
    value |= (byte & 0x7F) << shift
    shift += 7
    if byte < 0x80:
      return value, pos


def fields(data: bytes) -> list[tuple[int, int, int | bytes, bytes]]:
  """(number, wire type, value, raw encoding) of every field of a message."""
  out = []
  pos = 0
  while pos < len(data):
    start = pos
    key, pos = _read_varint(data, pos)
    number, wire = key >> 3, key & 7
    if wire == 0:
      value, pos = _read_varint(data, pos)
    elif wire == 2:
      size, pos = _read_varint(data, pos)
      value, pos = data[pos:pos + size], pos + size
    elif wire in (1, 5):
      size = 8 if wire == 1 else 4
      value, pos = data[pos:pos + size], pos + size
    else:
      sys.exit(f"unexpected wire type {wire}")
    out.append((number, wire, value, data[start:pos]))
  return out


def with_config(module: bytes) -> bytes:
  """HloModuleProtoWithConfig { hlo_module = 1 } around `module` (config left unset)."""
  return _varint(1 << 3 | 2) + _varint(len(module)) + module


def without_host_program_shape(module: bytes) -> bytes:
  """`module` with HloModuleProto.host_program_shape (field 4) dropped."""
  return b"".join(raw for number, _, _, raw in fields(module) if number != 4)


def check_layout(module: bytes) -> None:
  """Fails unless the AddOne module has the fields the C++ reader relies on."""
  top = {number: value for number, _, value, _ in fields(module)}
  shape = fields(top[4])  # host_program_shape: ProgramShapeProto.
  parameters = [value for number, _, value, _ in shape if number == 1]
  if len(parameters) != 1:
    sys.exit(f"expected 1 parameter, got {len(parameters)}")
  param = {number: value for number, _, value, _ in fields(parameters[0])}
  f32 = int(xla_client.PrimitiveType.F32)
  if param.get(2) != f32 or param.get(3) != b"\x04":
    sys.exit(f"ShapeProto element_type = 2 / dimensions = 3 check failed: {param}")


def _cc_array(name: str, data: bytes) -> str:
  lines = []
  for start in range(0, len(data), 16):
    lines.append("    " + ", ".join(f"0x{b:02x}" for b in data[start:start + 16]) + ",")
  body = "\n".join(lines)
  return (f"const unsigned char {name}[] = {{\n{body}\n}};\n"
          f"const size_t {name}Size = sizeof({name});\n")


OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hlo_test_data.cc")


def render() -> str:
  """The full text of hlo_test_data.cc."""
  modules = {}
  for name, (text, tupled) in PROGRAMS.items():
    modules[name] = compile_module(text or PROGRAMS["Mixed"][0], tupled)
  check_layout(modules["AddOne"])
  parts = [
      "// GENERATED by xla_plugin/plugin_wrapper/testdata/gen_hlo_test_data.py; do not edit.\n"
      "// Regenerate with\n"
      "//   .venv/bin/python xla_plugin/plugin_wrapper/testdata/gen_hlo_test_data.py\n"
      "#include \"xla_plugin/plugin_wrapper/testdata/hlo_test_data.h\"\n\n"
      "namespace pjrtkit {\nnamespace plugin_wrapper {\nnamespace testdata {\n",
  ]
  for name, module in modules.items():
    parts.append(f"// HloModuleProto of the {name} program.\n" +
                 _cc_array(f"k{name}Module", module))
  parts.append("// The Mixed module as HloModuleProtoWithConfig (format \"hlo_with_config\").\n" +
               _cc_array("kMixedWithConfig", with_config(modules["Mixed"])))
  parts.append("// The Mixed module without host_program_shape.\n" +
               _cc_array("kMixedNoHostShape", without_host_program_shape(modules["Mixed"])))
  parts.append("}  // namespace testdata\n}  // namespace plugin_wrapper\n"
               "}  // namespace pjrtkit\n")
  return "\n".join(parts)


def main() -> None:
  """Writes hlo_test_data.cc next to this script."""
  with open(OUTPUT, "w") as out:
    out.write(render())
  print(f"wrote {OUTPUT}")


if __name__ == "__main__":
  main()
