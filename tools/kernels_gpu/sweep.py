"""Times attention's ``implementation=None`` against every candidate over a grid of shapes.

  python -m tools.kernels_gpu.sweep [--grid default|full|cpu|SPEC] [--part K/N]
      [--iterations 10] [--cache-iterations 5] [--budget-s S] [--out DIR] [--check]

Per grid point (batch, sequence, heads, kv heads, head_dim, causal, forward or forward+backward,
the key length where it differs from the query's; bfloat16 unless the point or ``--dtype`` names
another dtype, ``--dtype`` overriding every point's), in one process on the current device:

* every candidate: each implementation that serves the call, at each of its autotuning configs
  (forced through an `AutotuningResult` for the call by name, the same config for the forward and
  the gradient), its output (and gradients) checked against the first of "xla", "xla_chunked"
  that ran, within the tolerances of `pjrtkit.kernels.testing`; a mismatch is never the best;
* ``implementation=None`` with the autotune cache enabled in a fresh directory (the first trace
  measures; the time of that is ``measure_s``), and with it disabled (the tuned file, else the
  rule), each with what it took per phase.

Each point's ratio is None's time / the best candidate's; "within" is ratio <= 1.05. Writes
``sweep_<platform>.json`` and ``sweep_<platform>.md`` into ``--out`` after every point, so a run cut
by a time limit keeps what it measured; ``--budget-s`` skips the points that would start after it.
``--check`` exits 1 when a point's cached None is not within 5 % (or did not run).

Grids: ``default`` (8 points), ``full`` (80 points), ``classes`` (13 points: the shape classes of
``kernels/dot_product_attention/arg_specs.py``'s ``SHAPE_CLASSES``, S1-S13: head_dim 80, 96, 192,
256, lengths not a multiple of 128, group ratios 8, 16 and 32, float16, decode and prefill
against 4096 keys), ``cpu`` (2 tiny points for the CPU test), or SPEC: comma-separated
``PHASE:BxTxHxKxD[xS][:causal]`` with PHASE ``fwd`` or ``fwdbwd`` and S the key length when it
is not T (e.g. ``fwdbwd:4x4096x32x8x128,fwd:1x16384x16x16x128:causal,fwd:128x1x32x8x128x4096``). On one H200 a head_dim-128
forward+backward point takes 53-83 s (every candidate compiled, checked on the device and timed
twice: by the sweep, then by the cache's own measurement) and the default grid about 380 s, one
10-minute device call; ``--part K/N`` runs points K-1, K-1+N, ... of a grid that does not fit one
(``--part 1/4`` to ``--part 4/4``, one per call).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import jaxlib

from pjrtkit import _version
from pjrtkit import kernels as pk
from pjrtkit.kernels.core import autotune_cache
from pjrtkit.kernels.core import op as op_lib
from pjrtkit.kernels.dot_product_attention import api as attention_api
from pjrtkit.kernels.dot_product_attention import arg_specs as attention_specs
from pjrtkit.kernels.dot_product_attention import base as attention_base

FWD, FWD_BWD = "fwd", "fwd+bwd"
WITHIN = 1.05
"""None is "within" when its time is at most this times the best candidate's."""
REFERENCES = ("xla", "xla_chunked")
FORMAT_VERSION = 1


