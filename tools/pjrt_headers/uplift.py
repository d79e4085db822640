"""What changes between two PJRT C API header sets, and the files that follow the pinned one.

  python3 tools/pjrt_headers/uplift.py --new DIR             # report what changed
  python3 tools/pjrt_headers/uplift.py --new DIR --write     # ... and regenerate the files below
  python3 tools/pjrt_headers/uplift.py --write               # regenerate them for --old
  python3 tools/pjrt_headers/uplift.py --check               # exit 1 when one is out of date

DIR (and --old, default .venv/pjrt_headers) is the folder holding xla/pjrt/c/pjrt_c_api.h, or
that folder itself. The report lists the version, the PJRT_Api slots added and removed, per
struct the fields added, removed or retyped, new and removed structs, enum values added or
changed, extension version macros changed, and, from the compiler (layout.py), size changes and
every field whose offset moved. Removed or retyped fields and moved offsets break the ABI.

--write regenerates, from the new set:
  tools/api_coverage/pjrt_api_slots.inc  the X-macro list of the slots, in header order;
  xla_plugin/c_api/slot_decisions.txt    one line per slot: a new slot gets `undecided`;
  docs/reference/slots.md                the slot-decisions table.
--check compares those files with what --write would make from --old (the pinned set).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

if __package__ in (None, ""):  # Run as a script: make `tools` importable.
  sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# pylint: disable=g-import-not-at-top
from tools.pjrt_headers import docs_section
from tools.pjrt_headers import header_model
from tools.pjrt_headers import layout
# pylint: enable=g-import-not-at-top

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLOTS_INC = os.path.join("tools", "api_coverage", "pjrt_api_slots.inc")
DECISIONS = os.path.join("xla_plugin", "c_api", "slot_decisions.txt")
DOCS = os.path.join("docs", "reference", "slots.md")
DOCS_SECTION = "slot-decisions"
DECISION_NAMES = ("pjrtkit", "device", "unimplemented", "undecided")


@dataclasses.dataclass
class StructChange:
  """How one struct present in both sets differs."""

  added: list[str] = dataclasses.field(default_factory=list)  # New fields, in order.
  removed: list[str] = dataclasses.field(default_factory=list)  # ABI break.
  retyped: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)  # ABI break.
  moved: list[tuple[str, int, int]] = dataclasses.field(default_factory=list)  # ABI break.
  # (union index, old offset, new offset) of anonymous unions that moved: ABI break.
  unions_moved: list[tuple[int, int, int]] = dataclasses.field(default_factory=list)
  size: tuple[int, int] | None = None  # (old, new) sizeof when it changed.
  struct_size_field: tuple[str | None, str | None] | None = None  # _STRUCT_SIZE's last field.

  def breaks_abi(self) -> bool:
    """True when a caller built against the old struct could misread the new one."""
    return bool(self.removed or self.retyped or self.moved or self.unions_moved)

  def is_empty(self) -> bool:
    """True when nothing differs."""
    return not (self.added or self.removed or self.retyped or self.moved or self.unions_moved or
                self.size or self.struct_size_field)


@dataclasses.dataclass
class Diff:
  """Everything that differs between an old and a new header set."""

  old_version: tuple[int, int]
  new_version: tuple[int, int]
  old_slots: int
  new_slots: int
  slots_added: list[str]  # In the new header's order.
  slots_removed: list[str]
  structs_added: dict[str, list[str]]  # Header basename -> new structs, in header order.
  structs_removed: list[str]
  structs_changed: dict[str, StructChange]
  enums_added: list[str]
  enum_values_added: dict[str, list[tuple[str, int]]]
  enum_values_removed: dict[str, list[tuple[str, int]]]
  enum_values_changed: dict[str, list[tuple[str, int, int]]]
  extension_versions: dict[str, tuple[int | None, int | None]]

  def abi_breaks(self) -> list[str]:
    """Readable lines, one per ABI-breaking change."""
    lines = [f"slot {name} removed" for name in self.slots_removed]
    for name in self.structs_removed:
      lines.append(f"struct {name} removed")
    for name, change in self.structs_changed.items():
      for field in change.removed:
        lines.append(f"{name}.{field} removed")
      for field, old, new in change.retyped:
        lines.append(f"{name}.{field} retyped: `{old}` -> `{new}`")
      for field, old, new in change.moved:
        lines.append(f"{name}.{field} moved: offset {old} -> {new}")
      for index, old, new in change.unions_moved:
        lines.append(f"{name}: union {index} moved: offset {old} -> {new}")
    for enum, values in self.enum_values_changed.items():
      for value, old, new in values:
        lines.append(f"{enum}: {value} changed value {old} -> {new}")
    for enum, values in self.enum_values_removed.items():
      for value, number in values:
        lines.append(f"{enum}: {value} = {number} removed")
    return lines


def _struct_change(old: header_model.Struct, new: header_model.Struct,
                   old_layout: layout.StructLayout | None, new_layout: layout.StructLayout | None,
                   old_traits: str | None, new_traits: str | None) -> StructChange:
  """How `new` differs from `old` (same name)."""
  change = StructChange()
  old_fields = {f.name: f for f in old.fields}
  new_fields = {f.name: f for f in new.fields}
  change.added = [f.name for f in new.fields if f.name not in old_fields]
  change.removed = [f.name for f in old.fields if f.name not in new_fields]
  for field in old.fields:
    moved_to = new_fields.get(field.name)
    if moved_to is not None and moved_to.declaration != field.declaration:
      change.retyped.append((field.name, field.declaration, moved_to.declaration))
  if old_layout is not None and new_layout is not None:
    for field in old.fields:
      if field.name in new_fields:
        before = old_layout.fields[field.name].offset
        after = new_layout.fields[field.name].offset
        if before != after:
          change.moved.append((field.name, before, after))
    for index, (before, after) in enumerate(zip(old_layout.unions, new_layout.unions)):
      if before.offset != after.offset:
        change.unions_moved.append((index, before.offset, after.offset))
    if old_layout.size != new_layout.size:
      change.size = (old_layout.size, new_layout.size)
  if old_traits != new_traits:
    change.struct_size_field = (old_traits, new_traits)
  return change


def _new_structs_by_header(old: header_model.HeaderSet,
                           new: header_model.HeaderSet) -> dict[str, list[str]]:
  """{header: structs of `new` that `old` lacks}, headers in reading order."""
  out: dict[str, list[str]] = {}
  for name, struct in new.structs.items():
    if name not in old.structs:
      out.setdefault(struct.header, []).append(name)
  return out


def compare(old: header_model.HeaderSet, new: header_model.HeaderSet,
            old_layouts: dict[str, layout.StructLayout] | None = None,
            new_layouts: dict[str, layout.StructLayout] | None = None) -> Diff:
  """What differs from `old` to `new`; offsets and sizes only when both layouts are given."""
  old_layouts = old_layouts or {}
  new_layouts = new_layouts or {}
  changed: dict[str, StructChange] = {}
  for name, struct in new.structs.items():
    if name in old.structs:
      change = _struct_change(old.structs[name], struct, old_layouts.get(name),
                              new_layouts.get(name), old.struct_traits.get(name),
                              new.struct_traits.get(name))
      if not change.is_empty():
        changed[name] = change
  values_added: dict[str, list[tuple[str, int]]] = {}
  values_removed: dict[str, list[tuple[str, int]]] = {}
  values_changed: dict[str, list[tuple[str, int, int]]] = {}
  for name, enum in new.enums.items():
    if name not in old.enums:
      continue
    before = dict(old.enums[name].values)
    after = dict(enum.values)
    added = [(v, n) for v, n in enum.values if v not in before]
    removed = [(v, n) for v, n in old.enums[name].values if v not in after]
    moved = [(v, before[v], n) for v, n in enum.values if v in before and before[v] != n]
    if added:
      values_added[name] = added
    if removed:
      values_removed[name] = removed
    if moved:
      values_changed[name] = moved
  macros = sorted(set(old.extension_versions) | set(new.extension_versions))
  versions = {m: (old.extension_versions.get(m), new.extension_versions.get(m)) for m in macros
              if old.extension_versions.get(m) != new.extension_versions.get(m)}
  return Diff(
      old_version=old.version,
      new_version=new.version,
      old_slots=len(old.slots),
      new_slots=len(new.slots),
      slots_added=[s for s in new.slots if s not in old.slots],
      slots_removed=[s for s in old.slots if s not in new.slots],
      structs_added=_new_structs_by_header(old, new),
      structs_removed=[s for s in old.structs if s not in new.structs],
      structs_changed=changed,
      enums_added=[e for e in new.enums if e not in old.enums],
      enum_values_added=values_added,
      enum_values_removed=values_removed,
      enum_values_changed=values_changed,
      extension_versions=versions,
  )


def format_report(diff: Diff) -> str:
  """The report uplift.py prints."""
  old_v = f"{diff.old_version[0]}.{diff.old_version[1]}"
  new_v = f"{diff.new_version[0]}.{diff.new_version[1]}"
  out = [f"PJRT C API {old_v} -> {new_v}"]
  if diff.old_version[0] != diff.new_version[0]:
    out.append("  PJRT_API_MAJOR changed: the ABI is not compatible by the header's own rule")
  out.append(f"Slots: {diff.old_slots} -> {diff.new_slots} "
             f"({len(diff.slots_added)} added, {len(diff.slots_removed)} removed)")
  out += [f"  + {s}" for s in diff.slots_added]
  out += [f"  - {s}" for s in diff.slots_removed]
  added = sum(len(names) for names in diff.structs_added.values())
  out.append(f"Structs: {added} new, {len(diff.structs_removed)} removed, "
             f"{len(diff.structs_changed)} changed")
  for header, names in diff.structs_added.items():
    out.append(f"  new in {header} ({len(names)}): " + ", ".join(names))
  out += [f"  removed {s}" for s in diff.structs_removed]
  for name, change in diff.structs_changed.items():
    parts = []
    if name == "PJRT_Api" and change.added == diff.slots_added:
      parts.append(f"+ the {len(change.added)} slots above")
    elif change.added:
      parts.append("+ " + ", ".join(change.added))
    if change.removed:
      parts.append("- " + ", ".join(change.removed))
    if change.retyped:
      parts.append("retyped " + ", ".join(f for f, _, _ in change.retyped))
    if change.moved:
      parts.append("moved " + ", ".join(f"{f} {a}->{b}" for f, a, b in change.moved))
    if change.unions_moved:
      parts.append("moved " + ", ".join(f"union {i} {a}->{b}" for i, a, b in change.unions_moved))
    if change.size:
      parts.append(f"size {change.size[0]} -> {change.size[1]}")
    if change.struct_size_field:
      old_f, new_f = change.struct_size_field
      parts.append(f"_STRUCT_SIZE ends at {old_f or '(none)'} -> {new_f or '(none)'}")
    out.append(f"  {name}: " + "; ".join(parts))
  out.append(f"Enums: {len(diff.enums_added)} new")
  out += [f"  new {e}" for e in diff.enums_added]
  for enum, values in diff.enum_values_added.items():
    out.append(f"  {enum}: + " + ", ".join(f"{v} = {n}" for v, n in values))
  out.append(f"Extension versions: {len(diff.extension_versions)} changed")
  for macro, (before, after) in diff.extension_versions.items():
    out.append(f"  {macro}: {'(none)' if before is None else before} -> "
               f"{'(none)' if after is None else after}")
  breaks = diff.abi_breaks()
  out.append(f"ABI breaks: {len(breaks)}" + ("" if breaks else " (no field removed, retyped "
                                                              "or moved)"))
  out += [f"  {line}" for line in breaks]
  return "\n".join(out) + "\n"


# ---- Files that follow the pinned header --------------------------------------------------------


def render_inc(model: header_model.HeaderSet) -> str:
  """tools/api_coverage/pjrt_api_slots.inc for `model`."""
  lines = [
      "// GENERATED by tools/pjrt_headers/uplift.py from pjrt_c_api.h "
      f"(PJRT C API {model.version_string}); do not edit.",
      "// Regenerate: python3 tools/pjrt_headers/uplift.py --new <header folder> --write",
      "//",
      "// One PJRT_API_SLOT(name) per PJRT_Api function slot, in header order. Define",
      "// PJRT_API_SLOT before including this file; it is #undef'd at the end.",
      f"// {len(model.slots)} slots.",
  ]
  lines += [f"PJRT_API_SLOT({name})" for name in model.slots]
  lines.append("#undef PJRT_API_SLOT")
  return "\n".join(lines) + "\n"


@dataclasses.dataclass(frozen=True)
class Decision:
  """One line of slot_decisions.txt."""

  slot: str
  decision: str
  note: str

  def line(self) -> str:
    """The line as written in the file."""
    return f"{self.slot}\t{self.decision}\t{self.note}"


def parse_decisions(text: str) -> tuple[list[str], list[Decision]]:
  """(the leading comment lines, the decisions) of slot_decisions.txt.

  Raises ValueError on a line that is not SLOT<TAB>DECISION<TAB>NOTE with a known decision.
  """
  comments: list[str] = []
  decisions: list[Decision] = []
  for number, line in enumerate(text.splitlines(), 1):
    if not line.strip() or line.startswith("#"):
      if not decisions:
        comments.append(line)
      continue
    parts = line.split("\t")
    if len(parts) != 3 or parts[1] not in DECISION_NAMES:
      raise ValueError(f"{DECISIONS}:{number}: expected SLOT<TAB>DECISION<TAB>NOTE with "
                       f"DECISION one of {', '.join(DECISION_NAMES)}: {line!r}")
    decisions.append(Decision(*parts))
  return comments, decisions


def updated_decisions(text: str, model: header_model.HeaderSet) -> tuple[str, list[str], list[str]]:
  """(slot_decisions.txt for `model`, slots added as undecided, slots dropped).

  Every slot of the header keeps its line, in header order; a new slot gets `undecided`; lines
  of slots the header no longer has are dropped. The leading comment block is kept.
  """
  comments, decisions = parse_decisions(text)
  by_slot = {d.slot: d for d in decisions}
  lines = list(comments)
  added = []
  for slot in model.slots:
    if slot not in by_slot:
      added.append(slot)
    lines.append(by_slot.get(slot, Decision(slot, "undecided", "")).line())
  dropped = [d.slot for d in decisions if d.slot not in model.slots]
  return "\n".join(lines) + "\n", added, dropped


def render_docs_table(model: header_model.HeaderSet, decisions_text: str) -> str:
  """The slot-decisions section of docs/reference/slots.md."""
  _, decisions = parse_decisions(decisions_text)
  by_slot = {d.slot: d for d in decisions}
  lines = [f"PJRT C API {model.version_string}: {len(model.slots)} slots, decided in "
           f"`{DECISIONS}`.", "",
           "| # | PJRT_Api slot | decision | note |", "| --- | --- | --- | --- |"]
  counts = dict.fromkeys(DECISION_NAMES, 0)
  for index, slot in enumerate(model.slots, 1):
    decision = by_slot.get(slot, Decision(slot, "undecided", ""))
    counts[decision.decision] += 1
    note = decision.note.replace("|", "\\|")
    lines.append(f"| {index} | `{slot}` | {decision.decision} | {note} |")
  lines += ["", ", ".join(f"{name}: {counts[name]}" for name in DECISION_NAMES) + "."]
  return "\n".join(lines) + "\n"


def _read(path: str) -> str:
  """The text of `path` (UTF-8)."""
  with open(path, encoding="utf-8") as f:
    return f.read()


def _write(path: str, text: str) -> None:
  """Writes `text` to `path` (UTF-8)."""
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)


def write_files(model: header_model.HeaderSet, repo: str) -> list[str]:
  """Regenerates the three files under `repo` for `model`; returns what was done."""
  done = []
  inc = render_inc(model)
  if _read(os.path.join(repo, SLOTS_INC)) != inc:
    _write(os.path.join(repo, SLOTS_INC), inc)
    done.append(f"wrote {SLOTS_INC} ({len(model.slots)} slots)")
  decisions_path = os.path.join(repo, DECISIONS)
  decisions, added, dropped = updated_decisions(_read(decisions_path), model)
  if _read(decisions_path) != decisions:
    _write(decisions_path, decisions)
    done.append(f"wrote {DECISIONS}: {len(added)} undecided added, {len(dropped)} dropped")
  done += [f"  undecided: {slot}" for slot in added]
  done += [f"  dropped (no longer in the header): {slot}" for slot in dropped]
  docs_path = os.path.join(repo, DOCS)
  docs = docs_section.replace(_read(docs_path), DOCS_SECTION, render_docs_table(model, decisions))
  if _read(docs_path) != docs:
    _write(docs_path, docs)
    done.append(f"wrote {DOCS} ({DOCS_SECTION})")
  return done


def check_files(model: header_model.HeaderSet, repo: str) -> list[str]:
  """What is out of date under `repo` for `model` (empty when all is current)."""
  problems = []
  if _read(os.path.join(repo, SLOTS_INC)) != render_inc(model):
    problems.append(f"{SLOTS_INC} does not list the {len(model.slots)} slots of PJRT C API "
                    f"{model.version_string}")
  decisions_text = _read(os.path.join(repo, DECISIONS))
  try:
    decisions, added, dropped = updated_decisions(decisions_text, model)
  except ValueError as error:
    return problems + [str(error)]
  if decisions != decisions_text:
    problems.append(f"{DECISIONS} is out of date: {len(added)} slot(s) missing "
                    f"({', '.join(added) or 'none'}), {len(dropped)} not in the header "
                    f"({', '.join(dropped) or 'none'}), or not in header order")
  try:
    docs = docs_section.extract(_read(os.path.join(repo, DOCS)), DOCS_SECTION)
  except docs_section.SectionError as error:
    return problems + [f"{DOCS}: {error}"]
  if docs != render_docs_table(model, decisions_text):
    problems.append(f"{DOCS}: the {DOCS_SECTION} table differs from {DECISIONS}")
  return problems


def main(argv: list[str]) -> int:
  """Command-line entry point."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--new", help="the newer header set (default: --old)")
  parser.add_argument("--old", default=os.path.join(REPO, ".venv", "pjrt_headers"),
                      help="the current header set (default: .venv/pjrt_headers)")
  parser.add_argument("--write", action="store_true", help="regenerate the files from --new")
  parser.add_argument("--check", action="store_true",
                      help="exit 1 when a file is out of date with --old")
  parser.add_argument("--repo", default=REPO, help="the repository root (default: this one)")
  args = parser.parse_args(argv)
  if args.write and args.check:
    parser.error("--write and --check exclude each other")
  old = header_model.load(args.old)
  if args.check:
    problems = check_files(old, args.repo)
    for problem in problems:
      print(f"uplift --check: {problem}", file=sys.stderr)
    if problems:
      print("uplift --check: run `python3 tools/pjrt_headers/uplift.py --write` and commit "
            "(tools/pjrt_headers/README.md)", file=sys.stderr)
      return 1
    print(f"uplift --check: the slot list, decisions and docs follow PJRT C API "
          f"{old.version_string} ({len(old.slots)} slots)")
    return 0
  new = header_model.load(args.new) if args.new else old
  diff = compare(old, new, layout.compute(old), layout.compute(new))
  sys.stdout.write(format_report(diff))
  if args.write:
    for line in write_files(new, args.repo) or ["all files already current"]:
      print(line)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
