"""The on-first-use autotune cache of ``implementation=None``: a choice measured once per shape.

Off unless enabled (``PJRTKIT_KERNELS_AUTOTUNE=1``, or `configure` / `using`). When enabled, a
call with ``implementation=None`` whose phase has no tuned choice (active `AutotuningResult`s,
then ``kernels/tuned/<device kind>.json``) looks its key up here instead of taking the op's rule;
on a miss it measures every (implementation, config) that serves the call on the current device,
keeps the fastest whose outputs match the "xla" implementation's within the tolerances of
`pjrtkit.kernels.testing` (forward: the output; gradient: every cotangent), and writes the choice
to one file per key. When disabled, or while `pallas_interpret` is active, nothing here runs.

Key (`cache_key`): cache format, library version (pjrtkit's), jax and jaxlib versions, platform,
device kind, op, mode, JAX's default matmul precision (``jax.default_matmul_precision``: it
changes what float32 candidates compute) and the call's `Spec` (every argument's shape and dtype:
for attention batch, sequence lengths, heads, kv heads, head_dim; and its parameters: causal,
scale). Mode
"fwd" is a call that is not differentiated (its forward timed as `Op.forward_output`), mode
"fwd+bwd" a differentiated one (its forward timed as `Op.forward`, with residuals, and its
gradient with the "xla" forward's residuals and a random cotangent; each phase picks its own
fastest, as any forward pairs with any backward).

When it measures: at trace time, the first time a key is needed in the process (a differentiated
call decides when JAX traces its forward rule), on random inputs of the traced shapes and dtypes
(`Spec.example_args`) on a thread of its own (`untraced`), where no trace of the caller's is
current, so the measurement runs on concrete arrays and none of its operations enter the program
being traced (``jax.ensure_compile_time_eval()`` would not do: its eager constant folding reaches
into the candidates' own kernel tracing and evaluates Pallas's ``program_id`` and Mosaic GPU's grid
axis there, which have no evaluation rule). The thread keeps JAX's global config and the caller's
``with``-scoped default device, matmul precision, x64 and promotion settings; calls made on it (a
candidate that itself calls an op with ``implementation=None``) take the tuned or rule choice.
This covers calls under ``jax.jit`` and ``jax.grad``, where no concrete inputs exist; the
kernels' times do not depend on the values (no data-dependent control flow), so random inputs of
the same shapes time the same.
One measurement at a time per process (a lock). A measurement that finds no candidate warns and
leaves the rule's choice for the process, writing nothing.

Files (the persistent compilation cache's habits): ``<directory>/<sha256 of key>.json``, directory
``PJRTKIT_KERNELS_AUTOTUNE_DIR``, default ``~/.cache/pjrtkit/kernels-autotune``; written to a
temporary file in the directory, then renamed over the entry (atomic: readers see the old entry or
the new one), so concurrent processes are safe (two that miss the same key both measure, the last
rename stays). A file that does not parse, has another format, or holds another key is ignored
with an `AutotuneCacheWarning` and replaced after measuring; a directory that cannot be written
warns and keeps the choice in memory. At most ``max_entries`` files
(``PJRTKIT_KERNELS_AUTOTUNE_MAX_ENTRIES``, default 1024): each write removes the least recently
used beyond it (a hit refreshes its file's modification time). `clear` removes every entry.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, TypeVar

import jax
import numpy as np

from pjrtkit.kernels.core import device as device_lib
from pjrtkit.kernels.core.spec import Spec

FORMAT_VERSION = 1
ENV_ENABLE = "PJRTKIT_KERNELS_AUTOTUNE"
ENV_DIR = "PJRTKIT_KERNELS_AUTOTUNE_DIR"
ENV_MAX_ENTRIES = "PJRTKIT_KERNELS_AUTOTUNE_MAX_ENTRIES"
ENV_ITERATIONS = "PJRTKIT_KERNELS_AUTOTUNE_ITERATIONS"
DEFAULT_DIR = "~/.cache/pjrtkit/kernels-autotune"
DEFAULT_MAX_ENTRIES = 1024
DEFAULT_ITERATIONS = 5
MODES = ("fwd", "fwd+bwd")
"""A call that is not differentiated, and one that is."""
PHASES = {"fwd": ("fwd",), "fwd+bwd": ("fwd", "bwd")}
"""The phases each mode's entry chooses."""
REFERENCE = "xla"
"""The implementation every candidate's outputs are checked against."""