@dataclasses.dataclass(frozen=True)
class Point:
  """One grid point: attention ``[batch, seq, heads, head_dim]`` with `kv_heads` key/value heads
  of `kv_seq` keys (None: `seq`)."""

  batch: int
  seq: int
  heads: int
  kv_heads: int
  head_dim: int
  causal: bool
  phase: str
  dtype: str = "bfloat16"
  kv_seq: int | None = None

  @property
  def label(self) -> str:
    """``fwd+bwd 4x4096x32x128 kv8 causal``; ``fwd 128x1x32x128 kv8 s4096 float16`` for another
    key length and another dtype than bfloat16."""
    kv = f" kv{self.kv_heads}" if self.kv_heads != self.heads else ""
    kv += f" s{self.kv_seq}" if self.kv_seq not in (None, self.seq) else ""
    kv += f" {self.dtype}" if self.dtype != "bfloat16" else ""
    causal = " causal" if self.causal else ""
    return f"{self.phase} {self.batch}x{self.seq}x{self.heads}x{self.head_dim}{kv}{causal}"

  @property
  def keys(self) -> int:
    """The key/value length."""
    return self.seq if self.kv_seq is None else self.kv_seq

  @property
  def mode(self) -> str:
    """The autotune cache's mode of this point's call."""
    return autotune_cache.MODES[self.phase == FWD_BWD]

  def to_json(self) -> dict[str, Any]:
    """JSON-ready dict (``kv_seq`` only where the point has its own key length)."""
    info = dataclasses.asdict(self)
    if info["kv_seq"] is None:
      del info["kv_seq"]
    return info


def _p(phase: str, b: int, t: int, h: int, k: int, d: int, causal: bool = False,
       kv_seq: int | None = None) -> Point:
  return Point(b, t, h, k, d, causal, phase, kv_seq=kv_seq)


def from_case(case: attention_specs.AttentionCase) -> Point:
  """The grid point of an attention case of ``arg_specs`` (its shape, heads, key length, causal
  mask, phase and dtype)."""
  b, t, h, d = case.shape
  return Point(b, t, h, case.kv_shape[2], d, case.causal, case.phase, case.dtype, case.kv_seq)


