"""pjrtkit.kernels: kernel ops with the Tokamax user API, on pjrtkit's CPU and GPU devices.

    from pjrtkit import kernels as pk
    y = pk.layer_norm(x, scale, offset, implementation=None)
    o = pk.dot_product_attention(q, k, v, is_causal=True, implementation="native")
    result = pk.autotune(jax.jit(f), *args)      # -> pk.AutotuningResult
    with result:
      f(*args)                                    # uses the tuned configs
    pk.autotune_cache.configure(enabled=True)    # untuned shapes: measured once, kept on disk

The code lives in the repository's top-level ``kernels/`` folder; it is imported as
``pjrtkit.kernels`` (see ``kernels/README.md``).
"""

from __future__ import annotations

from pjrtkit.kernels import benchmarking
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
from pjrtkit.kernels.layer_norm import api as _layer_norm_api
from pjrtkit.kernels.layer_norm.api import layer_norm

IMPLEMENTATIONS = {
    "layer_norm": tuple(_layer_norm_api.IMPLEMENTATIONS),
    "dot_product_attention": tuple(_attention_api.IMPLEMENTATIONS),
}
"""Implementation names per op."""

__all__ = [
    "ArgSpec", "AutotuningResult", "DISABLE_JAX_EXPORT_CHECKS", "DeviceInfo", "IMPLEMENTATIONS",
    "NoConfig", "Op", "Spec", "TunedChoice", "UnsupportedImplementationError", "autotune",
    "autotune_cache", "benchmarking", "current_device", "dot_product_attention", "find_kernel_calls", "layer_norm",
    "pallas_interpret",
]
