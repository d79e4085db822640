"""Registers and spills of the fused Mosaic attention backward, and of the ragged_dot and gated
linear unit Mosaic kernels, without a GPU, as the H200 gets them.

  .venv/bin/python -m tools.kernels_gpu.ptxas_local B9,B4 [1,16384,16,16,128,True ...] \\
      [ragged_dot:16384,512,1408,64,1:block_n=256 ...] [--kernel /tmp/regs.py] \\
      [--set stages=3 ...] [--cache DIR] [--keep DIR]

prints one line per case, e.g.

  B9 2x6144x16x128 kv16: registers 168, spill stores 0 B, spill loads 0 B, setmaxnreg 232/40

Cases are ``bwd_variant_bench``'s ids (B1-B10, C16-C256; comma-separated) or explicit shapes
``B,T,H,K,D,causal`` (one per argument). The kernel is ``kernels/dot_product_attention/
mosaic_bwd.py``'s or a copy's (``--kernel``), at the geometry ``bwd_variant_bench`` times
(``geometry``, with ``--set FIELD=INT`` fields replaced). Cases ``ragged_dot:...`` and
``gated_linear_unit:...`` compile those ops' Mosaic forward kernels instead, at a shape and
config (`ptxas_ops`; ``--kernel`` and ``--set`` do not apply to them). A kernel the custom call's
compile refuses is reported as not measured, with the plugin's output.

How: stage 1 (``ptxas_lower``) lowers the kernel for platform "cuda" with jax/jaxlib 0.11.2 in a
venv of its own and keeps the module exactly as the ``mosaic_gpu`` custom call receives it.
Stage 2 (``ptxas_compile``) loads jax-cuda13-pjrt 0.11.2's ``xla_cuda_plugin.so`` and calls its
exported ``MosaicGpuCompile``, the custom call's own compile (its pass pipeline, LLVM NVPTX and
ptxas 13.0.88), with a fake ``libcuda.so.1`` (``fake_libcuda.c``: compute capability 9.0) and
``MOSAIC_GPU_DUMP_PTX`` / ``MOSAIC_GPU_DUMP_PTXAS`` set; the tool reads ptxas's ``Used N
registers`` and spill lines and the PTX's ``setmaxnreg`` values. That is the H200's toolchain
(jax 0.11.2, CUDA 13 plugin, ptxas 13.0), and its numbers match the H200's.

First use fetches the pinned wheels (`REQUIREMENTS`, ``pip download --no-deps``) into the cache
(default ``build/ptxas_local/``), makes the jax 0.11.2 venv there with the project's Python 3.12
(``.venv/bin/python -m venv``), and builds the fake libcuda with ``cc``; it refuses (exit 2) where
``cc`` or network access is missing. Exit 1 when some case was not measured.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Sequence

from pjrtkit.kernels.dot_product_attention.mosaic import bwd as mosaic_bwd
from tools.kernels_gpu import bwd_variant_bench, ptxas_ops, variant_cli

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CACHE = REPO / "build" / "ptxas_local"
PROJECT_PYTHON = REPO / ".venv" / "bin" / "python"
FAKE_LIBCUDA_SOURCE = Path(__file__).resolve().parent / "fake_libcuda.c"

VENV_REQUIREMENTS = ("jax==0.11.2", "jaxlib==0.11.2", "ml_dtypes==0.7.0", "numpy==2.5.5",
                     "opt_einsum==3.4.0", "scipy==1.18.1")
"""jax 0.11.2 and what it needs, pinned (the stage 1 venv; installed with ``--no-deps``)."""
PLUGIN_REQUIREMENT = "jax-cuda13-pjrt==0.11.2"
"""``xla_cuda_plugin.so``: the H200's CUDA 13 PJRT plugin, which exports ``MosaicGpuCompile``."""
PTXAS_REQUIREMENT = "nvidia-cuda-nvcc==13.0.88"
"""ptxas 13.0.88, the one the H200's plugin runs."""
LIBDEVICE_REQUIREMENT = "nvidia-cuda-nvcc-cu12==12.9.86"
"""libdevice 10 (the CUDA 13 nvcc wheel has no ``nvvm/``; libdevice 10 is the same file)."""
REQUIREMENTS = VENV_REQUIREMENTS + (PLUGIN_REQUIREMENT, PTXAS_REQUIREMENT, LIBDEVICE_REQUIREMENT)
"""Every wheel the tool fetches on first use."""