GRIDS: dict[str, tuple[Point, ...]] = {
    # Untuned shapes of the issue, tuned controls, GQA, causal, both head dims, 1024..16384.
    "default": (
        _p(FWD_BWD, 16, 1024, 32, 32, 128),
        _p(FWD_BWD, 4, 4096, 32, 8, 128),
        _p(FWD_BWD, 1, 16384, 16, 16, 128),
        _p(FWD_BWD, 2, 8192, 16, 16, 64, True),
        _p(FWD, 1, 16384, 16, 16, 128),
        _p(FWD, 2, 8192, 32, 8, 128, True),
        _p(FWD, 8, 2048, 16, 4, 64, True),
        _p(FWD, 16, 1024, 16, 16, 64),
    ),
    "full": tuple(
        _p(phase, 16384 // t * (2 if d == 64 else 1), t, h, k, d, causal)
        for phase in (FWD, FWD_BWD) for t in (1024, 2048, 4096, 8192, 16384)
        for h, k in ((16, 16), (32, 8)) for d in (64, 128) for causal in (False, True)),
    # The shape classes models use (issue 50): arg_specs.SHAPE_CLASSES, S1-S13.
    "classes": tuple(from_case(c) for c in attention_specs.SHAPE_CLASSES),
    "cpu": (_p(FWD, 1, 64, 2, 1, 32), _p(FWD_BWD, 1, 64, 4, 2, 32, True)),
}


def parse_grid(text: str, dtype: str | None = None) -> tuple[Point, ...]:
  """A named grid or a SPEC (see the module docstring), every point in `dtype` when given (None:
  each point's own, bfloat16 unless it names another).

  Raises:
    SystemExit: for text that is neither, naming the bad item.
  """
  if text in GRIDS:
    points = GRIDS[text]
  else:
    points = []
    for item in text.split(","):
      parts = item.strip().split(":")
      try:
        phase = {"fwd": FWD, "fwdbwd": FWD_BWD, "fwd+bwd": FWD_BWD}[parts[0]]
        sizes = [int(x) for x in parts[1].split("x")]
        if len(sizes) not in (5, 6) or len(parts) > 3 or (
            len(parts) == 3 and parts[2] != "causal") or min(sizes) < 1:
          raise ValueError
      except (KeyError, IndexError, ValueError):
        raise SystemExit(f"--grid: {item!r} is not PHASE:BxTxHxKxD[xS][:causal] (PHASE fwd or "
                         f"fwdbwd) nor one of {', '.join(GRIDS)}") from None
      kv_seq = sizes[5] if len(sizes) == 6 and sizes[5] != sizes[1] else None
      points.append(_p(phase, *sizes[:5], len(parts) == 3, kv_seq))
  if dtype is None:
    return tuple(points)
  return tuple(dataclasses.replace(p, dtype=dtype) for p in points)


def select_part(points: tuple[Point, ...], text: str) -> tuple[Point, ...]:
  """Points K-1, K-1+N, ... of `points` for `text` ``K/N`` (1 <= K <= N; "" or ``1/1``: all).

  Raises:
    SystemExit: for text that is not K/N with 1 <= K <= N.
  """
  if not text:
    return points
  try:
    k, n = (int(x) for x in text.split("/"))
    if not 1 <= k <= n:
      raise ValueError
  except ValueError:
    raise SystemExit(f"--part: {text!r} is not K/N with 1 <= K <= N (e.g. 1/2)") from None
  return points[k - 1::n]


def make_inputs(point: Point) -> list[jax.Array]:
  """q, k, v (random normal, fixed seed) and, for forward+backward, the output cotangent."""
  keys = jax.random.split(jax.random.key(7), 4)
  dtype = jnp.dtype(point.dtype)
  q_shape = (point.batch, point.seq, point.heads, point.head_dim)
  kv_shape = (point.batch, point.keys, point.kv_heads, point.head_dim)
  arrays = [jax.random.normal(keys[0], q_shape, dtype), jax.random.normal(keys[1], kv_shape, dtype),
            jax.random.normal(keys[2], kv_shape, dtype)]
  if point.phase == FWD_BWD:
    arrays.append(jax.random.normal(keys[3], q_shape, dtype))
  return arrays


def phase_function(point: Point, implementation: str | None) -> Callable[..., Any]:
  """What is timed: the forward, or forward and backward (output and q, k, v gradients)."""

  def forward(q: jax.Array, k: jax.Array, v: jax.Array) -> jax.Array:
    return pk.dot_product_attention(q, k, v, is_causal=point.causal, implementation=implementation)

  if point.phase == FWD:
    return forward

  def fwd_bwd(q: jax.Array, k: jax.Array, v: jax.Array, dout: jax.Array) -> Any:
    out, pullback = jax.vjp(forward, q, k, v)
    return out, pullback(dout)

  return fwd_bwd


def point_spec(point: Point) -> pk.Spec:
  """The Spec of the point's call."""
  dtype = jnp.dtype(point.dtype)
  q = jax.ShapeDtypeStruct((point.batch, point.seq, point.heads, point.head_dim), dtype)
  kv = jax.ShapeDtypeStruct((point.batch, point.keys, point.kv_heads, point.head_dim), dtype)
  return attention_base.make_spec(q, kv, kv, None, None, point.causal, None)


def forcing(spec: pk.Spec, implementation: str, config: Any) -> pk.AutotuningResult:
  """An `AutotuningResult` giving a call that names `implementation` `config` in both phases."""
  cfg = op_lib.config_to_json(config)
  return pk.AutotuningResult(pk.current_device().kind, tuple(
      pk.TunedChoice(spec.op, phase, implementation, spec, implementation, cfg, 0.0)
      for phase in ("fwd", "bwd")))


def _check(point: Point, got: Any, want: Any) -> str | None:
  if point.phase == FWD:
    return autotune_cache.mismatch(got, want, point.dtype, "fwd")
  return (autotune_cache.mismatch(got[0], want[0], point.dtype, "fwd")
          or autotune_cache.mismatch(got[1], want[1], point.dtype, "grad"))


def _error(e: BaseException) -> str:
  return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]


def _choice_json(choice: op_lib.Choice) -> dict[str, Any]:
  return {"implementation": choice.op.implementation,
          "config": dict(op_lib.config_to_json(choice.config)), "source": choice.source}