_LOG = logging.getLogger("pjrtkit.kernels")
_TRUE = ("1", "true", "yes", "on")


class AutotuneCacheWarning(UserWarning):
  """A cache file or directory that could not be used (the call goes on without it)."""


@dataclasses.dataclass(frozen=True)
class Settings:
  """The cache's settings (part of JAX's jit cache key, so changing them retraces).

  Attributes:
    enabled: whether ``implementation=None`` consults and fills the cache.
    directory: where entries live (``~`` expanded when used).
    max_entries: files kept at most (least recently used removed beyond it).
    iterations: timed calls per candidate (median taken).
  """

  enabled: bool = False
  directory: str = DEFAULT_DIR
  max_entries: int = DEFAULT_MAX_ENTRIES
  iterations: int = DEFAULT_ITERATIONS

  @property
  def path(self) -> Path:
    """`directory` with ``~`` expanded."""
    return Path(os.path.expanduser(self.directory))


def _positive_env(name: str, default: int) -> int:
  text = os.environ.get(name, "")
  try:
    value = int(text) if text else default
  except ValueError:
    value = 0
  if value < 1:
    warnings.warn(f"{name}={text!r} is not a positive integer; using {default}",
                  AutotuneCacheWarning, stacklevel=2)
    return default
  return value


def settings_from_env() -> Settings:
  """The settings the environment variables give (see the module docstring)."""
  return Settings(enabled=os.environ.get(ENV_ENABLE, "").strip().lower() in _TRUE,
                  directory=os.environ.get(ENV_DIR) or DEFAULT_DIR,
                  max_entries=_positive_env(ENV_MAX_ENTRIES, DEFAULT_MAX_ENTRIES),
                  iterations=_positive_env(ENV_ITERATIONS, DEFAULT_ITERATIONS))


_SETTINGS = jax.make_user_context(settings_from_env())
_LOCK = threading.RLock()
_MEASURING = threading.local()
"""``.active`` is True on the thread of a measurement (`untraced`): calls made there, such as a
candidate that itself calls an op with ``implementation=None``, take the tuned file's or the
rule's choice and never measure (a nested measurement would wait for the caller's lock)."""
_MEMORY: dict[tuple[str, str], "Entry | None"] = {}
"""(directory, digest) -> the entry read or measured in this process (None: measuring failed)."""


def settings() -> Settings:
  """The settings in effect now."""
  return _SETTINGS.value


def _replace(current: Settings, enabled: bool | None, directory: str | os.PathLike[str] | None,
             max_entries: int | None, iterations: int | None) -> Settings:
  for name, value in (("max_entries", max_entries), ("iterations", iterations)):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
      raise ValueError(f"{name} must be a positive integer, got {value!r}")
  changes: dict[str, Any] = {}
  if enabled is not None:
    changes["enabled"] = bool(enabled)
  if directory is not None:
    changes["directory"] = os.fspath(directory)
  if max_entries is not None:
    changes["max_entries"] = max_entries
  if iterations is not None:
    changes["iterations"] = iterations
  return dataclasses.replace(current, **changes)


def configure(*, enabled: bool | None = None, directory: str | os.PathLike[str] | None = None,
              max_entries: int | None = None, iterations: int | None = None) -> Settings:
  """Changes the process-wide settings (None leaves one as it is); returns the previous ones.

  Raises:
    ValueError: for a `max_entries` or `iterations` that is not a positive integer.
  """
  previous = _SETTINGS.get_global()
  _SETTINGS.set_global(_replace(previous, enabled, directory, max_entries, iterations))
  return previous


@contextlib.contextmanager
def using(*, enabled: bool | None = True, directory: str | os.PathLike[str] | None = None,
          max_entries: int | None = None, iterations: int | None = None) -> Iterator[Settings]:
  """The settings changed inside a ``with`` block (enabled unless told otherwise)."""
  new = _replace(settings(), enabled, directory, max_entries, iterations)
  with _SETTINGS(new):
    yield new


