"""pjrtkit.kernels: kernel ops with the Tokamax user API, on pjrtkit's CPU and GPU devices.

    from pjrtkit import kernels as pk
    y = pk.layer_norm(x, scale, offset, implementation=None)
    o = pk.dot_product_attention(q, k, v, is_causal=True, implementation="native")
    y = pk.ragged_dot(tokens, experts, group_sizes)   # also gated_linear_unit,
    # linear_softmax_cross_entropy_loss, triangle_multiplication, ragged_dot_general
    result = pk.autotune(jax.jit(f), *args)      # -> pk.AutotuningResult
    with result:
      f(*args)                                    # uses the tuned configs
    pk.autotune_cache.configure(enabled=True)    # untuned shapes: measured once, kept on disk
    f_std, arrays = pk.standardize_function(f, *args)
    bench = pk.benchmark(f_std, arrays)           # -> pk.BenchmarkData

The code lives in the repository's top-level ``kernels/`` folder; it is imported as
``pjrtkit.kernels`` (see ``kernels/README.md``).
"""

from __future__ import annotations

from pjrtkit.kernels import benchmarking
from pjrtkit.kernels.benchmarking import BenchmarkData, benchmark, standardize_function
from pjrtkit.kernels.core import autotune_cache
from pjrtkit.kernels.core.autotune import autotune, find_kernel_calls
from pjrtkit.kernels.core.device import DeviceInfo, current_device
from pjrtkit.kernels.core.errors import UnsupportedImplementationError
from pjrtkit.kernels.core.export import DISABLE_JAX_EXPORT_CHECKS
from pjrtkit.kernels.core.interpret import pallas_interpret
from pjrtkit.kernels.core.op import NoConfig, Op
from pjrtkit.kernels.core.spec import ArgSpec, Spec
from pjrtkit.kernels.core.tuned import AutotuningResult, TunedChoice
from pjrtkit.kernels.dot_product_attention import api as _attention_api
from pjrtkit.kernels.dot_product_attention.api import dot_product_attention
from pjrtkit.kernels.gated_linear_unit import api as _glu_api
from pjrtkit.kernels.gated_linear_unit.api import gated_linear_unit
from pjrtkit.kernels.layer_norm import api as _layer_norm_api
from pjrtkit.kernels.layer_norm.api import layer_norm
from pjrtkit.kernels.linear_softmax_cross_entropy_loss import api as _lce_api
from pjrtkit.kernels.linear_softmax_cross_entropy_loss.api import (
    linear_softmax_cross_entropy_loss)
from pjrtkit.kernels.ragged_dot import api as _ragged_dot_api
from pjrtkit.kernels.ragged_dot.api import ragged_dot, ragged_dot_general
from pjrtkit.kernels.ragged_dot.base import GroupSizes as RaggedDotGroupSizes
from pjrtkit.kernels.ragged_dot.base import generate_group_sizes as generate_ragged_dot_group_sizes
from pjrtkit.kernels.triangle_multiplication import api as _triangle_api
from pjrtkit.kernels.triangle_multiplication.api import triangle_multiplication

IMPLEMENTATIONS = {
    "layer_norm": tuple(_layer_norm_api.IMPLEMENTATIONS),
    "dot_product_attention": tuple(_attention_api.IMPLEMENTATIONS),
    "ragged_dot": tuple(_ragged_dot_api.IMPLEMENTATIONS),
    "gated_linear_unit": tuple(_glu_api.IMPLEMENTATIONS),
    "linear_softmax_cross_entropy_loss": tuple(_lce_api.IMPLEMENTATIONS),
    "triangle_multiplication": tuple(_triangle_api.IMPLEMENTATIONS),
}
"""Implementation names per op."""

__all__ = [
    "ArgSpec", "AutotuningResult", "BenchmarkData", "DISABLE_JAX_EXPORT_CHECKS", "DeviceInfo",
    "IMPLEMENTATIONS", "NoConfig", "Op", "RaggedDotGroupSizes", "Spec", "TunedChoice",
    "UnsupportedImplementationError", "autotune", "autotune_cache", "benchmark", "benchmarking",
    "current_device", "dot_product_attention", "find_kernel_calls", "gated_linear_unit",
    "generate_ragged_dot_group_sizes", "layer_norm", "linear_softmax_cross_entropy_loss",
    "pallas_interpret", "ragged_dot", "ragged_dot_general", "standardize_function",
    "triangle_multiplication",
]
