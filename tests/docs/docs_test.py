"""The docs say only what is true of this checkout.

Checked over README.md, CHANGELOG.md, docs/**/*.md and every README.md under xla_plugin/, python/,
kernels/, tools/ and tests/:

* every backticked repository path (a string that starts with a top-level folder or file of this
  repository and contains a '/' or ends in a known extension) exists; globs (`*`) and brace lists
  (`{md,json}`) must match; placeholders (`NAME`, `<...>`) and the few paths made at run time are
  listed in ALLOWED with the reason;
* every Bazel label (`//pkg:target`, `//pkg/...`) names a package that exists;
* every relative markdown link resolves, and its `#anchor` names a heading of the target;
* README.md is at most MAX_README_LINES lines;
* no doc contains "session" or "wip/" (docs hold current facts, not a record of how work went);
* the counts of COUNTS equal what the repository says (other counts live in generated sections,
  which their own tools' tests check, or are measurements that name their results file);
* every ``*_test.py`` under those folders runs its tests when run as a program (Bazel's py_test
  runs the file as ``__main__``: a file without the ``pytest.main`` block would pass running
  nothing).

The files are read from the source tree: the runfiles' README.md is a link into it.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from pathlib import Path

import pytest

MAX_README_LINES = 250
FOLDERS_WITH_READMES = ("xla_plugin", "python", "kernels", "tools", "tests")
EXTENSIONS = (".md", ".py", ".h", ".cc", ".c", ".sh", ".txt", ".json", ".png", ".bzl", ".lock",
              ".toml", ".so", ".csv", ".log", ".lds", ".supp")
ALLOWED = {
    # Made by tools/gpu/make_kit.sh on the machine that runs the GPU suites.
    "build/kit": "a kit folder written at run time by tools/gpu/make_kit.sh",
    # Written by the wheel build.
    "dist/": "written by tools/build_wheels.sh",
}
PLACEHOLDER = re.compile(r"<[^>]*>|\bNAME\b|\.\.\.|\bBRANCH\b|\bCOPY\d*\b|\bDIR\b|\bFILE\b")


def _source_root() -> Path:
  srcdir = os.environ.get("TEST_SRCDIR")
  if srcdir:
    readme = Path(srcdir) / os.environ.get("TEST_WORKSPACE", "pjrtkit") / "README.md"
    return Path(os.path.realpath(readme)).parent
  return Path(__file__).resolve().parents[2]


ROOT = _source_root()


def _doc_files() -> list[Path]:
  docs = [ROOT / "README.md", ROOT / "CHANGELOG.md"]
  docs += sorted((ROOT / "docs").rglob("*.md"))
  for folder in FOLDERS_WITH_READMES:
    docs += sorted((ROOT / folder).rglob("README.md"))
  return [d for d in docs if "bazel-" not in str(d.relative_to(ROOT))]


DOCS = _doc_files()


def _rel(path: Path) -> str:
  return str(path.relative_to(ROOT))


def _top_level_names() -> set[str]:
  names = {p.name for p in ROOT.iterdir()
           if not p.name.startswith(("bazel-", ".")) and p.name not in ("build", "dist")}
  return names | {".ci", ".bazelrc", ".bazelversion"}


TOP = _top_level_names()


def _code_spans(text: str) -> list[str]:
  """Inline code spans and the lines of fenced blocks are left out: only `...` in prose."""
  text = re.sub(r"```.*?```", "", text, flags=re.S)
  return re.findall(r"`([^`\n]+)`", text)


def _candidate_paths(span: str) -> list[str]:
  if "<" in span:  # `kernels/tuned/<device kind>.json`: a placeholder
    return []
  out = []
  for token in span.split():
    token = token.strip("()[],;:'\"")
    token = re.sub(r"^\$PWD/", "", token)
    if token.startswith("//"):
      continue
    head = token.split("/", 1)[0]
    if head not in TOP:
      continue
    if "/" not in token and not token.endswith(EXTENSIONS) and token not in TOP:
      continue
    out.append(token)
  return out


def _expand(path: str) -> list[str]:
  m = re.search(r"\{([^{}]*)\}", path)
  if m:
    return [x for alt in m.group(1).split(",") for x in _expand(path[:m.start()] + alt + path[m.end():])]
  return [path]


def _exists(path: str) -> bool:
  path = path.split(":", 1)[0]  # `file.py:function`
  for variant in _expand(path):
    if any(c in variant for c in "*?["):
      if not glob.glob(str(ROOT / variant)):
        return False
    elif not (ROOT / variant).exists():
      return False
  return True


def _allowed(path: str) -> bool:
  return bool(PLACEHOLDER.search(path)) or any(path.startswith(p) for p in ALLOWED)


def test_every_test_file_runs_its_tests_as_a_program():
  files = [f for folder in FOLDERS_WITH_READMES for f in sorted((ROOT / folder).rglob("*_test.py"))
           if "bazel-" not in str(f.relative_to(ROOT))]
  assert len(files) > 50, files
  # The block calls a test runner: pytest.main, unittest.main, absltest.main.
  main = re.compile(r'^if __name__ == "__main__":\n(?:(?:[ \t]+.*)?\n)*?[ \t]+.*\bmain\(',
                    re.MULTILINE)
  missing = [str(f.relative_to(ROOT)) for f in files
             if not main.search(f.read_text(encoding="utf-8"))]
  assert not missing, f"test files that run nothing as a program: {missing}"


def test_there_are_docs():
  assert (ROOT / "README.md").exists() and (ROOT / "docs").is_dir(), ROOT
  assert len(DOCS) > 10


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_every_backticked_path_exists(doc):
  missing = sorted({p for span in _code_spans(doc.read_text(encoding="utf-8"))
                    for p in _candidate_paths(span) if not _allowed(p) and not _exists(p)})
  assert not missing, f"{_rel(doc)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_every_bazel_package_exists(doc):
  labels = re.findall(r"(?<![\w/:])//([A-Za-z0-9_./-]*)(?::[\w.+*-]+|/\.\.\.)?",
                      " ".join(_code_spans(doc.read_text(encoding="utf-8"))))
  missing = sorted({l for l in labels if l and not l.endswith("...")
                    and not (ROOT / l.rstrip("/") / "BUILD").exists()
                    and not l.startswith(("openxla", "docs.", "github"))})
  assert not missing, f"{_rel(doc)} names Bazel packages that do not exist: {missing}"


def _slug(heading: str) -> str:
  """GitHub's anchor for a heading."""
  s = heading.strip().lower()
  s = re.sub(r"[^\w\- ]", "", s)
  return s.replace(" ", "-")


