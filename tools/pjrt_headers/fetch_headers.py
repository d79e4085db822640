#!/usr/bin/env python3
"""Fetches OpenXLA's PJRT C API headers that pjrtkit builds against, as pinned in headers.lock.

OpenXLA publishes no header package; the TensorFlow nightly wheels on PyPI carry the headers
under `tensorflow/include/`. This tool reads only the pinned header files out of the pinned
wheel, without installing anything of TensorFlow:

  * by HTTP range requests on the wheel's zip central directory and the pinned members (a few
    hundred kilobytes instead of the whole wheel), or, where the server refuses ranges, by
    downloading the whole wheel, checking its sha256 and extracting the members;
  * every file's sha256 is checked against the lock before anything is written;
  * files are cached in $PJRTKIT_CACHE (default ~/.cache/pjrtkit) and copied into DEST, where the
    Bazel repository rule `pjrtkit_venv` finds them; a second run reads nothing from the network.

`--lock-for WHEEL` prints a lock for another wheel (a path, or a URL, best with the
`#sha256=...` fragment PyPI's simple index gives it): pjrt_c_api.h, every
pjrt_c_api_*_extension.h beside it and the headers they include, each with its sha256.

Usage (from the repository root; tools/setup.sh runs the first form):
  python3 tools/pjrt_headers/fetch_headers.py --dest .venv/pjrt_headers
  python3 tools/pjrt_headers/fetch_headers.py --dest DIR --wheel path/to/tf_nightly-....whl
  python3 tools/pjrt_headers/fetch_headers.py --dest DIR --lock other.lock   # another pin
  python3 tools/pjrt_headers/fetch_headers.py --lock-for URL_OR_PATH > new.lock

Standard library only, so it runs before any virtualenv exists.
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import io
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from typing import BinaryIO

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LOCK = os.path.join(HERE, "headers.lock")
STAMP = ".pjrtkit-headers"  # In DEST: the lock digest the files there were checked against.
MAIN_HEADER = "xla/pjrt/c/pjrt_c_api.h"
LOCK_COMMENT = ("The PJRT C API headers pjrtkit builds against: read by "
                "tools/pjrt_headers/fetch_headers.py out of the wheel below (nothing of TensorFlow "
                "is installed). To move to a newer C API: tools/pjrt_headers/README.md.")


def log(message: str) -> None:
  print(f"[pjrt_headers] {message}", file=sys.stderr)


def sha256_bytes(data: bytes) -> str:
  return hashlib.sha256(data).hexdigest()


def load_lock(path: str) -> dict:
  """Reads and checks a lock file (see headers.lock)."""
  with open(path, encoding="utf-8") as f:
    lock = json.load(f)
  for key in ("pjrt_c_api_version", "distribution", "wheel", "wheel_sha256", "prefix", "files"):
    if key not in lock:
      raise SystemExit(f"fetch_headers: {path} lacks '{key}'")
  if not lock["files"]:
    raise SystemExit(f"fetch_headers: {path} pins no files")
  return lock


def lock_digest(lock: dict) -> str:
  """A digest of what the lock pins (changes when any pinned file or the wheel changes)."""
  return sha256_bytes(json.dumps(lock, sort_keys=True).encode())


class _LinkParser(html.parser.HTMLParser):
  """Collects <a href> targets of a PEP 503 simple index page."""

  def __init__(self) -> None:
    super().__init__()
    self.links: list[str] = []

  def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
    if tag == "a":
      for name, value in attrs:
        if name == "href" and value:
          self.links.append(value)


def wheel_url(lock: dict) -> str:
  """The download URL of the pinned wheel, from the PyPI simple index."""
  index = os.environ.get("PJRTKIT_PYPI_SIMPLE", "https://pypi.org/simple").rstrip("/")
  page = f"{index}/{lock['distribution']}/"
  with urllib.request.urlopen(page, timeout=60) as response:
    parser = _LinkParser()
    parser.feed(response.read().decode("utf-8", "replace"))
  for link in parser.links:
    url, _, fragment = link.partition("#")
    if url.rsplit("/", 1)[-1] == lock["wheel"]:
      if fragment.startswith("sha256=") and fragment[7:] != lock["wheel_sha256"]:
        raise SystemExit(f"fetch_headers: the index lists {lock['wheel']} with sha256 "
                         f"{fragment[7:]}, the lock pins {lock['wheel_sha256']}")
      return urllib.parse.urljoin(page, url)
  raise SystemExit(f"fetch_headers: {lock['wheel']} is not listed at {page}")


class RangeReader(io.RawIOBase):
  """A read-only, seekable file over HTTP range requests (what zipfile needs)."""

  def __init__(self, url: str) -> None:
    super().__init__()
    self._url = url
    self._pos = 0
    request = urllib.request.Request(url, headers={"Range": "bytes=0-0"})
    with urllib.request.urlopen(request, timeout=60) as response:
      if response.status != 206:
        raise OSError("the server does not answer range requests")
      total = response.headers.get("Content-Range", "").rpartition("/")[2]
    if not total.isdigit():
      raise OSError("the server sent no Content-Range length")
    self._size = int(total)
    self.requests = 1

  def readable(self) -> bool:
    return True

  def seekable(self) -> bool:
    return True

  def tell(self) -> int:
    return self._pos

  def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
    base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
    self._pos = base + offset
    return self._pos

  def readinto(self, buffer) -> int:  # type: ignore[override]
    if self._pos >= self._size or len(buffer) == 0:
      return 0
    end = min(self._pos + len(buffer), self._size) - 1
    request = urllib.request.Request(self._url, headers={"Range": f"bytes={self._pos}-{end}"})
    with urllib.request.urlopen(request, timeout=120) as response:
      if response.status != 206:
        raise OSError("the server stopped answering range requests")
      data = response.read()
    self.requests += 1
    buffer[: len(data)] = data
    self._pos += len(data)
    return len(data)


def read_members(archive: BinaryIO, lock: dict) -> dict[str, bytes]:
  """The pinned files of the wheel `archive`, checked against their sha256."""
  out: dict[str, bytes] = {}
  with zipfile.ZipFile(archive) as wheel:
    for name, digest in sorted(lock["files"].items()):
      try:
        data = wheel.read(lock["prefix"] + name)
      except KeyError:
        raise SystemExit(f"fetch_headers: {lock['wheel']} has no {lock['prefix']}{name}")
      if sha256_bytes(data) != digest:
        raise SystemExit(f"fetch_headers: {name} in {lock['wheel']} has sha256 "
                         f"{sha256_bytes(data)}, the lock pins {digest}")
      out[name] = data
  return out


def download_members(lock: dict) -> dict[str, bytes]:
  """The pinned files, read from PyPI (range requests, else the whole wheel)."""
  url = wheel_url(lock)
  try:
    reader = RangeReader(url)
    files = read_members(io.BufferedReader(reader, buffer_size=1 << 20), lock)
    log(f"read {len(files)} headers from {lock['wheel']} in {reader.requests} range requests")
    return files
  except (OSError, urllib.error.URLError) as error:
    log(f"range requests failed ({error}); downloading the whole wheel")
  with tempfile.TemporaryFile() as whole:
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=600) as response:
      while chunk := response.read(1 << 20):
        digest.update(chunk)
        whole.write(chunk)
    if digest.hexdigest() != lock["wheel_sha256"]:
      raise SystemExit(f"fetch_headers: {lock['wheel']} has sha256 {digest.hexdigest()}, "
                       f"the lock pins {lock['wheel_sha256']}")
    whole.seek(0)
    return read_members(whole, lock)


def cached_members(cache: str, lock: dict) -> dict[str, bytes] | None:
  """The pinned files from `cache`, or None when any is missing or differs."""
  out: dict[str, bytes] = {}
  for name, digest in lock["files"].items():
    path = os.path.join(cache, name)
    if not os.path.isfile(path):
      return None
    with open(path, "rb") as f:
      data = f.read()
    if sha256_bytes(data) != digest:
      return None
    out[name] = data
  return out


def write_tree(root: str, files: dict[str, bytes], stamp: str | None) -> None:
  """Writes `files` under `root` atomically (a sibling temporary folder, then a rename)."""
  parent = os.path.dirname(os.path.abspath(root))
  os.makedirs(parent, exist_ok=True)
  staging = tempfile.mkdtemp(prefix=".pjrt_headers.", dir=parent)
  os.chmod(staging, 0o755)
  try:
    for name, data in files.items():
      path = os.path.join(staging, name)
      os.makedirs(os.path.dirname(path), exist_ok=True)
      with open(path, "wb") as f:
        f.write(data)
    if stamp is not None:
      with open(os.path.join(staging, STAMP), "w", encoding="utf-8") as f:
        f.write(stamp + "\n")
    if os.path.isdir(root):
      shutil.rmtree(root)
    os.rename(staging, root)
  except BaseException:
    shutil.rmtree(staging, ignore_errors=True)
    raise


def dest_is_current(dest: str, lock: dict) -> bool:
  """True when `dest` already holds exactly the pinned files."""
  try:
    with open(os.path.join(dest, STAMP), encoding="utf-8") as f:
      if f.read().strip() != lock_digest(lock):
        return False
  except OSError:
    return False
  return cached_members(dest, lock) is not None


def _included_headers(text: str) -> list[str]:
  """The `#include "xla/..."` targets of a header's text."""
  return re.findall(r'^\s*#\s*include\s+"(xla/[^"]+)"', text, re.M)