PLUGIN_MEMBER = "jax_plugins/xla_cuda13/xla_cuda_plugin.so"
PTXAS_MEMBER = "nvidia/cu13/bin/ptxas"
LIBDEVICE_MEMBER = "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc"
DEFAULT_INDEX = "https://pypi.org/simple/"


class SetupError(Exception):
  """What the cache needs and this machine lacks (the tool exits 2 with it)."""


@dataclasses.dataclass(frozen=True)
class Resources:
  """ptxas's figures for the kernel and the PTX's ``setmaxnreg`` values (in order)."""

  registers: int
  spill_stores: int
  spill_loads: int
  setmaxnreg_inc: tuple[int, ...]
  setmaxnreg_dec: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class Toolchain:
  """The cache's pieces: the jax 0.11.2 venv's python, the plugin, the CUDA root (``bin/ptxas``,
  ``nvvm/libdevice``) and the folder holding the fake ``libcuda.so.1``."""

  python: Path
  plugin: Path
  cuda_root: Path
  fake_libcuda_dir: Path


# --- cases -----------------------------------------------------------------------------------

def parse_shape(text: str) -> bwd_variant_bench.BwdCase:
  """``B,T,H,K,D,causal`` (five positive integers, then True or False) -> BwdCase.

  Raises:
    ValueError: naming the shape and what it should be.
  """
  want = "B,T,H,K,D,causal (5 positive integers, then True or False)"
  items = text.split(",")
  if len(items) != 6:
    raise ValueError(f"shape {text!r}: expected {want}, got {len(items)} items")
  *dims, causal = items
  if not all(d.isdigit() and int(d) > 0 for d in dims):
    raise ValueError(f"shape {text!r}: expected {want}, got {dims}")
  if causal.lower() not in ("true", "false"):
    raise ValueError(f"shape {text!r}: expected {want}, got causal={causal!r}")
  return bwd_variant_bench.BwdCase(*map(int, dims), causal.lower() == "true")


Case = Any
"""A `bwd_variant_bench.BwdCase` (the attention backward) or a `ptxas_ops.OpCase`."""


def parse_cases(texts: Sequence[str]) -> list[tuple[str, Case]]:
  """(case id, case) per case: each of `texts` is comma-separated ``bwd_variant_bench`` ids,
  one explicit shape, or another op's kernel (``ragged_dot:...``, ``gated_linear_unit:...``,
  `ptxas_ops`; the last two with id "").

  Raises:
    ValueError: naming unknown ids (and the accepted ones) or a bad shape.
  """
  cases: list[tuple[str, Case]] = []
  for text in texts:
    if ptxas_ops.is_op_case(text):
      cases.append(("", ptxas_ops.parse(text)))
      continue
    if text.split(",")[0].isdigit():
      cases.append(("", parse_shape(text)))
      continue
    ids = text.split(",")
    unknown = [i for i in ids if i not in bwd_variant_bench.CASES]
    if unknown:
      raise ValueError(f"cases: unknown {unknown}; accepted: {list(bwd_variant_bench.CASES)} "
                       "or a shape B,T,H,K,D,causal")
    cases.extend((i, bwd_variant_bench.CASES[i]) for i in ids)
  return cases


