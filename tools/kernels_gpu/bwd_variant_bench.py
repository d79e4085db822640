"""Copies of the fused Mosaic attention backward (``mosaic_bwd.py`` files) against the shipped one
on a GPU: alternating rounds in one process, CUPTI medians of the backward alone, and the
largest relative differences of each copy's dQ, dK and dV from the shipped kernel's.

  cp kernels/dot_product_attention/mosaic/bwd.py /tmp/regs.py   # then edit the copy
  PYTHONPATH=KIT:KIT/python python -m tools.kernels_gpu.bwd_variant_bench /tmp/regs.py B1,B3 \\
      [--rounds 5] [--set stages=3] [--cudnn] [--fwd-bwd] [--parts]

What is timed per contender is what ``mosaic/attention.py`` runs for the gradient: the backward kernel on
inputs padded to its geometry plus dQ's cast to the input dtype (the log-sum-exp and delta =
rowsum(dO * O) are made once, outside the timing). The geometry is ``choose``'s, called as
``mosaic/attention.py`` calls it (up to 4 query steps in flight; causal calls try 128-row steps first);
``--set FIELD=INT`` replaces BwdGeometry fields after it (a copy whose geometry refuses them at a
case is reported and left out there; where ``choose`` takes ``lag_dq``, ``persistent_programs``
and ``ds_slots=1`` need ``lag_dq=0`` with them). ``--cudnn`` adds cuDNN's backward (``jax.nn`` with
implementation="cudnn": the pullback alone, its residuals made once). ``--fwd-bwd`` also times
forward+backward through ``pk.dot_product_attention(implementation="mosaic")`` with each copy's
backward, and cuDNN's, as the comparison counts them (TFLOP/s there: 3.5x the forward's FLOPs;
here the backward alone is counted as 2.5x). ``--parts`` adds what a forward+backward runs
besides the kernel: ``forward`` (the Mosaic forward with its log-sum-exp, its default config;
TFLOP/s of the forward's FLOPs) and ``delta`` (rowsum(dO * O) as mosaic/attention.py makes it; GB/s of
the dO and O it reads), so forward + delta + the backward alone accounts for a forward+backward.
``--kernels`` then lists every contender's kernels in launch order with their CUPTI medians
(`BenchmarkRunner.kernel_breakdown`), cuDNN's too: where each one's time goes.

Several copies go comma-separated and are named by their file stems. Cases are the comparison's
gradient rows at head_dim 128 (B1-B5, B9, B10) and 64 (B6-B8), and C16-C256: non-causal
head_dim-128 shapes of equal work and equal wave tail whose programs walk 16 to 256 query steps.
``--fit`` (with ``--kernels``, over non-causal cases) then fits each contender's longest kernel
(the backward's) to ``rounds x (per program + steps x per step)``, rounds being our launch's
programs per SM, and prints the two costs: how much of a backward is its step loop and how much
each program's start and end (for cuDNN, in our kernel's programs and steps).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import math
import statistics
import sys
from typing import Any, Callable, Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from pjrtkit import kernels as pk
from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.dot_product_attention import base
from pjrtkit.kernels.dot_product_attention.mosaic import attention as mosaic_attention
from pjrtkit.kernels.dot_product_attention.mosaic import bwd as mosaic_bwd
from tools.kernels_gpu import variant_cli


@dataclasses.dataclass(frozen=True)
class BwdCase:
  """``[batch, seq, heads, head_dim]`` queries, ``kv_heads`` key/value heads, bfloat16."""

  batch: int
  seq: int
  heads: int
  kv_heads: int
  head_dim: int
  causal: bool

  @property
  def fwd_flops(self) -> float:
    """4 * b * h * t * s * d (query heads), halved for causal."""
    f = 4.0 * self.batch * self.heads * self.seq * self.seq * self.head_dim
    return f / 2 if self.causal else f


CASES = {"B1": BwdCase(1, 16384, 16, 16, 128, False),
         "B2": BwdCase(16, 1024, 32, 32, 128, False),
         "B3": BwdCase(4, 4096, 32, 8, 128, False),
         "B4": BwdCase(1, 16384, 16, 16, 128, True),
         "B5": BwdCase(4, 4096, 32, 8, 128, True),
         "B6": BwdCase(32, 2048, 16, 16, 64, False),
         "B7": BwdCase(32, 2048, 16, 16, 64, True),
         "B8": BwdCase(2, 3072, 16, 4, 64, True),
         "B9": BwdCase(2, 6144, 16, 16, 128, False),
         "B10": BwdCase(3, 2560, 12, 12, 128, False)}
"""B1 = the comparison's A6, B2 = A7, B3 = A8, B4 = A9, B5 = A10, B6 = A4, B7 = A5, B8 = H3,
B9 = H2, B10 = H4."""
SCALING_CASES = {"C16": BwdCase(16, 1024, 32, 32, 128, False),
                 "C32": BwdCase(4, 2048, 32, 32, 128, False),
                 "C64": BwdCase(1, 4096, 32, 32, 128, False),
                 "C128": BwdCase(1, 8192, 8, 8, 128, False),
                 "C256": BwdCase(1, 16384, 2, 2, 128, False)}
"""Equal FLOPs; 4096 to 256 programs of 16 to 256 query steps (31.03 to 1.94 waves on 132 SMs,
the same 3 % tail); C16 is B2."""
CASES.update(SCALING_CASES)

BWD_FLOP_FACTOR = 2.5
"""Backward FLOPs / forward FLOPs (five matrix products against two)."""
FWD_BWD_FLOP_FACTOR = 3.5
_MAX_STAGES = 4
"""The gradient's phase config (`MosaicAttention.phase_config`): up to 4 query steps."""
PARTS = ("forward", "delta")
"""``--parts``' contenders: a forward+backward's work besides the backward kernel."""
_RESERVED = frozenset({"shipped", "cudnn", *PARTS})


