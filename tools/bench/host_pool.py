"""The host buffer pool against no pool and jaxlib's cpu, in one run: device_put of 64 MiB
misaligned numpy arrays in both patterns (each result dropped before the next put; results kept
alive) and the resident memory left after device_put + delete of 256 MiB.

  .venv/bin/python -m tools.bench.host_pool [--rounds 3] [--out tools/bench/results]

Each (configuration, round) runs in a fresh interpreter; reported values are medians over rounds.
pjrtkit runs twice: as created by default and with ``host_buffer_cache_mib=0`` (no pool).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tools.bench.child import child_env
from tools.bench.config import DEFAULT_OUT


RSS_BYTES = 256 << 20
"""Size of the device_put + delete whose leftover resident memory is measured."""
IDLE_SECONDS = 2.0
"""How long the RSS measurement waits idle before its second reading."""


@dataclasses.dataclass(frozen=True)
class Config:
  """One configuration of the comparison."""
  name: str
  backend: str
  options: dict[str, Any]


CONFIGS: tuple[Config, ...] = (
    Config("cpu", "cpu", {}),
    Config("pjrtkit", "pjrtkit", {}),
    Config("pjrtkit_nopool", "pjrtkit", {"host_buffer_cache_mib": 0}),
)


def _rss_bytes() -> int:
  with open("/proc/self/statm", encoding="ascii") as f:
    return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _patterns(device: Any) -> dict[str, float]:
  from tools.bench import transfer  # pylint: disable=g-import-not-at-top
  from tools.bench.config import FULL  # pylint: disable=g-import-not-at-top
  values = {}
  dropped = transfer.host_to_device(dataclasses.replace(FULL, transfer_sizes=(64 << 20,)), device)
  values["dropped"] = dropped[0].seconds
  for m in transfer.host_to_device_kept(FULL, device):
    values["kept_first" if m.key.endswith("_first") else "kept"] = m.seconds
  return values


def _rss(device: Any) -> dict[str, float]:
  import jax  # pylint: disable=g-import-not-at-top
  from tools.bench.transfer import host_array  # pylint: disable=g-import-not-at-top
  src = host_array(RSS_BYTES)
  jax.device_put(src[:1024], device).block_until_ready()  # Warm the backend.
  gc.collect()
  baseline = _rss_bytes()
  array = jax.device_put(src, device).block_until_ready()
  if float(array[-1]) != float(src[-1]):
    raise AssertionError("device_put produced the wrong data")
  array.delete()
  del array
  gc.collect()
  after = _rss_bytes() - baseline
  time.sleep(IDLE_SECONDS)
  idle = _rss_bytes() - baseline
  return {"rss_after_delete": after, "rss_after_idle": idle}


def child(config_name: str, task: str) -> dict[str, float]:
  """Runs `task` ("patterns" or "rss") on configuration `config_name` in this process."""
  from tools.bench import backends  # pylint: disable=g-import-not-at-top
  config = next(c for c in CONFIGS if c.name == config_name)
  os.environ[backends.EXTRA_OPTIONS_ENV] = json.dumps(config.options)
  backends.activate(config.backend)
  import jax  # pylint: disable=g-import-not-at-top
  device = jax.devices()[0]
  return _patterns(device) if task == "patterns" else _rss(device)


def _run_child(config: str, task: str, env: dict[str, str]) -> dict[str, float]:
  with tempfile.TemporaryDirectory() as tmp:
    out = Path(tmp) / "out.json"
    cmd = [sys.executable, "-m", "tools.bench.host_pool", "--child", config, "--task", task,
           "--child-out", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
      raise RuntimeError(f"{config}/{task} failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(out.read_text())


def format_table(medians: dict[str, dict[str, float]]) -> str:
  """The report: ms per put in both patterns, RSS in MiB, ratios vs cpu and vs no pool."""
  rows = [("device_put 64 MiB, each result dropped", "dropped"),
          ("device_put 64 MiB, kept alive (first sample: fresh memory)", "kept_first"),
          ("device_put 64 MiB, kept alive (all samples)", "kept")]
  out = ["| workload | cpu | pjrtkit, no pool | pjrtkit | pjrtkit / cpu | pjrtkit / no pool |",
         "| --- | --- | --- | --- | --- | --- |"]
  for label, key in rows:
    cpu, nopool, pk = (medians[c][key] for c in ("cpu", "pjrtkit_nopool", "pjrtkit"))
    out.append(f"| {label} | {cpu * 1e3:.1f} ms | {nopool * 1e3:.1f} ms | {pk * 1e3:.1f} ms | "
               f"{pk / cpu:.2f} | {pk / nopool:.2f} |")
  for label, key in (("RSS after device_put + delete of 256 MiB", "rss_after_delete"),
                     (f"... and {IDLE_SECONDS:.0f} s idle", "rss_after_idle")):
    cpu, nopool, pk = (medians[c][key] / (1 << 20) for c in ("cpu", "pjrtkit_nopool", "pjrtkit"))
    out.append(f"| {label} | +{cpu:.0f} MiB | +{nopool:.0f} MiB | +{pk:.0f} MiB | - | - |")
  return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
  """Command-line entry point (parent, or a child with --child)."""
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--rounds", type=int, default=3)
  parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
  parser.add_argument("--child", default="", help=argparse.SUPPRESS)
  parser.add_argument("--task", default="", help=argparse.SUPPRESS)
  parser.add_argument("--child-out", default="", help=argparse.SUPPRESS)
  args = parser.parse_args(argv)
  if args.child:
    Path(args.child_out).write_text(json.dumps(child(args.child, args.task)))
    return 0

  env = child_env(drop_jax_platforms=True)
  samples: dict[str, dict[str, list[float]]] = {c.name: {} for c in CONFIGS}
  started = time.time()
  for r in range(args.rounds):
    for i in range(len(CONFIGS)):
      config = CONFIGS[(i + r) % len(CONFIGS)]  # Rotate so no configuration always runs first.
      for task in ("patterns", "rss"):
        print(f"[host_pool] round {r + 1}/{args.rounds}: {config.name} {task}", file=sys.stderr,
              flush=True)
        for key, value in _run_child(config.name, task, env).items():
          samples[config.name].setdefault(key, []).append(value)
  medians = {c: {k: statistics.median(v) for k, v in values.items()}
             for c, values in samples.items()}
  table = format_table(medians)
  print(table)
  args.out.mkdir(parents=True, exist_ok=True)
  (args.out / "host_pool.json").write_text(json.dumps({
      "date": time.strftime("%Y-%m-%d"), "rounds": args.rounds, "samples": samples,
      "medians": medians, "wall_seconds": round(time.time() - started, 1)}, indent=1) + "\n")
  return 0


if __name__ == "__main__":
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  sys.exit(main())