def describe(name: str, case: Case) -> str:
  """``B9 2x6144x16x128 kv16`` (``causal`` appended for causal cases; no id for shapes), or
  another op's case as given."""
  if isinstance(case, ptxas_ops.OpCase):
    return case.text
  text = f"{case.batch}x{case.seq}x{case.heads}x{case.head_dim} kv{case.kv_heads}"
  text = f"{name} {text}" if name else text
  return text + " causal" if case.causal else text


# --- ptxas's log and the PTX -----------------------------------------------------------------

def extract_ptx(log: str) -> str:
  """The PTX the plugin printed (``MOSAIC_GPU_DUMP_PTX``): from LLVM's header to ptxas's lines.

  Raises:
    ValueError: when the log holds no PTX.
  """
  m = re.search(r"^//\n// Generated by LLVM NVPTX Back-End.*?(?=^ptxas |\Z)", log, re.S | re.M)
  if not m:
    raise ValueError("no PTX in the log (no '// Generated by LLVM NVPTX Back-End')")
  return m.group(0)


def parse_ptxas(log: str) -> tuple[int, int, int]:
  """(registers, spill store bytes, spill load bytes) from ``ptxas -v``'s lines in `log`: ``Used
  N registers`` and the function properties' ``N bytes stack frame, N bytes spill stores, N bytes
  spill loads`` (not the warning that repeats the spills).

  Raises:
    ValueError: unless the log holds exactly one function's ``Used N registers`` and spill line.
  """
  registers = re.findall(r"^ptxas info\s*: Used (\d+) registers", log, re.M)
  spills = re.findall(
      r"^\s*\d+ bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log, re.M)
  if len(registers) != 1 or len(spills) != 1:
    raise ValueError(f"expected one function's ptxas lines, got {len(registers)} 'Used N "
                     f"registers' and {len(spills)} spill lines")
  return int(registers[0]), int(spills[0][0]), int(spills[0][1])


def parse_setmaxnreg(ptx: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
  """(increases, decreases): the PTX's ``setmaxnreg.inc`` / ``.dec`` register counts in order."""
  found = re.findall(r"\bsetmaxnreg\.(inc|dec)\.sync\.aligned\.u32\s+(\d+)", ptx)
  return (tuple(int(n) for k, n in found if k == "inc"),
          tuple(int(n) for k, n in found if k == "dec"))


def resources(log: str) -> Resources:
  """Everything the tool reports, from the plugin's output (PTX and ptxas's lines).

  Raises:
    ValueError: when the log lacks the PTX or ptxas's lines.
  """
  inc, dec = parse_setmaxnreg(extract_ptx(log))
  return Resources(*parse_ptxas(log), inc, dec)


def format_line(label: str, r: Resources) -> str:
  """``LABEL: registers 168, spill stores 0 B, spill loads 0 B, setmaxnreg 232/40``."""
  if r.setmaxnreg_inc or r.setmaxnreg_dec:
    maxnreg = "/".join(",".join(map(str, v)) or "-" for v in (r.setmaxnreg_inc, r.setmaxnreg_dec))
  else:
    maxnreg = "none"
  return (f"{label}: registers {r.registers}, spill stores {r.spill_stores} B, "
          f"spill loads {r.spill_loads} B, setmaxnreg {maxnreg}")


# --- the cache -------------------------------------------------------------------------------

def wheel_prefix(requirement: str) -> str:
  """``jax-cuda13-pjrt==0.11.2`` -> ``jax_cuda13_pjrt-0.11.2-``: how the wheel's file starts."""
  name, _, version = requirement.partition("==")
  return f"{re.sub(r'[-_.]+', '_', name).lower()}-{version}-"


def find_wheel(wheels: Path, requirement: str) -> Path | None:
  """`requirement`'s wheel in folder `wheels`, or None."""
  prefix = wheel_prefix(requirement)
  found = sorted(wheels.glob(f"{prefix}*.whl")) if wheels.is_dir() else []
  return found[0] if found else None


def index_url() -> str:
  """The package index pip downloads from (``PIP_INDEX_URL``, pip's config, or PyPI)."""
  if os.environ.get("PIP_INDEX_URL"):
    return os.environ["PIP_INDEX_URL"]
  r = subprocess.run([str(PROJECT_PYTHON), "-m", "pip", "config", "get", "global.index-url"],
                     capture_output=True, text=True, check=False)
  return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else DEFAULT_INDEX


def network_error(url: str) -> str | None:
  """Why `url` cannot be reached, or None when it can."""
  if url.startswith("file://"):
    return None if Path(url[len("file://"):]).exists() else f"{url} does not exist"
  try:
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=15):
      return None
  except Exception as e:  # pylint: disable=broad-except
    return f"{type(e).__name__}: {e}"


def missing_prerequisites(missing_wheels: Sequence[str], need_cc: bool) -> list[str]:
  """What this machine lacks to fill the cache: the project's python, ``cc`` (when the fake
  libcuda is to be built), network access (when wheels are to be fetched)."""
  problems = []
  if not PROJECT_PYTHON.exists():
    problems.append(f"the project's Python 3.12 ({PROJECT_PYTHON}; make it with "
                    "bash tools/setup.sh)")
  if need_cc and shutil.which("cc") is None:
    problems.append(f"cc, a C compiler, to build the fake libcuda.so.1 from {FAKE_LIBCUDA_SOURCE}")
  if missing_wheels and PROJECT_PYTHON.exists():
    url = index_url()
    error = network_error(url)
    if error:
      problems.append(f"network access to fetch {', '.join(missing_wheels)} ({url}: {error})")
  return problems


def _run(cmd: Sequence[str], what: str, **kwargs: Any) -> None:
  r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False, **kwargs)
  if r.returncode:
    raise SetupError(f"{what} failed (exit {r.returncode}): {' '.join(map(str, cmd))}\n"
                     f"{(r.stdout + r.stderr)[-3000:]}")