def active() -> bool:
  """Whether calls consult the cache now: enabled, not in Pallas interpret mode, and not inside a
  measurement of the cache's own."""
  from pjrtkit.kernels.core import interpret  # pylint: disable=g-import-not-at-top
  return (settings().enabled and not interpret.interpret_enabled()
          and not getattr(_MEASURING, "active", False))


def _versions() -> dict[str, str]:
  import jaxlib  # pylint: disable=g-import-not-at-top
  from pjrtkit import _version  # pylint: disable=g-import-not-at-top
  return {"library_version": _version.__version__, "jax": jax.__version__,
          "jaxlib": jaxlib.__version__}


def cache_key(device: device_lib.DeviceInfo, spec: Spec, mode: str) -> dict[str, Any]:
  """The key of one entry (a JSON object; see the module docstring).

  Raises:
    ValueError: for a mode other than "fwd" and "fwd+bwd".
  """
  if mode not in MODES:
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
  return {"format": FORMAT_VERSION, **_versions(), "platform": device.platform,
          "device_kind": device.kind, "op": spec.op, "mode": mode,
          "matmul_precision": jax.config.jax_default_matmul_precision, "spec": spec.to_json()}


def key_text(key: Mapping[str, Any]) -> str:
  """Stable JSON text of a key."""
  return json.dumps(key, sort_keys=True, separators=(",", ":"))


def digest(key: Mapping[str, Any]) -> str:
  """SHA-256 of `key_text`: the entry's file name without ``.json``."""
  return hashlib.sha256(key_text(key).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class PhaseChoice:
  """The choice for one phase of an entry.

  Attributes:
    implementation: the implementation chosen.
    config: its config as sorted (field, value) pairs.
    time_ms: its measured median time.
    candidates: every (implementation, config, time_ms) measured and matching the reference,
      fastest first.
  """

  implementation: str
  config: tuple[tuple[str, Any], ...]
  time_ms: float
  candidates: tuple[tuple[str, tuple[tuple[str, Any], ...], float], ...] = ()

  def to_json(self) -> dict[str, Any]:
    """JSON-ready dict."""
    return {"implementation": self.implementation, "config": dict(self.config),
            "time_ms": self.time_ms,
            "candidates": [{"implementation": i, "config": dict(c), "time_ms": t}
                           for i, c, t in self.candidates]}

  @classmethod
  def from_json(cls, d: Mapping[str, Any]) -> "PhaseChoice":
    """Inverse of `to_json` (TypeError/KeyError/ValueError for a malformed object)."""
    return cls(str(d["implementation"]), tuple(sorted(dict(d["config"]).items())),
               float(d["time_ms"]),
               tuple((str(c["implementation"]), tuple(sorted(dict(c["config"]).items())),
                      float(c["time_ms"])) for c in d.get("candidates", ())))


@dataclasses.dataclass(frozen=True)
class Entry:
  """One cache entry: its key and a choice per phase of its mode."""

  key: Mapping[str, Any]
  choices: Mapping[str, PhaseChoice]

  def dumps(self) -> str:
    """The file's text."""
    return json.dumps({"format": FORMAT_VERSION, "key": self.key,
                       "choices": {p: c.to_json() for p, c in sorted(self.choices.items())}},
                      sort_keys=True, indent=1) + "\n"

  @classmethod
  def loads(cls, text: str) -> "Entry":
    """Reads `dumps` output.

    Raises:
      ValueError: text that is not an entry of this format (JSON errors included).
    """
    try:
      data = json.loads(text)
      if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
        raise ValueError(f"format {data.get('format') if isinstance(data, dict) else None!r} "
                         f"is not {FORMAT_VERSION}")
      key = data["key"]
      if not isinstance(key, dict):
        raise ValueError("its key is not an object")
      mode = key.get("mode")
      choices = {p: PhaseChoice.from_json(c) for p, c in dict(data["choices"]).items()}
      if mode not in PHASES or tuple(sorted(choices)) != tuple(sorted(PHASES[mode])):
        raise ValueError(f"its phases {sorted(choices)} do not fit mode {mode!r}")
      return cls(key, choices)
    except (KeyError, TypeError, AttributeError) as e:
      raise ValueError(f"malformed entry ({type(e).__name__}: {e})") from e


def entry_path(directory: Path, key: Mapping[str, Any]) -> Path:
  """``<directory>/<digest>.json``."""
  return directory / f"{digest(key)}.json"


def read_entry(directory: Path, key: Mapping[str, Any]) -> Entry | None:
  """The entry of `key` in `directory`; None when absent, and, with an `AutotuneCacheWarning`,
  when unreadable, corrupt, of another format or holding another key."""
  path = entry_path(directory, key)
  try:
    text = path.read_text(encoding="utf-8")
  except (FileNotFoundError, NotADirectoryError):
    return None
  except (OSError, UnicodeDecodeError) as e:
    warnings.warn(f"pjrtkit.kernels autotune cache: cannot read {path} ({e}); ignoring it",
                  AutotuneCacheWarning, stacklevel=2)
    return None
  try:
    entry = Entry.loads(text)
  except ValueError as e:
    warnings.warn(f"pjrtkit.kernels autotune cache: ignoring {path}: not a cache entry of "
                  f"format {FORMAT_VERSION} ({e})", AutotuneCacheWarning, stacklevel=2)
    return None
  if key_text(entry.key) != key_text(key):
    warnings.warn(f"pjrtkit.kernels autotune cache: ignoring {path}: it holds another key",
                  AutotuneCacheWarning, stacklevel=2)
    return None
  try:
    os.utime(path)  # Least recently used goes first.
  except OSError:
    pass
  return entry


def write_entry(directory: Path, entry: Entry, max_entries: int) -> Path:
  """Writes `entry` atomically (a temporary file in `directory`, renamed over the entry), then
  removes the least recently used entries beyond `max_entries`.

  Raises:
    OSError: when the directory cannot be made or written.
  """
  directory.mkdir(parents=True, exist_ok=True)
  path = entry_path(directory, entry.key)
  fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=directory)
  try:
    with os.fdopen(fd, "w", encoding="utf-8") as f:
      f.write(entry.dumps())
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  except BaseException:
    with contextlib.suppress(OSError):
      os.unlink(tmp)
    raise
  _evict(directory, max_entries, keep=path)
  return path


