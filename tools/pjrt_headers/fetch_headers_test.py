"""Tests of fetch_headers.py against a local HTTP server: a fake wheel, a simple index, a server
that answers range requests and one that does not, the cache, the sha256 refusals, --lock-for."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import io
import json
import os
import shutil
import tempfile
import threading
import unittest
import zipfile
from unittest import mock

from tools.pjrt_headers import fetch_headers

WHEEL = "fake_dist-1.2.3-cp312-cp312-manylinux_2_27_x86_64.whl"
PREFIX = "fakepkg/include/"
MAIN = b'#define PJRT_API_MAJOR 0\n#define PJRT_API_MINOR 9\n'
EXTENSION = b'#include "xla/pjrt/c/pjrt_c_api.h"\n#include "xla/backends/p/plugin.h"\n'
PLUGIN = b"typedef int PLUGIN_Thing;\n"
HEADERS = {
    "xla/pjrt/c/pjrt_c_api.h": MAIN,
    "xla/pjrt/c/pjrt_c_api_thing_extension.h": EXTENSION,
    "xla/backends/p/plugin.h": PLUGIN,
}


def _sha(data: bytes) -> str:
  return hashlib.sha256(data).hexdigest()


def _wheel_bytes() -> bytes:
  """A zip with the headers, a header that is not pinned, and padding (so that range reads are
  a small part of the download)."""
  out = io.BytesIO()
  with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as wheel:
    wheel.writestr("fake_dist-1.2.3.dist-info/METADATA", "Name: fake-dist\n")
    wheel.writestr(PREFIX + "big/padding.bin", bytes(range(256)) * 4096)
    for name, data in HEADERS.items():
      wheel.writestr(PREFIX + name, data)
    wheel.writestr(PREFIX + "xla/pjrt/c/pjrt_c_api_helpers.h", b"// C++ only, not pinned\n")
  return out.getvalue()


WHEEL_BYTES = _wheel_bytes()


class _Handler(http.server.BaseHTTPRequestHandler):
  """Serves /simple/fake-dist/ and /files/WHEEL; records every request on the server."""

  def log_message(self, *args) -> None:  # pylint: disable=arguments-differ
    pass

  def do_GET(self) -> None:  # pylint: disable=invalid-name
    server = self.server
    server.requests.append((self.path, self.headers.get("Range")))  # type: ignore[attr-defined]
    if self.path == "/simple/fake-dist/":
      fragment = server.index_fragment  # type: ignore[attr-defined]
      body = (f'<html><body><a href="../../files/other.whl">other</a>'
              f'<a href="../../files/{WHEEL}{fragment}">{WHEEL}</a></body></html>').encode()
      self._send(200, body, "text/html")
    elif self.path == f"/files/{WHEEL}":
      wanted = self.headers.get("Range")
      if wanted and server.ranges:  # type: ignore[attr-defined]
        start, _, end = wanted.removeprefix("bytes=").partition("-")
        first = int(start)
        last = min(int(end) if end else len(WHEEL_BYTES) - 1, len(WHEEL_BYTES) - 1)
        self._send(206, WHEEL_BYTES[first:last + 1], "application/octet-stream",
                   {"Content-Range": f"bytes {first}-{last}/{len(WHEEL_BYTES)}"})
      else:
        self._send(200, WHEEL_BYTES, "application/octet-stream")
    else:
      self._send(404, b"not found", "text/plain")

  def _send(self, code: int, body: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
    self.send_response(code)
    self.send_header("Content-Type", kind)
    self.send_header("Content-Length", str(len(body)))
    for key, value in (extra or {}).items():
      self.send_header(key, value)
    self.end_headers()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
      self.wfile.write(body)


class FetchHeadersTest(unittest.TestCase):

  def setUp(self):
    super().setUp()
    self.tmp = tempfile.mkdtemp(prefix="fetch_headers_test.")
    self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    self.server.requests = []
    self.server.ranges = True
    self.server.index_fragment = f"#sha256={_sha(WHEEL_BYTES)}"
    self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
    self.thread.start()
    self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
    env = {"PJRTKIT_PYPI_SIMPLE": self.base + "/simple/",
           "PJRTKIT_CACHE": os.path.join(self.tmp, "cache")}
    patcher = mock.patch.dict(os.environ, env)
    patcher.start()
    self.addCleanup(patcher.stop)
    self.lock = self._write_lock()

  def tearDown(self):
    self.server.shutdown()
    self.server.server_close()
    shutil.rmtree(self.tmp, ignore_errors=True)
    super().tearDown()

  def _write_lock(self, **changes) -> str:
    lock = {
        "comment": "test", "pjrt_c_api_version": "0.9", "distribution": "fake-dist",
        "version": "1.2.3", "wheel": WHEEL, "wheel_sha256": _sha(WHEEL_BYTES), "prefix": PREFIX,
        "files": {name: _sha(data) for name, data in HEADERS.items()},
    }
    lock.update(changes)
    path = os.path.join(self.tmp, "headers.lock")
    with open(path, "w", encoding="utf-8") as f:
      json.dump(lock, f)
    return path

  def _run(self, dest: str) -> int:
    with contextlib.redirect_stderr(io.StringIO()):
      return fetch_headers.main(["--dest", dest, "--lock", self.lock])

  def _assert_tree(self, dest: str) -> None:
    for name, data in HEADERS.items():
      with open(os.path.join(dest, name), "rb") as f:
        self.assertEqual(f.read(), data, name)
    self.assertFalse(os.path.exists(os.path.join(dest, "xla/pjrt/c/pjrt_c_api_helpers.h")))
    with open(os.path.join(dest, fetch_headers.STAMP), encoding="utf-8") as f:
      self.assertEqual(f.read(), fetch_headers.lock_digest(fetch_headers.load_lock(self.lock)) +
                       "\n")

  def _wheel_requests(self) -> list[str | None]:
    """The Range header of every request for the wheel (None: a whole download)."""
    return [r for path, r in self.server.requests if path == f"/files/{WHEEL}"]

  def test_range_requests_then_the_cache(self):
    dest = os.path.join(self.tmp, "dest")
    self.assertEqual(self._run(dest), 0)
    self._assert_tree(dest)
    ranges = self._wheel_requests()
    self.assertEqual(ranges[0], "bytes=0-0")
    self.assertGreaterEqual(len(ranges), 3)
    self.assertNotIn(None, ranges)  # Never the whole wheel.
    self.assertEqual(self.server.requests[0], ("/simple/fake-dist/", None))
    cache = os.path.join(self.tmp, "cache", "pjrt_headers", _sha(WHEEL_BYTES)[:16])
    self._assert_cached(cache)
    # A second destination comes from the cache, a current one is left alone: no request.
    self.server.requests.clear()
    other = os.path.join(self.tmp, "other")
    self.assertEqual(self._run(other), 0)
    self._assert_tree(other)
    self.assertEqual(self._run(dest), 0)
    self.assertEqual(self.server.requests, [])

  def _assert_cached(self, cache: str) -> None:
    for name, data in HEADERS.items():
      with open(os.path.join(cache, name), "rb") as f:
        self.assertEqual(f.read(), data)

  def test_without_range_support_the_whole_wheel_is_checked(self):
    self.server.ranges = False
    dest = os.path.join(self.tmp, "dest")
    self.assertEqual(self._run(dest), 0)
    self._assert_tree(dest)
    self.assertEqual(self._wheel_requests(), ["bytes=0-0", None])

  def test_without_range_support_a_wheel_that_differs_is_refused(self):
    self.server.ranges = False
    self.server.index_fragment = ""  # Nothing to compare before the download.
    self.lock = self._write_lock(wheel_sha256="0" * 64)
    dest = os.path.join(self.tmp, "dest")
    with self.assertRaises(SystemExit) as refused:
      self._run(dest)
    self.assertEqual(str(refused.exception), f"fetch_headers: {WHEEL} has sha256 "
                     f"{_sha(WHEEL_BYTES)}, the lock pins {'0' * 64}")
    self.assertFalse(os.path.exists(dest))

  def test_a_member_that_differs_from_the_lock_is_refused(self):
    files = {name: _sha(data) for name, data in HEADERS.items()}
    files["xla/backends/p/plugin.h"] = "f" * 64
    self.lock = self._write_lock(files=files)
    dest = os.path.join(self.tmp, "dest")
    for ranges in (True, False):
      self.server.ranges = ranges
      with self.assertRaises(SystemExit) as refused:
        self._run(dest)
      self.assertEqual(str(refused.exception), f"fetch_headers: xla/backends/p/plugin.h in "
                       f"{WHEEL} has sha256 {_sha(PLUGIN)}, the lock pins {'f' * 64}")
      self.assertFalse(os.path.exists(dest))
      self.assertFalse(os.path.exists(os.path.join(self.tmp, "cache")))

  def test_an_index_sha256_that_differs_from_the_lock_is_refused(self):
    self.server.index_fragment = "#sha256=" + "a" * 64
    with self.assertRaises(SystemExit) as refused:
      self._run(os.path.join(self.tmp, "dest"))
    self.assertEqual(str(refused.exception), f"fetch_headers: the index lists {WHEEL} with "
                     f"sha256 {'a' * 64}, the lock pins {_sha(WHEEL_BYTES)}")
    self.assertEqual(self._wheel_requests(), [])

  def test_a_wheel_missing_from_the_index_is_named(self):
    self.lock = self._write_lock(wheel="fake_dist-9.9.9-py3-none-any.whl")
    with self.assertRaises(SystemExit) as refused:
      self._run(os.path.join(self.tmp, "dest"))
    self.assertEqual(str(refused.exception), "fetch_headers: fake_dist-9.9.9-py3-none-any.whl is "
                     f"not listed at {self.base}/simple/fake-dist/")

  def test_a_local_wheel(self):
    path = os.path.join(self.tmp, WHEEL)
    with open(path, "wb") as f:
      f.write(WHEEL_BYTES)
    dest = os.path.join(self.tmp, "dest")
    with contextlib.redirect_stderr(io.StringIO()):
      self.assertEqual(fetch_headers.main(["--dest", dest, "--lock", self.lock, "--wheel", path]),
                       0)
    self._assert_tree(dest)
    self.assertEqual(self.server.requests, [])

  def _expected_lock(self) -> dict:
    return {
        "comment": fetch_headers.LOCK_COMMENT,
        "pjrt_c_api_version": "0.9",
        "distribution": "fake-dist",
        "version": "1.2.3",
        "wheel": WHEEL,
        "wheel_sha256": _sha(WHEEL_BYTES),
        "prefix": PREFIX,
        "files": {name: _sha(HEADERS[name]) for name in sorted(HEADERS)},
    }

  def test_lock_for_a_path_and_for_urls(self):
    path = os.path.join(self.tmp, WHEEL)
    with open(path, "wb") as f:
      f.write(WHEEL_BYTES)
    self.assertEqual(fetch_headers.lock_for(path), self._expected_lock())
    url = f"{self.base}/files/{WHEEL}"
    with contextlib.redirect_stderr(io.StringIO()):
      self.assertEqual(fetch_headers.lock_for(f"{url}#sha256={_sha(WHEEL_BYTES)}"),
                       self._expected_lock())
      self.assertNotIn(None, self._wheel_requests())  # Read by ranges.
      self.server.requests.clear()
      self.assertEqual(fetch_headers.lock_for(url), self._expected_lock())
    self.assertEqual(self._wheel_requests(), [None])  # No sha256 given: the whole wheel.

  def test_lock_for_prints_json_that_fetch_accepts(self):
    path = os.path.join(self.tmp, WHEEL)
    with open(path, "wb") as f:
      f.write(WHEEL_BYTES)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
      self.assertEqual(fetch_headers.main(["--lock-for", path]), 0)
    with open(self.lock, "w", encoding="utf-8") as f:
      f.write(out.getvalue())
    dest = os.path.join(self.tmp, "dest")
    self.assertEqual(self._run(dest), 0)
    self._assert_tree(dest)


if __name__ == "__main__":
  unittest.main()
