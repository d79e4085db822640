#!/usr/bin/env bash
# Nsight Compute profiles of pjrtkit.kernels on the H200 machine (issue 13: what limits each
# kernel), from a kit made by tools/gpu/make_kit.sh:
#   OUT=... bash KIT/tools/kernels_gpu/profile.sh [CASE:IMPLEMENTATION:PHASE ...]
# Runs tools/kernels_gpu/profile_cases.py under ncu on JAX's CUDA backend (IMPLEMENTATION cudnn:
# cuDNN's attention through jax.nn, with KERNEL_REGEX=sdpa) and profiles every
# kernel of ours (names with pjrtkit or mosaic in them; KERNEL_REGEX=... picks others, e.g. XLA's
# fusions for an `xla` target), with the sections that say what bounds a kernel:
# speed of light (compute and memory throughput), compute workload (pipe utilisation), memory
# workload, occupancy, launch statistics (registers, shared memory), warp state (stall reasons),
# and any ncu section names in EXTRA_SECTIONS (e.g. "InstructionStats SchedulerStats").
# Clocks are left as the GPU runs them (--clock-control none). Writes $OUT/ncu_details.csv
# (ncu --csv --page details) and $OUT/ncu_summary.txt (key metrics and ncu's rule verdicts per
# kernel: highest-utilised pipe, the top stall, occupancy limiters). Kernels appear in launch
# order, each target's twice; a bwd target's forward kernels too (its residuals are made first).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/kernels_profile_out}; mkdir -p "$OUT"
PY=${PYTHON:-python3}
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(A1:mosaic:fwd A3:mosaic:fwd A4:mosaic:bwd A4:triton:bwd
                                     A3:triton:fwd L2:triton:fwd L4:triton:bwd)
export PYTHONPATH="$PWD:$PWD/python${PYTHONPATH:+:$PYTHONPATH}" TF_CPP_MIN_LOG_LEVEL=3
export XLA_PYTHON_CLIENT_PREALLOCATE=false JAX_PLATFORMS=${JAX_PLATFORMS:-cuda}
SECTIONS=(SpeedOfLight ComputeWorkloadAnalysis MemoryWorkloadAnalysis Occupancy LaunchStats
          WarpStateStats ${EXTRA_SECTIONS:-})
args=()
for s in "${SECTIONS[@]}"; do args+=(--section "$s"); done
# Each target runs twice (warm-up, then the run to read): both are profiled, the second is later.
timeout "${PROFILE_TIMEOUT:-300}" "$NCU" --target-processes all --clock-control none \
  --kernel-name regex:"${KERNEL_REGEX:-pjrtkit|mosaic}" "${args[@]}" --csv --page details \
  "$PY" -m tools.kernels_gpu.profile_cases "${TARGETS[@]}" \
  > "$OUT/ncu_raw.txt" 2> "$OUT/ncu_stderr.txt"
echo "ncu rc=$?" | tee "$OUT/ncu_summary.txt"
grep -a '^"' "$OUT/ncu_raw.txt" > "$OUT/ncu_details.csv"
grep -av '^"' "$OUT/ncu_raw.txt" | tail -20 >> "$OUT/ncu_summary.txt"
$PY - "$OUT/ncu_details.csv" >> "$OUT/ncu_summary.txt" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
SOL, CW = "GPU Speed Of Light Throughput", "Compute Workload Analysis"
MW = "Memory Workload Analysis"
OCC, LS, WS = "Occupancy", "Launch Statistics", "Warp State Statistics"
want = [(SOL, "Duration"), (SOL, "Compute (SM) Throughput"), (SOL, "Memory Throughput"),
        (SOL, "DRAM Throughput"), (OCC, "Achieved Occupancy"), (OCC, "Theoretical Occupancy"),
        (LS, "Registers Per Thread"), (LS, "Dynamic Shared Memory Per Block"), (LS, "Block Size"),
        (LS, "Grid Size"), (CW, "Executed Ipc Active"), (CW, "Issue Slots Busy"),
        (WS, "Warp Cycles Per Issued Instruction"), (MW, "L1/TEX Hit Rate"), (MW, "L2 Hit Rate")]
kernels = collections.OrderedDict()
for r in rows:
  k = kernels.setdefault((r.get("ID"), r.get("Kernel Name", "")[:60]), {"metrics": {}, "rules": []})
  key = (r.get("Section Name"), r.get("Metric Name"))
  if key in want:
    k["metrics"][key] = f'{r.get("Metric Value")} {r.get("Metric Unit", "")}'.strip()
  rule = (r.get("Rule Name") or "").strip()
  if rule in ("HighPipeUtilization", "CPIStall", "TheoreticalOccupancy", "SOLBottleneck"):
    text = (r.get("Rule Description") or "").split(". ")[0]
    if text and not text.startswith(("The optional metric", "Check the Warp Stall")):
      speedup = r.get("Estimated Speedup") or ""
      gain = f" (estimated speedup {speedup} %)" if speedup else ""
      k["rules"].append(f"{rule}: {text}{gain}")
for (i, name), k in kernels.items():
  print(f"[{i}] {name}")
  for section, metric in want:
    if (section, metric) in k["metrics"]:
      print(f"    {metric}: {k['metrics'][(section, metric)]}")
  for rule in dict.fromkeys(k["rules"]):
    print(f"    rule {rule}")
PY
cat "$OUT/ncu_summary.txt" | head -150