def _evict(directory: Path, max_entries: int, keep: Path) -> None:
  files = []
  for p in directory.glob("*.json"):
    try:
      files.append((p.stat().st_mtime_ns, p.name, p))
    except OSError:  # Removed by another process meanwhile.
      continue
  files.sort(reverse=True)
  for _, _, p in [f for f in files if f[2] != keep][max(0, max_entries - 1):]:
    with contextlib.suppress(OSError):
      p.unlink()


def entries(directory: str | os.PathLike[str] | None = None) -> list[Entry]:
  """The readable entries in `directory` (default: the configured one), by file name; files
  that are not entries are left out silently."""
  path = Path(os.path.expanduser(os.fspath(directory))) if directory else settings().path
  out = []
  for p in sorted(path.glob("*.json")):
    with contextlib.suppress(OSError, ValueError, UnicodeDecodeError):
      out.append(Entry.loads(p.read_text(encoding="utf-8")))
  return out


def clear(directory: str | os.PathLike[str] | None = None) -> int:
  """Removes every entry (and leftover temporary file) from `directory` (default: the configured
  one) and forgets this process's entries; returns the number of entry files removed."""
  path = Path(os.path.expanduser(os.fspath(directory))) if directory else settings().path
  removed = 0
  with _LOCK:
    _MEMORY.clear()
    for p in list(path.glob("*.json")) + list(path.glob(".*.tmp")):
      try:
        p.unlink()
      except OSError:
        continue
      removed += p.suffix == ".json"
  return removed


def tolerance(dtype: str, what: str) -> float:
  """`pjrtkit.kernels.testing.TOLERANCES` for `dtype` ("fwd" or "grad"); float32's for a dtype
  it does not list."""
  from pjrtkit.kernels import testing  # pylint: disable=g-import-not-at-top
  return testing.TOLERANCES.get((dtype, what), testing.TOLERANCES[("float32", what)])


