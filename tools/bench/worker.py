"""One benchmark child: selects one backend, runs every workload, writes the results as JSON.

Usage (the parent, tools/bench/__main__.py, runs this):
  python -m tools.bench.worker --backend pjrtkit --out results.json [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable

from tools.bench import backends, compile_time, compute, transfer
from tools.bench.config import FULL, QUICK, BenchConfig
from tools.bench.records import Measurement


Workload = tuple[str, Callable[[], list[Measurement]]]


def workloads(config: BenchConfig, device: Any) -> list[Workload]:
  """The workloads in the order they run (named for progress messages)."""
  return [
      ("dispatch", lambda: compute.dispatch(config, device)),
      ("memcpy", lambda: transfer.memcpy(config)),
      ("host_to_device", lambda: transfer.host_to_device(config, device)),
      ("host_to_device_kept", lambda: transfer.host_to_device_kept(config, device)),
      ("device_to_host", lambda: transfer.device_to_host(config, device)),
      ("matmul", lambda: compute.matmul(config, device)),
      ("mlp", lambda: compute.mlp(config, device)),
      ("compile", lambda: compile_time.compile_times(config, device)),
      ("pmap_psum", lambda: compute.pmap_psum(config)),
  ]


def run(backend: str, config: BenchConfig, only: set[str] | None = None) -> dict[str, Any]:
  """Runs the workloads (all, or those named in `only`) on `backend`; returns the JSON record."""
  backends.activate(backend)
  import jax  # pylint: disable=g-import-not-at-top

  device = jax.devices()[0]
  measurements: list[Measurement] = []
  for name, fn in workloads(config, device):
    if only and name not in only:
      continue
    print(f"[bench:{backend}] {name}", file=sys.stderr, flush=True)
    measurements.extend(fn())
  return {
      "backend": backend,
      "platform": device.client.platform,
      "platform_version": device.client.platform_version,
      "device_kind": device.device_kind,
      "device_count": jax.device_count(),
      "jax_version": jax.__version__,
      "measurements": [m.to_json() for m in measurements],
  }


def main(argv: list[str] | None = None) -> int:
  """Command-line entry point of the child."""
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--backend", required=True, choices=[b.name for b in backends.BACKENDS])
  parser.add_argument("--out", required=True, help="where to write the JSON record")
  parser.add_argument("--quick", action="store_true", help="smoke-test sizes and repeats")
  parser.add_argument("--only", default="", help="comma-separated workload names")
  args = parser.parse_args(argv)
  only = {w for w in args.only.split(",") if w} or None
  record = run(args.backend, QUICK if args.quick else FULL, only)
  with open(args.out, "w", encoding="utf-8") as f:
    json.dump(record, f, indent=1)
  return 0


if __name__ == "__main__":
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
  sys.exit(main())
