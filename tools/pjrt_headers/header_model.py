"""A model of a PJRT C API header set: the PJRT_Api slots, the structs and their fields, the
enums and the extension versions, read from the headers' text.

The PJRT headers are regular: every struct is `struct NAME { ... };` or `typedef struct NAME
{ ... } NAME;`, fields are one declaration each (anonymous unions hold alternatives), and every
slot is `_PJRT_API_STRUCT_FIELD(NAME)` inside `PJRT_Api`. That is all this parser relies on; it
fails loudly on anything else it is asked to read, so a header that stops being regular is
noticed, not misread. Byte sizes and offsets come from the compiler (layout.py), not from here.
"""

from __future__ import annotations

import dataclasses
import os
import re

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


@dataclasses.dataclass(frozen=True)
class Field:
  """One struct member: its name, its declaration text, and the union it sits in (if any)."""

  name: str
  declaration: str
  union: int | None = None  # Index of the anonymous union among the struct's unions.


@dataclasses.dataclass(frozen=True)
class Struct:
  """A struct with a body: its members in declaration order and the file declaring it."""

  name: str
  fields: tuple[Field, ...]
  header: str  # The file it is declared in (basename).

  def field_names(self) -> list[str]:
    """The member names, in declaration order."""
    return [f.name for f in self.fields]

  def field(self, name: str) -> Field | None:
    """The member called `name`, or None."""
    for f in self.fields:
      if f.name == name:
        return f
    return None


@dataclasses.dataclass(frozen=True)
class Enum:
  """A `typedef enum { ... } NAME;` with the value of every enumerator."""

  name: str
  values: tuple[tuple[str, int], ...]  # (enumerator, value), in declaration order.
  header: str


@dataclasses.dataclass
class HeaderSet:
  """Everything uplift.py compares between two header sets."""

  version: tuple[int, int]
  slots: list[str]
  structs: dict[str, Struct]
  enums: dict[str, Enum]
  extension_versions: dict[str, int]  # PJRT_API_*_EXTENSION_VERSION macros.
  headers: list[str]  # Basenames of the files read.
  # NAME -> the field its NAME_STRUCT_SIZE ends at (PJRT_DEFINE_STRUCT_TRAITS, or an enum
  # `NAME_STRUCT_SIZE = PJRT_STRUCT_SIZE(NAME, FIELD)`).
  struct_traits: dict[str, str] = dataclasses.field(default_factory=dict)
  c_dir: str = ""  # The folder holding pjrt_c_api.h.
  # The folder to pass as `-I` and the prefix of `#include` lines: (DIR, "xla/pjrt/c/") when the
  # set sits in DIR/xla/pjrt/c, else (c_dir, "").
  include_root: str = ""
  include_prefix: str = ""

  @property
  def version_string(self) -> str:
    """"MAJOR.MINOR"."""
    return f"{self.version[0]}.{self.version[1]}"

  def include_lines(self) -> list[str]:
    """`#include` lines for every header read, to compile with `-I include_root`."""
    return [f'#include "{self.include_prefix}{name}"' for name in self.headers]

  def extension_structs(self) -> dict[str, str]:
    """PJRT_Extension_Type_X enumerator -> the struct of that extension, for the types whose
    struct this set declares.

    An extension struct starts with `PJRT_Extension_Base base`; its name, without `PJRT_` and a
    trailing `_Extension`, matches the enumerator's suffix once underscores and case are ignored
    (Gpu_Custom_Call -> PJRT_Gpu_Custom_Call, XlaTransform -> PJRT_Xla_Transform_Extension).
    """
    def key(text: str) -> str:
      return text.replace("_", "").lower()

    by_key: dict[str, str] = {}
    for struct in self.structs.values():
      first = struct.fields[0] if struct.fields else None
      if first is None or first.declaration != "PJRT_Extension_Base base":
        continue
      stem = struct.name[len("PJRT_"):] if struct.name.startswith("PJRT_") else struct.name
      stem = stem[:-len("_Extension")] if stem.endswith("_Extension") else stem
      by_key.setdefault(key(stem), struct.name)
    out: dict[str, str] = {}
    enum = self.enums.get("PJRT_Extension_Type")
    for name, _ in enum.values if enum else ():
      found = by_key.get(key(name[len("PJRT_Extension_Type_"):]))
      if found:
        out[name] = found
    return out


def strip_comments(text: str) -> str:
  """`text` without // and /* */ comments."""
  return _COMMENT.sub("", text)