def _lock_from_archive(archive: BinaryIO, wheel_name: str, wheel_sha256: str) -> dict:
  """The lock pinning the PJRT C API headers of the wheel `archive`."""
  with zipfile.ZipFile(archive) as wheel:
    names = wheel.namelist()
    mains = [n for n in names if n.endswith("/" + MAIN_HEADER) or n == MAIN_HEADER]
    if len(mains) != 1:
      raise SystemExit(f"fetch_headers: {wheel_name} holds {len(mains)} copies of {MAIN_HEADER}")
    prefix = mains[0][:-len(MAIN_HEADER)]
    c_dir = prefix + "xla/pjrt/c/"
    pending = [mains[0][len(prefix):]] + sorted(
        n[len(prefix):] for n in names
        if re.fullmatch(re.escape(c_dir) + r"pjrt_c_api_\w+_extension\.h", n))
    files: dict[str, str] = {}
    while pending:
      name = pending.pop()
      if name in files:
        continue
      try:
        data = wheel.read(prefix + name)
      except KeyError:
        raise SystemExit(f"fetch_headers: a pinned header includes {name}, which "
                         f"{wheel_name} lacks")
      files[name] = sha256_bytes(data)
      pending += _included_headers(data.decode("utf-8", "replace"))
    main_text = wheel.read(mains[0]).decode("utf-8", "replace")
  major = re.search(r"#define\s+PJRT_API_MAJOR\s+(\d+)", main_text)
  minor = re.search(r"#define\s+PJRT_API_MINOR\s+(\d+)", main_text)
  if not (major and minor):
    raise SystemExit(f"fetch_headers: {wheel_name}'s {MAIN_HEADER} has no PJRT_API_MAJOR/MINOR")
  distribution, version = wheel_name.split("-")[:2]
  return {
      "comment": LOCK_COMMENT,
      "pjrt_c_api_version": f"{major.group(1)}.{minor.group(1)}",
      "distribution": distribution.replace("_", "-").lower(),
      "version": version,
      "wheel": wheel_name,
      "wheel_sha256": wheel_sha256,
      "prefix": prefix,
      "files": dict(sorted(files.items())),
  }