def geometry(module: Any, case: BwdCase, fields: dict[str, int] | None = None) -> Any:
  """`module.choose`'s geometry for `case`, as mosaic/attention.py asks for it, with `fields` replaced.

  Raises:
    ValueError: when nothing fits, or the geometry refuses `fields`.
  """
  g = module.choose(batch=case.batch, q_len=case.seq, heads=case.heads, kv_heads=case.kv_heads,
                    kv_len=case.seq, head_dim=case.head_dim, scale=1 / math.sqrt(case.head_dim),
                    causal=case.causal, itemsize=2, max_stages=_MAX_STAGES,
                    block_qs=(128, 64) if case.causal else (64,))
  if g is None:
    raise ValueError("no geometry fits in shared memory")
  return dataclasses.replace(g, **fields) if fields else g


def inputs(case: BwdCase) -> dict[str, Any]:
  """q, k, v, dO (bfloat16, fixed seed) and the Mosaic forward's out and lse."""
  keys = jax.random.split(jax.random.key(7), 4)
  b, t, h, kh, d = case.batch, case.seq, case.heads, case.kv_heads, case.head_dim
  q = jax.random.normal(keys[0], (b, t, h, d), jnp.bfloat16)
  k, v = (jax.random.normal(x, (b, t, kh, d), jnp.bfloat16) for x in keys[1:3])
  do = jax.random.normal(keys[3], (b, t, h, d), jnp.bfloat16)
  out, lse = jax.jit(lambda q, k, v: forward_residuals(case, q, k, v))(q, k, v)
  return dict(q=q, k=k, v=v, do=do, out=out, lse=lse)


def forward_residuals(case: BwdCase, q: Any, k: Any, v: Any) -> tuple[Any, Any]:
  """The Mosaic forward's output and log-sum-exp ``[B, H, T]`` (what the gradient reads)."""
  op = mosaic_attention.MosaicAttention()
  spec = base.make_spec(q, k, v, None, None, case.causal, None)
  out, residuals = op.forward((q, k, v, None, None), spec, op.default_config(spec))
  return out, residuals[-1]


def lse_input(module: Any) -> Callable[[Any, Any], Any]:
  """`module.lse_input`, or for a copy older than it the log-sum-exp in base 2 it took (a copy
  from before `BwdGeometry.biased_accumulators` that imports ``LAG_DQ_MAX_STEPS`` from the
  geometry module needs that name removed from its import first)."""
  return getattr(module, "lse_input", lambda lse, g: lse * module.LOG2E)