def parse_struct_traits(text: str) -> dict[str, str]:
  """NAME -> last field of every `PJRT_DEFINE_STRUCT_TRAITS(NAME, FIELD)` and every
  `NAME_STRUCT_SIZE = PJRT_STRUCT_SIZE(NAME, FIELD)` in `text` (comments stripped)."""
  out: dict[str, str] = {}
  for name, field in re.findall(r"PJRT_DEFINE_STRUCT_TRAITS\(\s*(\w+)\s*,\s*(\w+)\s*\)", text):
    if name != "sname":  # The macro's own definition.
      out[name] = field
  for macro, name, field in re.findall(
      r"\b(\w+)_STRUCT_SIZE\s*=\s*PJRT_STRUCT_SIZE\(\s*(\w+)\s*,\s*(\w+)\s*\)", text):
    if macro == name:
      out[name] = field
  return out


def _field_name(declaration: str) -> str:
  """The declared name of one member declaration ("void (*destroy)(PJRT_Error*)" -> destroy)."""
  function_pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", declaration)
  if function_pointer:
    return function_pointer.group(1)
  match = re.search(r"(\w+)\s*(\[[^\]]*\]\s*)*$", declaration)
  if not match:
    raise ValueError(f"cannot read a member name from {declaration!r}")
  return match.group(1)


def _split_members(body: str) -> list[tuple[str, int | None]]:
  """The member declarations of a struct body, with the index of the union each is in."""
  members: list[tuple[str, int | None]] = []
  unions = 0
  pos = 0
  while pos < len(body):
    union = re.match(r"\s*union\s*\{", body[pos:])
    if union:
      end = body.index("}", pos + union.end())
      for declaration in body[pos + union.end():end].split(";"):
        if declaration.strip():
          members.append((" ".join(declaration.split()), unions))
      unions += 1
      semicolon = body.index(";", end)
      if body[end + 1:semicolon].strip():
        raise ValueError(f"named unions are not supported: {body[pos:semicolon]!r}")
      pos = semicolon + 1
      continue
    semicolon = body.find(";", pos)
    if semicolon < 0:
      if body[pos:].strip():
        raise ValueError(f"trailing text in a struct body: {body[pos:]!r}")
      break
    declaration = " ".join(body[pos:semicolon].split())
    if declaration:
      members.append((declaration, None))
    pos = semicolon + 1
  return members


def parse_structs(text: str, header: str) -> dict[str, Struct]:
  """Every `struct NAME { ... }` with a body in `text` (comments stripped)."""
  out: dict[str, Struct] = {}
  for match in re.finditer(r"\bstruct\s+(\w+)\s*\{", text):
    name = match.group(1)
    depth, pos = 1, match.end()
    while depth:
      char = text[pos]
      depth += char == "{"
      depth -= char == "}"
      pos += 1
    body = text[match.end():pos - 1]
    fields = []
    for declaration, union in _split_members(body):
      declaration = re.sub(r"^PJRT_NO_DISCARD\s+", "", declaration)
      slot = re.match(r"_PJRT_API_STRUCT_FIELD\(\s*(\w+)\s*\)$", declaration)
      if slot:
        fields.append(Field(slot.group(1), f"{slot.group(1)}* {slot.group(1)}", union))
      else:
        fields.append(Field(_field_name(declaration), declaration, union))
    out[name] = Struct(name, tuple(fields), header)
  return out


def _constant(expression: str, known: dict[str, int]) -> int:
  """The value of an enumerator's initializer: integers (with u/l suffixes), earlier
  enumerators, and + - | << >> ( ) between them."""
  tokens = re.findall(r"0[xX][0-9a-fA-F]+|\d+|\w+|<<|>>|[-+|()]|\S", expression)
  python = []
  for token in tokens:
    if re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", token):
      python.append(str(int(token, 0)))
    elif re.fullmatch(r"\d+[uUlL]+", token):
      python.append(token.rstrip("uUlL"))
    elif token in known:
      python.append(str(known[token]))
    elif token in ("<<", ">>", "-", "+", "|", "(", ")"):
      python.append(token)
    elif token in ("u", "U", "l", "L", "ul", "UL", "ull", "ULL") and python:
      continue  # A suffix the tokenizer split off.
    else:
      raise ValueError(f"cannot evaluate enumerator value {expression!r}")
  return int(eval(" ".join(python), {"__builtins__": {}}))  # Only integers and operators.