def _anchors(md: Path) -> set[str]:
  text = re.sub(r"```.*?```", "", md.read_text(encoding="utf-8"), flags=re.S)
  return {_slug(h) for h in re.findall(r"^#+\s+(.*)$", text, flags=re.M)}


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_every_relative_link_resolves(doc):
  text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)
  broken = []
  for target in re.findall(r"\]\(([^)\s]+)\)", text):
    if re.match(r"^[a-z]+:", target):
      continue
    path, _, anchor = target.partition("#")
    dest = (doc.parent / path).resolve() if path else doc
    if not dest.exists():
      broken.append(target)
    elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
      broken.append(target)
  assert not broken, f"{_rel(doc)} has broken links: {broken}"


def test_the_readme_is_short():
  lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
  assert lines <= MAX_README_LINES, f"README.md has {lines} lines (at most {MAX_README_LINES})"


@pytest.mark.parametrize("doc", DOCS, ids=_rel)
def test_no_history(doc):
  text = doc.read_text(encoding="utf-8")
  found = sorted({m.group(0) for m in re.finditer(r"(?i)session|wip/", text)})
  assert not found, f"{_rel(doc)} contains {found}: docs hold current facts, not history"


def _slot_decisions() -> list[tuple[str, str]]:
  rows = []
  for line in (ROOT / "xla_plugin/c_api/slot_decisions.txt").read_text().splitlines():
    if line.strip() and not line.startswith("#"):
      slot, decision = line.split("\t")[:2]
      rows.append((slot, decision))
  return rows


def _count_slots() -> int:
  return len(_slot_decisions())


def _count_unimplemented() -> int:
  return sum(d == "unimplemented" for _, d in _slot_decisions())


COUNTS = [
    # (doc, pattern whose group 1 is the count, what it must equal)
    ("docs/pjrt-c-api.md", r"PJRT C API 0\.\d+\*\* \((\d+) slots\)", _count_slots),
    ("xla_plugin/c_api/README.md", r"the (\d+) slots the client layer cannot serve",
     _count_unimplemented),
]


@pytest.mark.parametrize("doc,pattern,count", COUNTS, ids=[c[0] + ":" + c[1] for c in COUNTS])
def test_counts(doc, pattern, count):
  text = (ROOT / doc).read_text(encoding="utf-8")
  found = re.findall(pattern, text)
  assert found, f"{doc}: no match for {pattern!r} (update COUNTS with the doc)"
  want = count()
  assert all(int(n) == want for n in found), f"{doc} says {found}, the repository has {want}"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
