"""Stage 1 of ``ptxas_local``: lowers the fused Mosaic attention backward for platform "cuda" and
writes each case's Mosaic GPU module exactly as the ``mosaic_gpu`` custom call receives it.

Runs in ``ptxas_local``'s cache venv (jax/jaxlib 0.11.2, the H200's), with the repository root and
``python/`` on ``PYTHONPATH``:

  python -m tools.kernels_gpu.ptxas_lower REQUEST.json

REQUEST.json: ``{"kernel": PATH or null, "fields": {FIELD: INT}, "cases": [{"name": ..., "case":
[batch, seq, heads, kv_heads, head_dim, causal] or "op": TEXT (`ptxas_ops`), "out": FILE}]}``.
Per attention case it builds what
``bwd_variant_bench`` times (``geometry`` with the fields replaced, ``kernel_backward`` on the
unpadded bfloat16 inputs), lowers it, and writes the module's bytes to ``out``: the serialized
bytecode (``mosaic_gpu-serde``, bytecode version 0) that jax puts in the custom call's backend
config, taken from ``KNOWN_KERNELS``, where jax keeps it. Prints one JSON line per case:
``{"name", "geometry"}`` or ``{"name", "error"}``.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Sequence

import jax
import jax.numpy as jnp

from pjrtkit.kernels.dot_product_attention.mosaic import bwd as mosaic_bwd
from tools.kernels_gpu import bwd_variant_bench, ptxas_ops, variant_cli


def serialized_module(module: Any, case: bwd_variant_bench.BwdCase, g: Any) -> bytes:
  """The Mosaic GPU module of `module`'s backward at `case` with geometry `g`, as the custom call
  gets it.

  Raises:
    RuntimeError: when the lowering holds other than one Mosaic GPU kernel.
  """
  b, t, h, kh, d = case.batch, case.seq, case.heads, case.kv_heads, case.head_dim
  q = jax.ShapeDtypeStruct((b, t, h, d), jnp.bfloat16)
  kv = jax.ShapeDtypeStruct((b, t, kh, d), jnp.bfloat16)
  rows = jax.ShapeDtypeStruct((b, h, t), jnp.float32)
  return ptxas_ops.mosaic_module(bwd_variant_bench.kernel_backward(module, g),
                                 (q, kv, kv, q, rows, rows))


def main(argv: Sequence[str]) -> int:
  with open(argv[0], encoding="utf-8") as f:
    request = json.load(f)
  module = (variant_cli.load_copy(request["kernel"], "ptxas_local_copy") if request["kernel"]
            else mosaic_bwd)
  fields = request["fields"] or None
  for item in request["cases"]:
    try:
      if "op" in item:  # another op's Mosaic kernel (`ptxas_ops`)
        data, geometry = ptxas_ops.lower(ptxas_ops.parse(item["op"]))
      else:
        case = bwd_variant_bench.BwdCase(*item["case"])
        g = bwd_variant_bench.geometry(module, case, fields)
        data, geometry = serialized_module(module, case, g), repr(g)
    except Exception as e:  # pylint: disable=broad-except
      print(json.dumps({"name": item["name"], "error": f"{type(e).__name__}: {e}"}), flush=True)
      continue
    with open(item["out"], "wb") as f:
      f.write(data)
    print(json.dumps({"name": item["name"], "geometry": geometry}), flush=True)
  return 0


if __name__ == "__main__":
  raise SystemExit(main(sys.argv[1:]))