def none_choices(point: Point, cached: bool) -> dict[str, Any]:
  """What ``implementation=None`` takes per phase at `point` now (after its call, so the cache
  answers from this process's memory)."""
  spec, device = point_spec(point), pk.current_device()
  fwd = attention_api.FAMILY.choose(spec, None, "fwd", device)
  bwd = attention_api.FAMILY.choose(spec, None, "bwd", device)
  if cached and "rule" in (fwd.source, bwd.source):
    fwd, bwd = attention_api.FAMILY.cached_choices(spec, device, point.mode, fwd, bwd)
  out = {"fwd": _choice_json(fwd)}
  if point.phase == FWD_BWD:
    out["bwd"] = _choice_json(bwd)
  return out


def measure_candidates(point: Point, args: list[jax.Array], iterations: int,
                       workers: int) -> list[dict[str, Any]]:
  """Every (implementation, config) serving the point, checked and timed (see the module
  docstring); lowered one by one, compiled `workers` at a time, run one at a time."""
  spec, device = point_spec(point), pk.current_device()
  family = attention_api.FAMILY
  pairs = [(name, config) for name in family.supported(spec, device)
           for config in family.implementations[name].autotuning_configs(spec)]
  lowered: list[Any] = []
  for name, config in pairs:
    try:
      with forcing(spec, name, config):
        start = time.perf_counter()
        lowered.append((jax.jit(phase_function(point, name)).lower(*args),
                        (time.perf_counter() - start) * 1e3))
    except Exception as e:  # pylint: disable=broad-except
      lowered.append(e)

  def compile_one(item: Any) -> Any:
    if isinstance(item, Exception):
      return item
    try:
      start = time.perf_counter()
      compiled = item[0].compile()
      return pk.benchmarking.BenchmarkRunner(compiled, item[1], (time.perf_counter() - start) * 1e3)
    except Exception as e:  # pylint: disable=broad-except
      return e

  with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
    runners = list(pool.map(compile_one, lowered))
  rows = [{"implementation": name, "config": dict(op_lib.config_to_json(config))}
          for name, config in pairs]
  order = sorted(range(len(pairs)), key=lambda i: (pairs[i][0] not in REFERENCES,
                                                   REFERENCES.index(pairs[i][0])
                                                   if pairs[i][0] in REFERENCES else 0))
  want = None
  for i in order:
    row, runner = rows[i], runners[i]
    try:
      if isinstance(runner, Exception):
        raise runner
      got = jax.block_until_ready(runner.compiled(*args))
      if want is None and row["implementation"] in REFERENCES:
        want, row["reference"] = got, True
      why = None if want is None else _check(point, got, want)
      del got
      if why is not None:
        row.update(status="mismatch", error=why)
        continue
      row.update(status="ok", time_ms=round(runner(args, iterations=iterations)
                                            .median_evaluation_time_ms, 6))
    except Exception as e:  # pylint: disable=broad-except
      row.update(status="error", error=_error(e))
  del want, runners
  return rows


def time_none(point: Point, args: list[jax.Array], iterations: int, cache_dir: str | None,
              cache_iterations: int) -> dict[str, Any]:
  """``implementation=None`` with the cache in `cache_dir` (None: disabled): time, the lowering
  time in seconds (with the cache, its measurement), and what it took."""
  settings = (autotune_cache.using(enabled=True, directory=cache_dir, iterations=cache_iterations)
              if cache_dir else autotune_cache.using(enabled=False))
  try:
    with settings:
      runner = pk.benchmarking.compile_benchmark(phase_function(point, None), args)
      choices = none_choices(point, cached=cache_dir is not None)
    t = runner(args, iterations=iterations).median_evaluation_time_ms
    return {"status": "ok", "time_ms": round(t, 6),
            "measure_s": round(runner.lowering_time_ms / 1e3, 3), "choices": choices}
  except Exception as e:  # pylint: disable=broad-except
    return {"status": "error", "error": _error(e)}