def parse_enums(text: str, header: str) -> dict[str, Enum]:
  """Every `typedef enum { ... } NAME;` (values counted as C does)."""
  out: dict[str, Enum] = {}
  for match in re.finditer(r"typedef\s+enum\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
    values, next_value = [], 0
    for item in match.group(1).split(","):
      item = item.strip()
      if not item:
        continue
      name, _, value = item.partition("=")
      if value.strip():
        next_value = _constant(value, dict(values))
      values.append((name.strip(), next_value))
      next_value += 1
    out[match.group(2)] = Enum(match.group(2), tuple(values), header)
  return out


def parse_slots(structs: dict[str, Struct]) -> list[str]:
  """The PJRT_Api function slots (its `_PJRT_API_STRUCT_FIELD` members), in order."""
  api = structs.get("PJRT_Api")
  if api is None:
    raise ValueError("no `struct PJRT_Api { ... }` found")
  slots = [f.name for f in api.fields if f.declaration == f"{f.name}* {f.name}"]
  if not slots:
    raise ValueError("PJRT_Api has no _PJRT_API_STRUCT_FIELD entries")
  return slots


def find_c_dir(directory: str) -> tuple[str, str, str]:
  """(c_dir, include_root, include_prefix) of a header set given as `directory`: the folder
  holding xla/pjrt/c/pjrt_c_api.h, or the folder holding pjrt_c_api.h itself."""
  nested = os.path.join(directory, "xla", "pjrt", "c")
  if os.path.isfile(os.path.join(nested, "pjrt_c_api.h")):
    return nested, directory, "xla/pjrt/c/"
  if os.path.isfile(os.path.join(directory, "pjrt_c_api.h")):
    parts = os.path.normpath(os.path.abspath(directory)).split(os.sep)
    if parts[-3:] == ["xla", "pjrt", "c"]:  # The c folder of a nested set.
      return directory, os.sep.join(parts[:-3]) or os.sep, "xla/pjrt/c/"
    return directory, directory, ""
  raise FileNotFoundError(f"no pjrt_c_api.h in {directory} or {nested}")


def header_names(c_dir: str) -> list[str]:
  """The headers of the set in `c_dir`: pjrt_c_api.h, every pjrt_c_api_*_extension.h, and the
  headers of `c_dir` they include (pjrt_c_api_device_event.h), in that order. Other files (a full
  include tree also holds C++ headers such as pjrt_c_api_helpers.h) are not part of the set."""
  names = ["pjrt_c_api.h"] + sorted(
      n for n in os.listdir(c_dir) if re.fullmatch(r"pjrt_c_api_\w+_extension\.h", n))
  index = 0
  while index < len(names):
    with open(os.path.join(c_dir, names[index]), encoding="utf-8") as f:
      text = strip_comments(f.read())
    for included in re.findall(r'^\s*#\s*include\s+"(?:xla/pjrt/c/)?([\w.]+\.h)"', text, re.M):
      if included not in names and os.path.isfile(os.path.join(c_dir, included)):
        names.append(included)
    index += 1
  return names


def load(directory: str) -> HeaderSet:
  """Reads the header set of `header_names`: pjrt_c_api.h, its extension headers and the
  headers they include from the same folder.

  `directory` is the folder holding xla/pjrt/c/pjrt_c_api.h, or the folder holding
  pjrt_c_api.h itself.
  """
  c_dir, include_root, include_prefix = find_c_dir(os.path.abspath(directory))
  main = os.path.join(c_dir, "pjrt_c_api.h")
  names = header_names(c_dir)
  structs: dict[str, Struct] = {}
  enums: dict[str, Enum] = {}
  extension_versions: dict[str, int] = {}
  struct_traits: dict[str, str] = {}
  version = None
  for name in names:
    with open(os.path.join(c_dir, name), encoding="utf-8") as f:
      raw = f.read()
    text = strip_comments(raw)
    structs.update(parse_structs(text, name))
    enums.update(parse_enums(text, name))
    struct_traits.update(parse_struct_traits(text))
    for macro, value in re.findall(r"#define\s+(PJRT_API_\w+_EXTENSION_VERSION)\s+(\d+)", text):
      extension_versions[macro] = int(value)
    if name == "pjrt_c_api.h":
      major = re.search(r"#define\s+PJRT_API_MAJOR\s+(\d+)", text)
      minor = re.search(r"#define\s+PJRT_API_MINOR\s+(\d+)", text)
      if not (major and minor):
        raise ValueError(f"{main} defines no PJRT_API_MAJOR / PJRT_API_MINOR")
      version = (int(major.group(1)), int(minor.group(1)))
  assert version is not None
  return HeaderSet(version, parse_slots(structs), structs, enums, extension_versions, names,
                   struct_traits, c_dir, include_root, include_prefix)


def args_struct_of_slot(slot: str) -> str:
  """The Args struct a slot takes: PJRT_Foo_Bar -> PJRT_Foo_Bar_Args."""
  return slot + "_Args"