def kernel_backward(module: Any, g: Any) -> Callable[..., Any]:
  """f(q, k, v, do, lse, delta) -> (dq in the input dtype, dk, dv): `module`'s kernel on
  inputs padded to `g` (`lse` the forward's, as `lse_input` passes it), dQ cast and sliced as
  mosaic/attention.py does."""
  def f(q: Any, k: Any, v: Any, do: Any, lse: Any, delta: Any) -> Any:
    t, s = q.shape[1], k.shape[1]
    tp, sp = g.q_len_padded, g.kv_len_padded
    dq, dk, dv = module.backward(
        pallas_lib.pad_axis(q, 1, tp), pallas_lib.pad_axis(k, 1, sp),
        pallas_lib.pad_axis(v, 1, sp), pallas_lib.pad_axis(do, 1, tp),
        pallas_lib.pad_axis(lse_input(module)(lse, g), 2, tp),
        pallas_lib.pad_axis(delta, 2, tp), g)
    return dq[:, :t].astype(q.dtype), dk[:, :s], dv[:, :s]
  return f


@contextlib.contextmanager
def backward_module(module: Any, fields: dict[str, int] | None) -> Iterator[None]:
  """mosaic/attention.py's fused backward taken from `module` (geometry `fields` replaced) while tracing."""
  saved = mosaic_attention.mosaic_bwd

  class _Patched:
    LOG2E = module.LOG2E
    backward = staticmethod(module.backward)
    lse_input = staticmethod(lse_input(module))

    @staticmethod
    def choose(**kwargs: Any) -> Any:
      g = module.choose(**kwargs)
      return dataclasses.replace(g, **fields) if (g is not None and fields) else g

  mosaic_attention.mosaic_bwd = _Patched
  try:
    yield
  finally:
    mosaic_attention.mosaic_bwd = saved


def _rel_diff(got: Any, want: Any) -> float:
  got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
  return float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))


def _cudnn_pullback(case: BwdCase, x: dict[str, Any]) -> tuple[Callable[..., Any], list[Any]]:
  def fwd(q: Any, k: Any, v: Any) -> Any:
    return jax.nn.dot_product_attention(q, k, v, is_causal=case.causal, implementation="cudnn")

  _, pullback = jax.vjp(fwd, x["q"], x["k"], x["v"])
  return (lambda pb, do: pb(do)), [pullback, x["do"]]


def _fwd_bwd(forward: Callable[..., Any]) -> Callable[..., Any]:
  def f(q: Any, k: Any, v: Any, do: Any) -> Any:
    out, pullback = jax.vjp(forward, q, k, v)
    return out, pullback(do)
  return f


def contenders(variants: dict[str, Any], case_id: str, fields: dict[str, int] | None,
               cudnn: bool, fwd_bwd: bool, x: dict[str, Any], parts: bool = False
               ) -> dict[str, tuple[Callable[..., Any], list[Any], float, Any]]:
  """name -> (function, its arguments, FLOPs counted (bytes for ``delta``), the module whose
  backward it runs, or None). Backward-alone rows first (``shipped``, the copies, ``cudnn``),
  then with `fwd_bwd` the same names with `` fwd+bwd``, then with `parts` ``forward`` and
  ``delta``."""
  case = CASES[case_id]
  delta = base.delta(x["out"], x["do"])
  args = [x["q"], x["k"], x["v"], x["do"], x["lse"], delta]
  modules = {"shipped": (mosaic_bwd, None), **{n: (m, fields) for n, m in variants.items()}}
  out: dict[str, tuple[Callable[..., Any], list[Any], float, Any]] = {}
  for name, (module, extra) in modules.items():
    try:
      g = geometry(module, case, extra)
    except (ValueError, TypeError) as e:
      print(f"{case_id} {name}: left out ({e})", flush=True)
      continue
    print(f"{case_id} {name}: geometry block_q={g.block_q} stages={g.stages} "
          f"ds_slots={g.ds_slots} programs={g.programs} "
          f"longest_first={getattr(g, 'longest_first', False)} "
          f"persistent_programs={getattr(g, 'persistent_programs', 0)} "
          f"lag_dq={getattr(g, 'lag_dq', False)} "
          f"loop_descriptors={getattr(g, 'loop_descriptors', False)} "
          f"biased_accumulators={getattr(g, 'biased_accumulators', False)}", flush=True)
    out[name] = (kernel_backward(module, g), args, BWD_FLOP_FACTOR * case.fwd_flops, module)
  if cudnn:
    f, a = _cudnn_pullback(case, x)
    out["cudnn"] = (f, a, BWD_FLOP_FACTOR * case.fwd_flops, None)
  if fwd_bwd:
    ours = lambda q, k, v: pk.dot_product_attention(q, k, v, is_causal=case.causal,  # noqa: E731
                                                    implementation="mosaic")
    for name, (_, _, _, module) in list(out.items()):
      if name == "cudnn":
        forward = lambda q, k, v: jax.nn.dot_product_attention(  # noqa: E731
            q, k, v, is_causal=case.causal, implementation="cudnn")
        out["cudnn fwd+bwd"] = (_fwd_bwd(forward), [x["q"], x["k"], x["v"], x["do"]],
                                FWD_BWD_FLOP_FACTOR * case.fwd_flops, None)
      else:
        out[f"{name} fwd+bwd"] = (_fwd_bwd(ours), [x["q"], x["k"], x["v"], x["do"]],
                                  FWD_BWD_FLOP_FACTOR * case.fwd_flops,
                                  (module, None if name == "shipped" else fields))
  if parts:
    out["forward"] = (functools.partial(forward_residuals, case), [x["q"], x["k"], x["v"]],
                      case.fwd_flops, None)
    out["delta"] = (base.delta, [x["out"], x["do"]], float(x["out"].nbytes + x["do"].nbytes),
                    None)
  return out