def lock_for(source: str) -> dict:
  """A lock for the wheel at `source`: a local path, or a URL (range requests when the URL
  carries `#sha256=` and the server answers them; else the whole wheel is downloaded)."""
  if os.path.exists(source):
    with open(source, "rb") as f:
      digest = hashlib.sha256()
      while chunk := f.read(1 << 20):
        digest.update(chunk)
      f.seek(0)
      return _lock_from_archive(f, os.path.basename(source), digest.hexdigest())
  url, _, fragment = source.partition("#")
  name = urllib.parse.unquote(url.rsplit("/", 1)[-1])
  pinned = fragment[7:] if fragment.startswith("sha256=") else None
  if pinned:
    try:
      reader = RangeReader(url)
      return _lock_from_archive(io.BufferedReader(reader, buffer_size=1 << 20), name, pinned)
    except (OSError, urllib.error.URLError) as error:
      log(f"range requests failed ({error}); downloading the whole wheel")
  with tempfile.TemporaryFile() as whole:
    digest = hashlib.sha256()
    with urllib.request.urlopen(url, timeout=600) as response:
      while chunk := response.read(1 << 20):
        digest.update(chunk)
        whole.write(chunk)
    if pinned and digest.hexdigest() != pinned:
      raise SystemExit(f"fetch_headers: {name} has sha256 {digest.hexdigest()}, the URL says "
                       f"{pinned}")
    whole.seek(0)
    return _lock_from_archive(whole, name, digest.hexdigest())


def main(argv: list[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--dest", help="folder to write the headers into")
  parser.add_argument("--lock", default=DEFAULT_LOCK, help="the pin (default: headers.lock)")
  parser.add_argument("--wheel", help="read a local copy of the pinned wheel instead of PyPI")
  parser.add_argument("--lock-for", metavar="WHEEL_URL_OR_PATH",
                      help="print a lock for this wheel instead of fetching")
  args = parser.parse_args(argv)
  if args.lock_for:
    print(json.dumps(lock_for(args.lock_for), indent=2))
    return 0
  if not args.dest:
    parser.error("--dest is required (or --lock-for)")
  lock = load_lock(args.lock)
  if dest_is_current(args.dest, lock):
    return 0
  cache_root = os.environ.get("PJRTKIT_CACHE") or os.path.join(
      os.path.expanduser("~"), ".cache", "pjrtkit")
  cache = os.path.join(cache_root, "pjrt_headers", lock["wheel_sha256"][:16])
  files = cached_members(cache, lock)
  if files is None:
    if args.wheel:
      with open(args.wheel, "rb") as f:
        files = read_members(f, lock)
    else:
      files = download_members(lock)
    try:
      write_tree(cache, files, stamp=None)
    except OSError as error:  # A read-only home still gets its headers.
      log(f"could not cache the headers in {cache}: {error}")
  write_tree(args.dest, files, stamp=lock_digest(lock))
  log(f"PJRT C API {lock['pjrt_c_api_version']} headers ({len(files)} files) in {args.dest}")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