def _extract(wheel: Path, member: str, dest: Path, executable: bool = False) -> None:
  """`wheel`'s file `member` as `dest` (written once, atomically)."""
  if dest.exists():
    return
  dest.parent.mkdir(parents=True, exist_ok=True)
  tmp = dest.with_name(dest.name + ".tmp")
  with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(tmp, "wb") as out:
    shutil.copyfileobj(src, out)
  tmp.chmod(0o755 if executable else 0o644)
  os.replace(tmp, dest)


def prepare(cache: Path) -> Toolchain:
  """The toolchain in `cache`, fetching and building what is missing.

  Raises:
    SetupError: naming what this machine lacks, or the step that failed.
  """
  wheels = cache / "wheels"
  missing = [r for r in REQUIREMENTS if find_wheel(wheels, r) is None]
  fake = cache / "fakecuda" / "libcuda.so.1"
  need_cc = (not fake.exists()
             or fake.stat().st_mtime < FAKE_LIBCUDA_SOURCE.stat().st_mtime)
  problems = missing_prerequisites(missing, need_cc)
  if problems:
    raise SetupError("missing " + "; ".join(problems))
  if missing:
    wheels.mkdir(parents=True, exist_ok=True)
    print(f"ptxas_local: fetching {len(missing)} wheels into {wheels} (first use)",
          file=sys.stderr, flush=True)
    _run([PROJECT_PYTHON, "-m", "pip", "download", "--quiet", "--no-deps", "--no-cache-dir",
          "--only-binary=:all:", "--dest", wheels, *missing], "pip download")
    still = [r for r in missing if find_wheel(wheels, r) is None]
    if still:
      raise SetupError(f"pip download did not bring {still} into {wheels}")
  if need_cc:
    fake.parent.mkdir(parents=True, exist_ok=True)
    _run(["cc", "-shared", "-fPIC", "-O1", "-o", fake, FAKE_LIBCUDA_SOURCE], "cc")
  venv = cache / "venv"
  marker = venv / "ptxas_local_requirements.txt"
  wanted = "\n".join(VENV_REQUIREMENTS) + "\n"
  if not marker.exists() or marker.read_text(encoding="utf-8") != wanted:
    print(f"ptxas_local: making the jax 0.11.2 venv {venv}", file=sys.stderr, flush=True)
    shutil.rmtree(venv, ignore_errors=True)
    _run([PROJECT_PYTHON, "-m", "venv", venv], "python -m venv")
    _run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-cache-dir",
          "--no-index", "--no-deps", *(find_wheel(wheels, r) for r in VENV_REQUIREMENTS)],
         "pip install")
    marker.write_text(wanted, encoding="utf-8")
  plugin = cache / "plugin" / "xla_cuda_plugin.so"
  _extract(find_wheel(wheels, PLUGIN_REQUIREMENT), PLUGIN_MEMBER, plugin)
  cuda_root = cache / "cuda"
  _extract(find_wheel(wheels, PTXAS_REQUIREMENT), PTXAS_MEMBER, cuda_root / "bin" / "ptxas",
           executable=True)
  _extract(find_wheel(wheels, LIBDEVICE_REQUIREMENT), LIBDEVICE_MEMBER,
           cuda_root / "nvvm" / "libdevice" / "libdevice.10.bc")
  return Toolchain(venv / "bin" / "python", plugin, cuda_root, fake.parent)