@jax.jit
def _leaf_stats(got: Any, want: Any) -> tuple[Any, Any, Any]:
  """(max |got - want|, max |want|, whether got is all finite), in float32, computed where the
  arrays are, so only three scalars per leaf reach the host."""
  g = got.astype(jax.numpy.float32)
  w = want.astype(jax.numpy.float32)
  return (jax.numpy.max(jax.numpy.abs(g - w)), jax.numpy.max(jax.numpy.abs(w)),
          jax.numpy.all(jax.numpy.isfinite(g)))


def mismatch(got: Any, want: Any, dtype: str, what: str) -> str | None:
  """Why `got` (a tree of arrays) differs from `want` beyond `tolerance` (max |got - want|
  relative to max(1, max |want|), per leaf, in float32); None when every leaf agrees. Every
  leaf's shape is checked before any values. The reductions run where `got` is (one jitted
  reduction per leaf, three scalars back; `want` is moved there when it lives elsewhere): at a
  head_dim-128 forward+backward of 67M elements per array, copying to the host and reducing with
  NumPy took about a second per array. NumPy inputs are cast to float32 on the host first (so
  64-bit integers are not narrowed to 32 bits on the way in)."""
  got_leaves = jax.tree.leaves(got)
  want_leaves = jax.tree.leaves(want)
  if len(got_leaves) != len(want_leaves):
    return f"{len(got_leaves)} outputs, the reference has {len(want_leaves)}"
  tol = tolerance(dtype, what)
  stats = []
  for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
    if np.shape(g) != np.shape(w):
      return f"output {i} has shape {tuple(np.shape(g))}, the reference {tuple(np.shape(w))}"
    if not np.size(g):
      stats.append(None)
      continue
    g, w = (x.astype(np.float32) if isinstance(x, np.ndarray) else x for x in (g, w))
    if isinstance(g, jax.Array) and isinstance(w, jax.Array) and g.sharding != w.sharding:
      w = jax.device_put(w, g.sharding)
    stats.append(_leaf_stats(g, w))
  for i, leaf in enumerate(jax.device_get(stats)):
    if leaf is None:
      continue
    err, peak, finite = (float(leaf[0]), float(leaf[1]), bool(leaf[2]))
    if not finite:
      return f"output {i} is not finite"
    limit = tol * max(1.0, peak)
    if err > limit:
      return f"output {i}: max error {err:.4g} > {limit:.4g} ({dtype} {what} tolerance)"
  return None


def _dtype(spec: Spec) -> str:
  for a in spec.args:
    if a is not None and jax.numpy.issubdtype(jax.numpy.dtype(a.dtype), jax.numpy.floating):
      return a.dtype
  return "float32"


_T = TypeVar("_T")


def _scoped_settings() -> tuple[tuple[Callable[[Any], Any], Any], ...]:
  """(context manager, the value in effect now) of the JAX settings a ``with`` block can change
  per thread and a measurement must share with its caller (they change what is compiled)."""
  cfg = jax.config
  return ((jax.default_device, cfg.jax_default_device),
          (jax.default_matmul_precision, cfg.jax_default_matmul_precision),
          (jax.enable_x64, cfg.jax_enable_x64),
          (jax.numpy_dtype_promotion, cfg.jax_numpy_dtype_promotion),
          (jax.numpy_rank_promotion, cfg.jax_numpy_rank_promotion))


def untraced(fn: Callable[[], _T]) -> _T:
  """``fn()`` on a new thread, where no trace is current (JAX's trace state is per thread), with
  the caller's default device, matmul precision, x64 and dtype and rank promotion settings
  (`_scoped_settings`; JAX keeps ``with``-scoped ones per thread) and the cache inactive
  (`active`); returns its result or raises its exception. The caller waits; an interrupt (e.g.
  Ctrl-C) reaches it at once, leaving the thread to finish on its own. `fn` must not call a
  function the caller is tracing at that moment (JAX's trace caches make a second thread wait
  for a key another thread is computing)."""
  scoped = _scoped_settings()

  def run() -> _T:
    _MEASURING.active = True
    with contextlib.ExitStack() as stack:
      for context, value in scoped:
        stack.enter_context(context(value))
      return fn()

  pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="pjrtkit-autotune")
  try:
    return pool.submit(run).result()
  finally:
    pool.shutdown(wait=False)