def run_point(point: Point, iterations: int, cache_dir: str, cache_iterations: int,
              workers: int) -> dict[str, Any]:
  """One point's record (see the module docstring)."""
  start = time.perf_counter()
  args = make_inputs(point)
  candidates = measure_candidates(point, args, iterations, workers)
  uncached = time_none(point, args, iterations, None, cache_iterations)
  cached = time_none(point, args, iterations, cache_dir, cache_iterations)
  ok = [c for c in candidates if c["status"] == "ok"]
  best = min(ok, key=lambda c: c["time_ms"]) if ok else None
  record: dict[str, Any] = {"point": point.to_json(), "label": point.label,
                            "candidates": candidates,
                            "best": None if best is None else {
                                k: best[k] for k in ("implementation", "config", "time_ms")},
                            "none_cached": cached, "none_uncached": uncached}
  for name, none in (("", cached), ("_uncached", uncached)):
    ratio = (round(none["time_ms"] / best["time_ms"], 4)
             if best and none["status"] == "ok" and best["time_ms"] > 0 else None)
    record["ratio" + name] = ratio
    record["within_5pct" + name] = ratio is not None and ratio <= WITHIN
  record["seconds"] = round(time.perf_counter() - start, 1)
  return record


def failures(doc: dict[str, Any]) -> list[str]:
  """Labels of the points whose cached None is not within 5 % of the best (skipped ones too)."""
  return [p["label"] for p in doc["points"] if not p.get("within_5pct")]


def _fmt_choice(none: dict[str, Any]) -> str:
  if none["status"] != "ok":
    return f"error: {none['error']}"
  parts = []
  for phase, c in none["choices"].items():
    cfg = ",".join(f"{v}" for _, v in sorted(c["config"].items()))
    parts.append(f"{phase} {c['implementation']}{f'({cfg})' if cfg else ''} [{c['source']}]")
  return "; ".join(parts)