# --- the two stages --------------------------------------------------------------------------

def lower(tools: Toolchain, kernel: str | None, fields: dict[str, int],
          cases: Sequence[tuple[str, Case]], work: Path) -> list[dict[str, str]]:
  """Stage 1: per case ``{"name", "geometry"}`` (its module in ``work/<i>.mlirbc``) or
  ``{"name", "error"}``.

  Raises:
    RuntimeError: when the stage fails as a whole (with its output).
  """
  items = [{"name": str(i), "out": str(work / f"{i}.mlirbc"),
            **({"op": c.text} if isinstance(c, ptxas_ops.OpCase)
               else {"case": list(dataclasses.astuple(c))})}
           for i, (_, c) in enumerate(cases)]
  request = work / "request.json"
  request.write_text(json.dumps({"kernel": kernel, "fields": fields, "cases": items}),
                     encoding="utf-8")
  env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_", "PJRTKIT_"))}
  env.update(PYTHONPATH=f"{REPO}{os.pathsep}{REPO / 'python'}", JAX_PLATFORMS="cpu",
             TF_CPP_MIN_LOG_LEVEL="3")
  r = subprocess.run([str(tools.python), "-m", "tools.kernels_gpu.ptxas_lower", str(request)],
                     cwd=REPO, env=env, capture_output=True, text=True, check=False)
  results = [json.loads(line) for line in r.stdout.splitlines() if line.startswith('{"name"')]
  if r.returncode or len(results) != len(cases):
    raise RuntimeError(f"stage 1 (lowering with jax 0.11.2) failed (exit {r.returncode}):\n"
                       f"{(r.stdout + r.stderr)[-3000:]}")
  return results


def compile_module(tools: Toolchain, module: Path, work: Path) -> str:
  """Stage 2: the plugin's output (stdout, then stderr) for `module`: PTX and ptxas's lines."""
  sdk = work / "cuda_sdk_lib"  # XLA's default CUDA data dir, relative to the working directory
  if not sdk.exists():
    sdk.symlink_to(tools.cuda_root)
  env = {"HOME": os.environ.get("HOME", "/"), "PATH": f"{tools.cuda_root / 'bin'}:/usr/bin:/bin",
         "LD_LIBRARY_PATH": str(tools.fake_libcuda_dir),
         "MOSAIC_GPU_CUDA_ROOT": str(tools.cuda_root), "MOSAIC_GPU_DUMP_PTX": "1",
         "MOSAIC_GPU_DUMP_PTXAS": "1", "TF_CPP_MIN_LOG_LEVEL": "1"}
  script = Path(__file__).resolve().parent / "ptxas_compile.py"
  r = subprocess.run([str(tools.python), str(script), str(tools.plugin), str(module)], cwd=work,
                     env=env, capture_output=True, text=True, check=False)
  return f"{r.stdout}\n--- stderr (exit {r.returncode}) ---\n{r.stderr}"