def measure(family: Any, spec: Spec, mode: str, device: device_lib.DeviceInfo,
            iterations: int) -> dict[str, PhaseChoice]:
  """Measures every phase of `mode` over every (implementation, config) serving `spec` (see the
  module docstring); runs on concrete arrays (`untraced`) even while a caller is being traced.

  Raises:
    RuntimeError: when a phase has no candidate that runs and matches the reference.
  """
  return untraced(lambda: _measure(family, spec, mode, device, iterations))


def _measure(family: Any, spec: Spec, mode: str, device: device_lib.DeviceInfo,
             iterations: int) -> dict[str, PhaseChoice]:
  from pjrtkit.kernels.core import autotune  # pylint: disable=g-import-not-at-top
  names = family.supported(spec, device)
  pairs = autotune.candidate_pairs(family, spec, names)
  reference = REFERENCE if REFERENCE in names else None
  dtype = _dtype(spec)
  out = {}
  for phase in PHASES[mode]:
    residuals = mode == "fwd+bwd" and phase == "fwd"
    what = "fwd" if phase == "fwd" else "grad"

    def check(got: Any, want: Any, residuals: bool = residuals, what: str = what) -> str | None:
      if residuals:  # (output, residuals): the output is what the caller sees.
        got, want = got[0], want[0]
      return mismatch(got, want, dtype, what)

    found = autotune.measure_phase(family, spec, phase, pairs, device, iterations=iterations,
                                   with_residuals=residuals, reference=reference, check=check,
                                   timer=time_candidate)
    best = found[0]
    out[phase] = PhaseChoice(best[0], best[1], round(best[2], 6), tuple(found))
  return out


def time_candidate(runner: Any, args: list[Any], phase: str, name: str, config: Any,
                   iterations: int, method: str | None) -> float:
  """Times one compiled candidate of `phase` (milliseconds): `autotune.time_runner`, the
  library's benchmarking with the device's default method. Tests replace it to fix the times."""
  from pjrtkit.kernels.core import autotune  # pylint: disable=g-import-not-at-top
  return autotune.time_runner(runner, args, phase, name, config, iterations, method)


def cached_entry(spec: Spec, mode: str, device: device_lib.DeviceInfo) -> Entry | None:
  """The entry for (device, spec, mode) this process holds, else the configured directory's,
  read without measuring anything; None when there is none (or measuring it failed)."""
  key = cache_key(device, spec, mode)
  directory = settings().path
  memo = (str(directory), digest(key))
  with _LOCK:
    if memo in _MEMORY:
      return _MEMORY[memo]
    return read_entry(directory, key)


def lookup_or_measure(family: Any, spec: Spec, mode: str,
                      device: device_lib.DeviceInfo) -> Entry | None:
  """The entry for (device, spec, mode): this process's, else the directory's, else measured now
  and written; None when measuring failed (warned once per process)."""
  current = settings()
  key = cache_key(device, spec, mode)
  directory = current.path
  memo = (str(directory), digest(key))
  with _LOCK:
    if memo in _MEMORY:
      return _MEMORY[memo]
    entry = read_entry(directory, key)
    if entry is None:
      _LOG.info("autotune cache: measuring %s %s %s on %s", spec.op, mode, spec.key(),
                device.describe())
      try:
        entry = Entry(key, measure(family, spec, mode, device, current.iterations))
      except Exception as e:  # pylint: disable=broad-except
        warnings.warn(f"pjrtkit.kernels autotune cache: measuring {spec.op} ({mode}) failed, "
                      f"using the rule's choice: {e}", AutotuneCacheWarning, stacklevel=2)
        _MEMORY[memo] = None
        return None
      try:
        write_entry(directory, entry, current.max_entries)
      except OSError as e:
        warnings.warn(f"pjrtkit.kernels autotune cache: cannot write to {directory} ({e}); "
                      "the choice stays in this process only", AutotuneCacheWarning,
                      stacklevel=2)
    _MEMORY[memo] = entry
    return entry