def run_case(variants: dict[str, Any], case_id: str, rounds: int, fields: dict[str, int] | None,
             cudnn: bool, fwd_bwd: bool, parts: bool = False, kernels: bool = False
             ) -> dict[str, float]:
  """Prints each contender's median (ms, TFLOP/s; GB/s for ``delta``), its rounds, and the
  copies' differences; with `kernels`, then each contender's kernels in launch order with their
  medians (`BenchmarkRunner.kernel_breakdown`), and returns each contender's longest kernel's
  median (ms)."""
  longest: dict[str, float] = {}
  x = inputs(CASES[case_id])
  runs, grads = {}, {}
  for name, (f, args, flops, module) in contenders(variants, case_id, fields, cudnn, fwd_bwd,
                                                   x, parts).items():
    print(f"compiling {case_id} {name}", flush=True)
    scope = (backward_module(*module) if isinstance(module, tuple)
             else contextlib.nullcontext())
    try:
      with scope:
        result = jax.jit(f)(*args)
        f_std, a = pk.benchmarking.standardize_function(f, *args)
        runs[name] = (pk.benchmarking.compile_benchmark(f_std, a), a, flops, [])
    except Exception as e:  # pylint: disable=broad-except
      print(f"{case_id} {name}: failed ({type(e).__name__}: {str(e)[:300]})", flush=True)
      continue
    if name not in PARTS:
      grads[name] = result[-3:] if not name.endswith("fwd+bwd") else result[1]
  for _ in range(rounds):
    for run, a, _, times in runs.values():
      times.append(run(a, iterations=10).median_evaluation_time_ms)
  ref = grads.get("shipped")
  for name, (_, _, flops, times) in runs.items():
    ms = statistics.median(times)
    diff = ""
    if ref is not None and name in grads and name != "shipped":
      diff = "; max rel diff dq/dk/dv " + " ".join(
          f"{_rel_diff(g, r):.2g}" for g, r in zip(grads[name], ref))
    unit = "GB/s" if name == "delta" else "TFLOP/s"
    scale = 1e6 if name == "delta" else 1e9
    print(f"{case_id} {name}: {ms:.4f} ms {flops / ms / scale:.1f} {unit} rounds "
          f"{' '.join(f'{flops / t / scale:.1f}' for t in times)}{diff}", flush=True)
  if kernels:
    for name, (run, a, _, _) in runs.items():
      try:
        breakdown = run.kernel_breakdown(a, iterations=10)
      except Exception as e:  # pylint: disable=broad-except
        print(f"{case_id} {name}: no breakdown ({type(e).__name__}: {str(e)[:300]})", flush=True)
        continue
      print_breakdown(f"{case_id} {name}", breakdown)
      if breakdown:
        longest[name] = max(ms for _, ms in breakdown)
  return longest


