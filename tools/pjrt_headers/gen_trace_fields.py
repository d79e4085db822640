"""Writes trace_fields.inc, the header-derived tables of PJRTKIT_TRACE (xla_plugin/c_api/trace).

  gen_trace_fields.py --out trace_fields.inc DIR

DIR is the folder holding xla/pjrt/c/pjrt_c_api.h, or that c folder itself. For pjrt_c_api.h it
writes:

- PJRTKIT_TRACE_SLOTS(X): X(slot) for every PJRT_Api slot, in header order;
- one TraceFields<Args> specialization per slot's Args struct, whose Visit(v) calls
  v.Field(name, &Args::field, direction) or v.Array(name, count_name, &Args::pointer,
  &Args::count, direction) for each member but struct_size and extension_start. The direction is the header's
  own annotation (`// out`, `// in/out`); a pointer member X is paired with its count member
  `X_size`, `num_X` or `num_<last word of X>` when the struct has one;
- TraceEnumName(value) for every enum of pjrt_c_api.h: the enumerator's name without the prefix
  its enumerators share (PJRT_Buffer_Type_F32 -> "F32"), or nullptr for an unknown value.

Bazel runs it at build time (xla_plugin/c_api/trace/BUILD), so the tables always match the
header the plugin is built with.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

if __package__ in (None, ""):  # Run as a script: make `tools` importable.
  sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tools.pjrt_headers import header_model  # pylint: disable=g-import-not-at-top

_SKIPPED = ("struct_size", "extension_start")


# Members the callee writes that the header does not mark `// out` (checked to exist).
_UNANNOTATED_OUTPUTS = (
    ("PJRT_Executable_OutputMemoryKinds_Args", "num_outputs"),
    ("PJRT_Executable_OutputDimensions_Args", "num_outputs"),
    ("PJRT_Executable_ParameterMemoryKinds_Args", "num_parameters"),
)


def directions(raw: str) -> dict[tuple[str, str], str]:
  """(struct, member) -> "kOut" / "kInOut" for members annotated `// out` or `// in/out` (and
  the _UNANNOTATED_OUTPUTS)."""
  out: dict[tuple[str, str], str] = {}
  for match in re.finditer(r"\bstruct\s+(\w+)\s*\{", raw):
    depth, pos = 1, match.end()
    while depth and pos < len(raw):
      depth += raw[pos] == "{"
      depth -= raw[pos] == "}"
      pos += 1
    for line in raw[match.end():pos - 1].split("\n"):
      member = re.match(r"\s*([^/;(]+?)\s*;\s*//\s*(.*)$", line)
      if not member:
        continue
      name = re.search(r"(\w+)\s*(\[[^\]]*\]\s*)*$", member.group(1))
      if not name:
        continue
      name = name.group(1)
      comment = member.group(2)
      if re.search(r"\bin/out\b|\bin\b.*\bout\b", comment):
        out[(match.group(1), name)] = "kInOut"
      elif re.match(r"out\b", comment):
        out[(match.group(1), name)] = "kOut"
  for key in _UNANNOTATED_OUTPUTS:
    out.setdefault(key, "kOut")
  return out


def count_member(name: str, names: list[str]) -> str | None:
  """The member counting the array `name`, or None."""
  for candidate in (name + "_size", "num_" + name, "num_" + name.split("_")[-1]):
    if candidate in names and candidate != name:
      return candidate
  return None


def fields_source(struct: header_model.Struct, direction: dict[tuple[str, str], str]) -> list[str]:
  """The TraceFields<Args> specialization of `struct`."""
  names = [f.name for f in struct.fields if f.union is None]
  counts = set()
  calls = []
  for field in struct.fields:
    if field.union is not None or field.name in _SKIPPED or field.name in counts:
      continue
    d = "Direction::" + direction.get((struct.name, field.name), "kIn")
    count = count_member(field.name, names) if "*" in field.declaration else None
    if count and count not in counts and not any(c == count for c in counts):
      counts.add(count)
      calls.append(f'    v.Array("{field.name}", "{count}", &A::{field.name}, &A::{count}, {d});')
    else:
      calls.append(f'    v.Field("{field.name}", &A::{field.name}, {d});')
  # A count member listed before its array was emitted as a Field: drop it.
  calls = [c for c in calls if not any(f'v.Field("{n}",' in c for n in counts)]
  return [
      "template <>",
      f"struct TraceFields<{struct.name}> {{",
      f"  using A = {struct.name};",
      "  template <typename V>",
      "  static void Visit(V& v) {",
      *calls,
      "  }",
      "};",
      "",
  ]


def enum_source(enum: header_model.Enum) -> list[str]:
  """TraceEnumName for `enum`."""
  names = [n for n, _ in enum.values]
  prefix = os.path.commonprefix(names)
  if "_" in prefix:
    prefix = prefix[:prefix.rindex("_") + 1]
  else:
    prefix = ""
  seen = set()
  cases = []
  for name, value in enum.values:
    if value in seen:
      continue
    seen.add(value)
    cases.append(f'    case {value}: return "{name[len(prefix):] or name}";')
  return [
      f"inline const char* TraceEnumName({enum.name} value) {{",
      "  switch (static_cast<long long>(value)) {",
      *cases,
      "    default: return nullptr;",
      "  }",
      "}",
      "",
  ]


def source(model: header_model.HeaderSet, raw: str) -> str:
  """The text of trace_fields.inc."""
  direction = directions(raw)
  out = [
      "// GENERATED by tools/pjrt_headers/gen_trace_fields.py from pjrt_c_api.h "
      f"(PJRT C API {model.version_string}); do not edit.",
      "// Included by xla_plugin/c_api/trace/trace_fields.h inside namespace pjrtkit::capi::trace.",
      "",
      "#define PJRTKIT_TRACE_SLOTS(X) \\",
  ]
  out += [f"  X({slot}) \\" for slot in model.slots]
  out += ["", ""]
  for slot in model.slots:
    struct = model.structs.get(header_model.args_struct_of_slot(slot))
    if struct is None or struct.header != "pjrt_c_api.h":
      raise ValueError(f"slot {slot} has no {slot}_Args in pjrt_c_api.h")
    out += fields_source(struct, direction)
  for struct_name, member in _UNANNOTATED_OUTPUTS:
    if member not in model.structs[struct_name].field_names():
      raise ValueError(f"{struct_name} has no member {member} (_UNANNOTATED_OUTPUTS)")
  for enum in model.enums.values():
    if enum.header == "pjrt_c_api.h" and enum.values:
      out += enum_source(enum)
  return "\n".join(out)


def main(argv: list[str]) -> int:
  """Command-line entry point."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--out", required=True, help="the .inc file to write")
  parser.add_argument("directory", help="the header set")
  args = parser.parse_args(argv)
  model = header_model.load(args.directory)
  with open(os.path.join(model.c_dir, "pjrt_c_api.h"), encoding="utf-8") as f:
    raw = f.read()
  with open(args.out, "w", encoding="utf-8") as f:
    f.write(source(model, raw))
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
