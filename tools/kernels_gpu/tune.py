"""Autotunes pjrtkit.kernels on the current device at the GPU comparison's shapes and the kernels
issue's snippet shapes, and writes the shipped tuned file ``kernels/tuned/<device kind>.json``.

  python -m tools.kernels_gpu.tune [--cases A1,L2] [--iterations 5] [--out FILE] [--no-snippet]

Each case's ``implementation=None`` calls (forward and gradient) go through `pk.autotune`, which
measures every implementation and config that serves each (phase, call); the file is written after
every case, so a run cut by a time limit keeps what it measured. Besides the
``None`` choice of each, the file gets, for every implementation measured, that implementation's
fastest config as the choice of a call that asked for it by name (``implementation="triton"``
then runs its tuned config). Existing choices in the file for other calls are kept. The
comparison's held-out cases (H1..., `compare_cases.Case.held_out`) are never tuned: left out of
the default list, refused when named.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import jax
import jax.numpy as jnp

from pjrtkit import kernels as pk
from pjrtkit.kernels.core import markers
from pjrtkit.kernels.core import tuned as tuned_lib
from tools.bench import compare_cases, compare_contenders

def _case_function(case: compare_cases.Case) -> Any:
  """The case's ``implementation=None`` call, forward or forward+backward, as in the comparison."""
  return compare_contenders.phase_function(compare_contenders.pk_forward(case, None), case)


def _snippet_layer_norm() -> tuple[Any, list[jax.Array]]:
  """The kernels issue's layer norm call: x (32, 2048, 16, 64), scale (64,), no offset, bf16."""
  key = jax.random.key(0)
  x = jax.random.normal(key, (32, 2048, 16, 64), jnp.bfloat16)
  scale = jax.random.normal(key, (64,), jnp.bfloat16)
  return jax.grad(lambda x, s: jnp.sum(pk.layer_norm(x, scale=s, offset=None)
                                       .astype(jnp.float32)), argnums=(0, 1)), [x, scale]


def cases_to_tune(ids: Sequence[str]) -> list[compare_cases.Case]:
  """The comparison's cases named by `ids` (all when empty) but the held-out ones, forward+backward
  first (a forward-only case at the same shape is then already tuned).

  Raises:
    SystemExit: `ids` names a held-out case.
  """
  chosen = compare_cases.select(ids)
  held_out = [c.id for c in chosen if c.held_out]
  if ids and held_out:
    raise SystemExit(f"{', '.join(held_out)}: held out (the comparison's shapes nobody tuned); "
                     "tuning them would end that")
  return sorted((c for c in chosen if not c.held_out), key=lambda c: c.phase == compare_cases.FWD)


def per_implementation(choice: pk.TunedChoice) -> list[pk.TunedChoice]:
  """For an ``implementation=None`` choice: each measured implementation's fastest config, as the
  choice of a call that names that implementation."""
  out = []
  for name in sorted({c[0] for c in choice.candidates}):
    mine = tuple(c for c in choice.candidates if c[0] == name)  # Already fastest first.
    out.append(pk.TunedChoice(choice.op, choice.phase, name, choice.spec, name, mine[0][1],
                              mine[0][2], mine))
  return out


def merge(existing: pk.AutotuningResult | None, new: Sequence[pk.TunedChoice],
          device_kind: str) -> pk.AutotuningResult:
  """`new` over `existing`'s choices (same key: new wins), sorted by key for stable files."""
  by_key = {c.key(): c for c in (existing.choices if existing else ())}
  by_key.update({c.key(): c for c in new})
  return pk.AutotuningResult(device_kind, tuple(by_key[k] for k in sorted(by_key)))


def main(argv: Sequence[str] | None = None) -> int:
  """Tunes, writes the file, prints one line per choice."""
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--cases", default="", help="comparison case ids (default: all)")
  parser.add_argument("--iterations", type=int, default=5)
  parser.add_argument("--out", default="",
                      help="file to write (default: kernels/tuned/<kind>.json)")
  parser.add_argument("--no-snippet", action="store_true", help="leave out the snippet's call")
  ns = parser.parse_args(argv)
  device = pk.current_device()
  path = Path(ns.out) if ns.out else tuned_lib.shipped_path(device.kind)
  existing = pk.AutotuningResult.loads(path.read_text()) if path.exists() else None
  if existing is not None and existing.device_kind != device.kind:
    raise SystemExit(f"{path} holds choices for {existing.device_kind!r}, not {device.kind!r}")
  work = [(case.label, _case_function(case), compare_contenders.make_inputs(case))
          for case in cases_to_tune(ns.cases.split(",") if ns.cases else [])]
  if not ns.no_snippet:
    work.append(("the kernels issue's layer norm call", *_snippet_layer_norm()))
  done: set[tuple[str, str, str]] = set()
  start = time.perf_counter()
  for label, fn, args in work:
    jitted = jax.jit(fn)
    calls = {(c.phase, c.requested, c.spec.key()) for c in pk.find_kernel_calls(jitted, *args)}
    if calls <= done:
      print(f"{label}: already tuned", flush=True)
      continue
    # ignore_cache: measure the calls the shipped file already has a choice for, too.
    result = pk.autotune(jitted, *args, iterations=ns.iterations, ignore_cache=True)
    choices = []
    for c in result.choices:
      done.add((c.phase, c.requested, c.spec.key()))
      if c.requested == markers.AUTO:
        choices.append(c)
        choices.extend(per_implementation(c))
    existing = merge(existing, choices, device.kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    # After each case: a run cut off by its time limit keeps what it tuned.
    path.write_text(existing.dumps() + "\n", encoding="utf-8")
    print(f"{label}: tuned at {time.perf_counter() - start:.0f} s", flush=True)
    for c in result.choices:
      print(f"  {c.phase} {c.implementation} {dict(c.config)} {c.time_ms:.4f} ms "
            f"({len(c.candidates)} measured; next: "
            + ", ".join(f"{i} {dict(cfg)} {t:.4f}" for i, cfg, t in c.candidates[1:4]) + ")",
            flush=True)
  print(f"{len(existing.choices) if existing else 0} choices in {path}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