def fit_costs(points: Sequence[tuple[int, int, float]]) -> tuple[float, float]:
  """Least-squares ``(per program, per step)`` of ``ms = rounds * (per program + steps * per
  step)`` over ``(rounds, steps per program, ms)`` points: `rounds` programs per SM one after
  another, each a fixed cost plus its steps'.

  Raises:
    ValueError: with fewer than two distinct steps per program.
  """
  if len({steps for _, steps, _ in points}) < 2:
    raise ValueError(f"a fit needs cases of at least two step counts per program, got "
                     f"{sorted({steps for _, steps, _ in points})}")
  design = np.array([[rounds, rounds * steps] for rounds, steps, _ in points], np.float64)
  (program, step), *_ = np.linalg.lstsq(design, np.array([ms for *_, ms in points]), rcond=None)
  return float(program), float(step)


def fit_point(case_id: str, sms: int) -> tuple[int, int]:
  """(rounds, query steps per program) of the shipped kernel's launch at non-causal `case_id`
  (the copies' fits use it too: a copy or ``--set`` that changes the programs or their steps,
  `block_q` say, is fitted in the shipped kernel's units)."""
  case = CASES[case_id]
  if case.causal:
    raise ValueError(f"--fit takes non-causal cases (programs of equal steps), got {case_id}")
  g = geometry(mosaic_bwd, case)
  return math.ceil(g.programs / sms), g.item_steps(0)


def print_breakdown(label: str, kernels: Sequence[tuple[str, float]]) -> None:
  """One line per kernel (``label kernel i/n: ms name``), then their sum."""
  for i, (kernel, ms) in enumerate(kernels):
    print(f"{label} kernel {i + 1}/{len(kernels)}: {ms:.4f} ms {kernel[:120]}", flush=True)
  print(f"{label} kernels: {sum(ms for _, ms in kernels):.4f} ms in {len(kernels)}", flush=True)


parse_fields = variant_cli.parse_fields


def main(argv: Sequence[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("paths", help="the copies' mosaic_bwd.py files, comma-separated, or "
                      "'-' for none (shipped and --cudnn only)")
  parser.add_argument("cases", help=f"comma-separated, of {sorted(CASES)}")
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--set", default="", help="FIELD=INT[,FIELD=INT]: the copies' BwdGeometry")
  parser.add_argument("--cudnn", action="store_true")
  parser.add_argument("--fwd-bwd", action="store_true")
  parser.add_argument("--parts", action="store_true",
                      help="also time the forward (with log-sum-exp) and delta apart")
  parser.add_argument("--kernels", action="store_true",
                      help="also print every contender's kernels with their median times")
  parser.add_argument("--fit", action="store_true",
                      help="with --kernels: per-program and per-step costs of each contender's "
                      "longest kernel over the (non-causal) cases")
  args = parser.parse_args(argv)
  cases = variant_cli.check_cases(parser, args.cases, CASES, args.rounds)
  if args.fit:
    if not args.kernels:
      parser.error("--fit needs --kernels (it fits the kernels' medians)")
    try:
      sms = pallas_lib.gpu_sm_count()
      points = {case: fit_point(case, sms) for case in cases}
      fit_costs([(*points[case], 1.0) for case in cases])
    except ValueError as e:
      parser.error(f"--fit: {e}")
  paths = [] if args.paths == "-" else args.paths.split(",")
  names = variant_cli.copy_names(parser, paths, args.paths, _RESERVED)
  try:
    fields = parse_fields(args.set)
  except ValueError as e:
    parser.error(str(e))
  variants = {n: variant_cli.load_copy(p, f"bwd_variant_{i}")
              for i, (n, p) in enumerate(zip(names, paths))}
  variant_cli.check_fields(parser, variants, fields, "BwdGeometry")
  fitted: dict[str, list[tuple[int, int, float]]] = {}
  for case in cases:
    longest = run_case(variants, case, args.rounds, fields or None, args.cudnn, args.fwd_bwd,
                       args.parts, args.kernels)
    if args.fit:
      for name, ms in longest.items():
        if name not in PARTS:  # the forward and delta are not the backward's programs
          fitted.setdefault(name, []).append((*points[case], ms))
  for name, measured in fitted.items():
    try:
      program, step = fit_costs(measured)
    except ValueError as e:
      print(f"fit {name}: none ({e})", flush=True)
      continue
    print(f"fit {name}: {program * 1000:.2f} us per program, {step * 1000:.3f} us per query step "
          f"({len(measured)} cases, rounds x (program + steps x step))", flush=True)
  return 0


if __name__ == "__main__":
  raise SystemExit(main(sys.argv[1:]))
