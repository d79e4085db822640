"""`DISABLE_JAX_EXPORT_CHECKS`: what ``jax.export`` must allow for every kernel implementation.

Kernel calls are custom calls (pjrtkit's native XLA FFI handlers, Triton's and Mosaic GPU's
custom calls) without JAX's compatibility guarantee, which ``jax.export`` refuses by default.
A function exported with these checks disabled runs only where its custom calls exist: JAX itself
refuses it on another platform (``exported for platforms ('pjrtkit',) but used on ('cpu',)``), and
pjrtkit refuses it on its other device (both devices are platform ``pjrtkit``): Triton and Mosaic
GPU calls on the CPU device, native calls on the GPU device, with a ValueError naming the kernels
and both devices (``jax_plugins.pjrtkit._program_checks.DEVICE_ONLY_TARGETS``).
"""

from __future__ import annotations

from jax import export

from pjrtkit.kernels.native import library

GPU_TARGETS = ("__gpu$xla.gpu.triton", "triton_kernel_call", "mosaic_gpu", "mosaic_gpu_v2")
"""Custom-call targets of Pallas's Triton and Mosaic GPU lowerings."""

DISABLE_JAX_EXPORT_CHECKS: tuple[export.DisabledSafetyCheck, ...] = tuple(
    export.DisabledSafetyCheck.custom_call(target)
    for target in library.TARGETS + GPU_TARGETS)
"""Pass as ``jax.export.export(f, disabled_checks=pk.DISABLE_JAX_EXPORT_CHECKS)``."""
