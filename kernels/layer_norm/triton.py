"""layer_norm "triton": Pallas ``pallas_call`` kernels lowered through Triton, one tile of
`block_rows` rows (channels padded to a power of two) per program; forward and backward."""

from __future__ import annotations

from typing import Any, Sequence

from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plt

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.interpret import interpret_enabled
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base, pallas_common
from pjrtkit.kernels.layer_norm.pallas_common import PallasLayerNormConfig

_MAX_CHANNELS = 1 << 16


def _params(config: PallasLayerNormConfig) -> dict[str, Any]:
  del config
  if interpret_enabled():
    return {"interpret": True}
  return {"compiler_params": plt.CompilerParams(num_warps=4, num_stages=1)}


class TritonLayerNorm(Op[PallasLayerNormConfig]):
  """Layer norm as Pallas Triton kernels."""

  op_name = base.OP_NAME
  implementation = "triton"
  config_cls = PallasLayerNormConfig

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.gpu_unsupported_reason(device, "Triton", (8, 0))
    if reason:
      return reason
    if spec.arg("x").dtype not in base.FLOAT_DTYPES:
      return f"dtype {spec.arg('x').dtype} is not supported ({', '.join(base.FLOAT_DTYPES)})"
    if spec.arg("x").shape[spec.param("axis")] > _MAX_CHANNELS:
      return f"more than {_MAX_CHANNELS} channels are not supported"
    return None

  def default_config(self, spec: Spec) -> PallasLayerNormConfig:
    c = pallas_lib.next_pow2(spec.arg("x").shape[spec.param("axis")])
    return PallasLayerNormConfig(max(1, min(16, 8192 // c)))

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[PallasLayerNormConfig]:
    c = pallas_lib.next_pow2(spec.arg("x").shape[spec.param("axis")])
    return tuple(PallasLayerNormConfig(r) for r in (1, 4, 16, 64) if r * c <= 1 << 16)

  def forward(self, args: tuple[Any, ...], spec: Spec, config: PallasLayerNormConfig
              ) -> tuple[Any, Any]:
    return pallas_common.forward(args, spec, config.block_rows, _params(config),
                                 pallas_lib.next_pow2, pl.BlockSpec)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: PallasLayerNormConfig
               ) -> tuple[Any, ...]:
    return pallas_common.backward(residuals, dout, spec, config.block_rows, _params(config),
                                  pallas_lib.next_pow2, pl.BlockSpec)