def measure(tools: Toolchain, kernel: str | None, fields: dict[str, int],
            cases: Sequence[tuple[str, Case]], keep: Path | None) -> int:
  """Prints one line per case; returns how many cases were not measured."""
  failed = 0
  with tempfile.TemporaryDirectory(prefix="ptxas_local_") as tmp:
    work = Path(tmp)
    for i, ((name, case), lowered) in enumerate(zip(cases, lower(tools, kernel, fields, cases,
                                                                   work))):
      label = describe(name, case)
      if "error" in lowered:
        print(f"{label}: left out ({lowered['error'][:300]})", flush=True)
        failed += 1
        continue
      log = compile_module(tools, work / f"{i}.mlirbc", work)
      if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        slug = label.replace(" ", "_").replace(":", "_").replace(",", "_").replace("=", "")
        shutil.copyfile(work / f"{i}.mlirbc", keep / f"{slug}.mlirbc")
        (keep / f"{slug}.log").write_text(f"geometry: {lowered['geometry']}\n{log}",
                                          encoding="utf-8")
        try:
          (keep / f"{slug}.ptx").write_text(extract_ptx(log), encoding="utf-8")
        except ValueError:
          pass
      try:
        print(format_line(label, resources(log)), flush=True)
      except ValueError as e:
        print(f"{label}: not measured ({e}); the plugin's output ends:\n{log[-2000:]}",
              flush=True)
        failed += 1
  return failed


def main(argv: Sequence[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("cases", nargs="+",
                      help=f"comma-separated ids of {list(bwd_variant_bench.CASES)}, a shape "
                      "B,T,H,K,D,causal, or ragged_dot:M,K,N,GROUPS,CONTRACT[:FIELD=INT,...] / "
                      "gated_linear_unit:M,K,N,FUSED[:FIELD=INT,...]")
  parser.add_argument("--kernel", help="a copy of kernels/dot_product_attention/mosaic/bwd.py "
                      "(default: that file)")
  parser.add_argument("--set", action="append", default=[], metavar="FIELD=INT[,FIELD=INT]",
                      help="BwdGeometry fields replaced after choose (repeatable)")
  parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                      help=f"wheels, venv and tools (default {DEFAULT_CACHE})")
  parser.add_argument("--keep", type=Path,
                      help="keep each case's .ptx, full log and module (.mlirbc) here")
  args = parser.parse_args(argv)
  try:
    cases = parse_cases(args.cases)
  except ValueError as e:
    parser.error(str(e))
  fields: dict[str, int] = {}
  for text in args.set:
    try:
      fields.update(variant_cli.parse_fields(text))
    except ValueError as e:
      parser.error(str(e))
  kernel = None
  module: Any = mosaic_bwd
  if args.kernel is not None:
    if not (args.kernel.endswith(".py") and os.path.isfile(args.kernel)):
      parser.error(f"--kernel: no .py file {args.kernel!r} (a copy of mosaic_bwd.py)")
    kernel = os.path.abspath(args.kernel)
    module = variant_cli.load_copy(kernel, "ptxas_local_copy")
  name = os.path.basename(kernel) if kernel else "mosaic_bwd.py"
  variant_cli.check_fields(parser, {name: module}, fields, "BwdGeometry")
  try:
    tools = prepare(args.cache.resolve())
  except SetupError as e:
    print(f"ptxas_local: {e}", file=sys.stderr)
    return 2
  try:
    failed = measure(tools, kernel, fields, cases, args.keep)
  except RuntimeError as e:
    print(f"ptxas_local: {e}", file=sys.stderr)
    return 1
  return 1 if failed else 0


if __name__ == "__main__":
  raise SystemExit(main(sys.argv[1:]))