def markdown(doc: dict[str, Any]) -> str:
  """The table of `doc`: one row per point."""
  lines = [f"# `implementation=None` against every candidate: {doc['device_kind']} "
           f"({doc['platform']}), {doc['dtype']}, median of {doc['iterations']}, ms",
           "",
           "| point | best candidate | best | None (cache) | None | ratio | within 5 % | "
           "None (no cache) | None | ratio |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
  for p in doc["points"]:
    if "skipped" in p:
      lines.append(f"| {p['label']} | skipped: {p['skipped']} | | | | | no | | | |")
      continue
    best = p["best"]
    bcfg = "" if best is None else ",".join(str(v) for _, v in sorted(best["config"].items()))
    bname = "none ran" if best is None else f"{best['implementation']}" + (
        f"({bcfg})" if bcfg else "")
    cached, uncached = p["none_cached"], p["none_uncached"]
    btime = "" if best is None else f"{best['time_ms']:.4f}"
    lines.append(
        f"| {p['label']} | {bname} | {btime} | "
        f"{_fmt_choice(cached)} | {cached.get('time_ms', '')} | {p['ratio'] or ''} | "
        f"{'yes' if p['within_5pct'] else '**no**'} | {_fmt_choice(uncached)} | "
        f"{uncached.get('time_ms', '')} | {p['ratio_uncached'] or ''} |")
  within = sum(bool(p.get("within_5pct")) for p in doc["points"])
  lines += ["", f"{within} of {len(doc['points'])} points within 5 % with the cache "
            f"({sum(bool(p.get('within_5pct_uncached')) for p in doc['points'])} without); "
            f"{doc['total_s']} s"]
  return "\n".join(lines) + "\n"


def _write(out: Path, doc: dict[str, Any]) -> None:
  out.mkdir(parents=True, exist_ok=True)
  for suffix, text in (("json", json.dumps(doc, indent=1, sort_keys=True) + "\n"),
                       ("md", markdown(doc))):
    path = out / f"sweep_{doc['platform']}.{suffix}"
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main(argv: Sequence[str] | None = None) -> int:
  """Runs the sweep; returns 1 with ``--check`` when a point is outside 5 %, else 0."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--grid", default="default", help="default, full, cpu or a SPEC")
  parser.add_argument("--part", default="", help="K/N: points K-1, K-1+N, ... of the grid")
  parser.add_argument("--dtype", default=None, choices=attention_base.FLOAT_DTYPES,
                      help="every point's dtype (default: each point's own, bfloat16 unless it "
                           "names another)")
  parser.add_argument("--iterations", type=int, default=10, help="timed calls per contender")
  parser.add_argument("--cache-iterations", type=int, default=autotune_cache.DEFAULT_ITERATIONS,
                      help="timed calls per candidate in the cache's own measurement")
  parser.add_argument("--cache-dir", default="",
                      help="the cache's directory (default: a fresh temporary one, removed at "
                           "the end)")
  parser.add_argument("--budget-s", type=float, default=0.0,
                      help="skip points that would start after this many seconds (0: none)")
  parser.add_argument("--workers", type=int, default=8, help="candidates compiled at a time")
  parser.add_argument("--out", default=".", help="folder for sweep_<platform>.{json,md}")
  parser.add_argument("--check", action="store_true",
                      help="exit 1 when a point's cached None is not within 5 %% of the best")
  ns = parser.parse_args(argv)
  if ns.iterations < 1 or ns.cache_iterations < 1:
    raise SystemExit("--iterations and --cache-iterations must be at least 1")
  points = select_part(parse_grid(ns.grid, ns.dtype), ns.part)
  if ns.cache_dir:
    return _sweep(ns, points, ns.cache_dir)
  with tempfile.TemporaryDirectory(prefix="pk_sweep_cache_") as cache_dir:
    return _sweep(ns, points, cache_dir)


def _sweep(ns: argparse.Namespace, points: tuple[Point, ...], cache_dir: str) -> int:
  """Runs `points` with the autotune cache in `cache_dir`; what ``main`` returns."""
  device = pk.current_device()
  doc: dict[str, Any] = {
      "format": FORMAT_VERSION, "device_kind": device.kind, "platform": device.platform,
      "jax": jax.__version__, "jaxlib": jaxlib.__version__,
      "library_version": _version.__version__, "grid": ns.grid,
      "dtype": ns.dtype or "/".join(sorted({p.dtype for p in points})) or "bfloat16",
      "part": ns.part or "1/1",
      "iterations": ns.iterations, "cache_iterations": ns.cache_iterations,
      "cache_dir": ns.cache_dir or "(temporary, removed at the end)", "points": [],
      "total_s": 0.0}
  out = Path(ns.out)
  start = time.perf_counter()
  for point in points:
    elapsed = time.perf_counter() - start
    if ns.budget_s and elapsed > ns.budget_s:
      record = {"point": point.to_json(), "label": point.label,
                "skipped": f"time budget {ns.budget_s:g} s", "within_5pct": False,
                "within_5pct_uncached": False}
    else:
      record = run_point(point, ns.iterations, cache_dir, ns.cache_iterations, ns.workers)
    doc["points"].append(record)
    doc["all_within_5pct"] = not failures(doc)
    doc["total_s"] = round(time.perf_counter() - start, 1)
    _write(out, doc)
    if "skipped" in record:
      print(f"{point.label}: {record['skipped']}", flush=True)
    else:
      print(f"{point.label}: best {record['best']} None {record['none_cached'].get('time_ms')} "
            f"ratio {record['ratio']} (no cache {record['ratio_uncached']}) "
            f"in {record['seconds']} s", flush=True)
  print(markdown(doc), end="")
  bad = failures(doc)
  if ns.check and bad:
    print(f"--check: {len(bad)} point(s) outside 5 %: {'; '.join(bad)}", file=sys.stderr)
    return 1
  return 0


if __name__ == "__main__":
  sys.exit(main())
