"""layer_norm "mosaic": Pallas kernels lowered through Mosaic GPU (``plgpu.CompilerParams``),
one SMEM tile of `block_rows` rows per program, pipelined over the grid by Pallas; channels padded
to a multiple of 128. Hopper (sm_90) and newer."""

from __future__ import annotations

from typing import Any, Sequence

import jax.experimental.pallas.mosaic_gpu as plgpu

from pjrtkit.kernels.core import pallas as pallas_lib
from pjrtkit.kernels.core.device import DeviceInfo
from pjrtkit.kernels.core.interpret import interpret_enabled
from pjrtkit.kernels.core.op import Op
from pjrtkit.kernels.core.spec import Spec
from pjrtkit.kernels.layer_norm import base, pallas_common
from pjrtkit.kernels.layer_norm.pallas_common import PallasLayerNormConfig

_MAX_CHANNELS = 8192


def _params(config: PallasLayerNormConfig) -> dict[str, Any]:
  del config
  if interpret_enabled():
    return {"interpret": plgpu.InterpretGPUParams(),
            "compiler_params": plgpu.CompilerParams()}
  return {"compiler_params": plgpu.CompilerParams()}


def _channels(c: int) -> int:
  return pallas_lib.round_up(c, 128)


class MosaicLayerNorm(Op[PallasLayerNormConfig]):
  """Layer norm as Pallas Mosaic GPU kernels."""

  op_name = base.OP_NAME
  implementation = "mosaic"
  config_cls = PallasLayerNormConfig

  def unsupported_reason(self, spec: Spec, device: DeviceInfo) -> str | None:
    reason = pallas_lib.gpu_unsupported_reason(device, "Mosaic GPU", (9, 0))
    if reason:
      return reason
    if spec.arg("x").dtype not in base.FLOAT_DTYPES:
      return f"dtype {spec.arg('x').dtype} is not supported ({', '.join(base.FLOAT_DTYPES)})"
    if spec.arg("x").shape[spec.param("axis")] > _MAX_CHANNELS:
      return f"more than {_MAX_CHANNELS} channels do not fit one SMEM tile"
    return None

  def default_config(self, spec: Spec) -> PallasLayerNormConfig:
    return PallasLayerNormConfig(64 if _channels(spec.arg("x").shape[spec.param("axis")]) <= 512
                                 else 16)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[PallasLayerNormConfig]:
    return (PallasLayerNormConfig(16), PallasLayerNormConfig(64), PallasLayerNormConfig(128))

  def forward(self, args: tuple[Any, ...], spec: Spec, config: PallasLayerNormConfig
              ) -> tuple[Any, Any]:
    return pallas_common.forward(args, spec, config.block_rows, _params(config), _channels,
                                 plgpu.BlockSpec)

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: PallasLayerNormConfig
               ) -> tuple[Any, ...]:
    return pallas_common.backward(residuals, dout, spec, config.block_rows, _params(config),
                                  _channels, plgpu.BlockSpec)
