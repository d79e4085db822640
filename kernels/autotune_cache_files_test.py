"""The autotune cache's files (`pjrtkit.kernels.core.autotune_cache`): an entry's text round
trips; corrupt, foreign and other-key files are ignored with a warning; writes are atomic under
concurrent writers and readers; the entry bound removes the least recently used. How calls use
the files (measuring, hits, unwritable directories) is in autotune_cache_test.py."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import threading

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import autotune_cache as cache  # noqa: E402
from pjrtkit.kernels.core.spec import Spec  # noqa: E402

CPU = pk.DeviceInfo(platform="pjrtkit", kind="pjrtkit_cpu", compute_capability=None)


def _entry(n: int, mode: str = "fwd") -> cache.Entry:
  spec = Spec.make("op", {"x": jax.ShapeDtypeStruct((n,), jnp.float32)}, {})
  choices = {p: cache.PhaseChoice("xla", (), float(n)) for p in cache.PHASES[mode]}
  return cache.Entry(cache.cache_key(CPU, spec, mode), choices)


def test_entry_text_round_trips():
  entry = _entry(3, "fwd+bwd")
  assert cache.Entry.loads(entry.dumps()) == entry
  assert json.loads(entry.dumps())["choices"] == {
      "bwd": {"implementation": "xla", "config": {}, "time_ms": 3.0, "candidates": []},
      "fwd": {"implementation": "xla", "config": {}, "time_ms": 3.0, "candidates": []}}


@pytest.mark.parametrize("text, why", [
    ("{not json", "not a cache entry of format 1 (Expecting property name"),
    ('{"format": 99, "key": {}, "choices": {}}', "not a cache entry of format 1 (format 99 is"),
    ('[1, 2]', "not a cache entry of format 1 (format None is not 1)"),
    ('{"format": 1, "key": {"mode": "fwd"}, "choices": {"fwd": {"config": {}}}}',
     "malformed entry (KeyError: 'implementation')"),
    ('{"format": 1, "key": {"mode": "fwd"}, "choices": {}}', "do not fit mode 'fwd'"),
])
def test_corrupt_or_foreign_files_are_ignored_with_a_warning(tmp_path, text, why):
  key = _entry(1).key
  path = cache.entry_path(tmp_path, key)
  path.write_text(text)
  with pytest.warns(cache.AutotuneCacheWarning, match=f"ignoring {path}: .*" + (
      "" if why is None else re.escape(why))):
    assert cache.read_entry(tmp_path, key) is None


def test_a_file_holding_another_key_is_ignored(tmp_path):
  key = _entry(1).key
  cache.entry_path(tmp_path, key).write_text(_entry(2).dumps())
  with pytest.warns(cache.AutotuneCacheWarning, match="holds another key"):
    assert cache.read_entry(tmp_path, key) is None


def test_writes_are_atomic_and_leave_no_temporary_files(monkeypatch, tmp_path):
  old, new = _entry(5), dataclasses.replace(_entry(5), choices={
      "fwd": cache.PhaseChoice("fast", (), 1.0)})
  path = cache.write_entry(tmp_path, old, 10)
  assert [p.name for p in tmp_path.iterdir()] == [path.name]

  def broken_replace(src, dst):
    raise OSError("disk full")

  monkeypatch.setattr(cache.os, "replace", broken_replace)
  with pytest.raises(OSError, match="disk full"):
    cache.write_entry(tmp_path, new, 10)
  assert [p.name for p in tmp_path.iterdir()] == [path.name]
  assert cache.Entry.loads(path.read_text()) == old


def test_concurrent_writers_and_readers_see_whole_entries(tmp_path):
  entries = [dataclasses.replace(_entry(7), choices={"fwd": cache.PhaseChoice(
      "xla", (), float(i), tuple(("xla", (("pad", "x" * 2000),), float(j)) for j in range(20)))})
      for i in range(4)]
  seen, stop = [], threading.Event()

  def write(e: cache.Entry) -> None:
    for _ in range(40):
      cache.write_entry(tmp_path, e, 10)

  def read() -> None:
    while not stop.is_set():
      found = cache.read_entry(tmp_path, entries[0].key)
      if found is not None:
        seen.append(found)

  reader = threading.Thread(target=read)
  reader.start()
  writers = [threading.Thread(target=write, args=(e,)) for e in entries]
  for t in writers:
    t.start()
  for t in writers:
    t.join()
  stop.set()
  reader.join()
  assert seen and all(e in entries for e in seen)
  assert [p.suffix for p in tmp_path.iterdir()] == [".json"]


def test_the_entry_bound_removes_the_least_recently_used(tmp_path):
  paths = []
  for n in range(4):
    paths.append(cache.write_entry(tmp_path, _entry(n), 3))
    os.utime(paths[-1], ns=(10**18 + n, 10**18 + n))
  assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths[1:])
  cache.read_entry(tmp_path, _entry(1).key)  # A hit: now the most recently used.
  os.utime(paths[1], ns=(2 * 10**18, 2 * 10**18))
  paths.append(cache.write_entry(tmp_path, _entry(9), 3))
  assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
      p.name for p in (paths[1], paths[3], paths[4]))
  assert [e.choices["fwd"].time_ms for e in cache.entries(tmp_path)] == sorted(
      [1.0, 3.0, 9.0], key=lambda t: cache.digest(_entry(int(t)).key))
  (tmp_path / ".x.tmp").write_text("")
  assert cache.clear(tmp_path) == 3
  assert list(tmp_path.iterdir()) == []


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
