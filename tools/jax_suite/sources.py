"""JAX's test sources at one commit, from a git directory without a work tree."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

PATHS = ("tests", "conftest.py", "pyproject.toml")
"""What a pytest run of JAX's tests needs besides the installed jax: the tests, the root
conftest.py and the pytest settings in pyproject.toml (filterwarnings = error, import mode)."""


COMPAT_PATCHES: dict[str, tuple[tuple[str, str], ...]] = {
    # jax main at cec06d116c (2026-08-08), the newest commit the mirror holds, imports two names
    # jax 0.12.0.1 no longer has; without this the whole file fails to import there. Tests that
    # use them fail on every backend alike.
    "api_test.py": ((
        "from jax._src.ad_checkpoint import saved_residuals, custom_remat, SaveOnlyTheseNames\n",
        "from jax._src.ad_checkpoint import saved_residuals\n"
        "try:  # pjrtkit jax_suite compat patch: absent in jax 0.12.0.1\n"
        "  from jax._src.ad_checkpoint import custom_remat, SaveOnlyTheseNames\n"
        "except ImportError:\n"
        "  custom_remat = SaveOnlyTheseNames = None\n"),),
}
"""Import fixes for running tests of one commit against a nearby JAX release: file -> (old, new)
text pairs, applied by `extract(..., compat=True)` where the old text is present and recorded in
the destination's PATCHES.txt."""


def apply_compat_patches(tests_dir: Path) -> list[str]:
  """Applies COMPAT_PATCHES under `tests_dir`; returns `file: first old line` of each applied."""
  applied = []
  for file, pairs in COMPAT_PATCHES.items():
    path = tests_dir / file
    if not path.exists():
      continue
    text = path.read_text(encoding="utf-8")
    for old, new in pairs:
      if old in text:
        text = text.replace(old, new)
        applied.append(f"{file}: {old.splitlines()[0]}")
    path.write_text(text, encoding="utf-8")
  return applied


def resolve(git_dir: Path, rev: str) -> str:
  """The full commit hash of `rev` (a tag, branch or hash) in `git_dir`."""
  return subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", f"{rev}^{{commit}}"],
                        check=True, capture_output=True, text=True).stdout.strip()


def extract(git_dir: Path, rev: str, dest: Path, compat: bool = False) -> Path:
  """Writes PATHS of `rev` under `dest` (made if missing) and returns `dest / "tests"`.

  `dest` must not hold a `jax/` folder, so that the installed jax is the one tested. With
  `compat`, COMPAT_PATCHES are applied and listed in `dest / "PATCHES.txt"`.
  """
  commit = resolve(git_dir, rev)
  archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit,
                            *PATHS], check=True, capture_output=True).stdout
  dest.mkdir(parents=True, exist_ok=True)
  with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
    tar.extractall(dest, filter="data")
  (dest / "JAX_COMMIT").write_text(commit + "\n", encoding="utf-8")
  if compat:
    applied = apply_compat_patches(dest / "tests")
    (dest / "PATCHES.txt").write_text("".join(a + "\n" for a in applied), encoding="utf-8")
  return dest / "tests"
