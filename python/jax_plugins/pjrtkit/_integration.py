"""Makes JAX's operations, host callbacks, donation and the persistent cache work on ``pjrtkit``.

``install`` is called by ``initialize()`` right after ``xla_bridge.register_plugin``, with the
device ``_device`` chose: what it installs is that device's (``CPU_FEATURES`` for xla_cpu: cpu
rules, LAPACK, pjrtkit's host-callback handler; ``GPU_FEATURES`` for xla_gpu: cuda rules,
jaxlib's CUDA kernels, Pallas through Triton and Mosaic GPU, pjrtkit's GPU host-callback
handler, the ``gpu`` alias; both: FFI, donation, the persistent cache). It is all or nothing:

* on a JAX release outside ``_jax_compat.TESTED_JAX_RANGE`` it installs nothing and logs one
  warning (the platform still runs programs that need none of it);
* otherwise it first checks every JAX internal the integration uses
  (``_jax_internals.problems``); if one changed it installs nothing and logs one warning naming
  them;
* then, for xla_cpu, in this order: FFI registrations for ``pjrtkit`` reach the plugin's PJRT
  FFI extension (``_ffi``); jaxlib's LAPACK / sparse FFI handlers are registered
  (``_lowering``), before the cpu lowering rules that emit them; ``lax.platform_dependent``
  takes its cpu branches (``_platform_rules``); ``jax.export`` artefacts for ``cpu`` are called
  (``_export_rules``); DLPack (``_dlpack``); host callbacks
  (``_host_callbacks``, ``_callback_rules``); what is registered for ``cpu`` later (lowering
  rules: ``_rule_table``; typed FFI targets: ``_cpu_targets``; rules calling
  ``emit_python_callback``: ``_callback_rules``); the refusal of programs the inner plugin computes
  wrongly (``_program_checks``); buffer donation and the persistent compilation cache
  (``_jax_compat``). If a step raises, every change to JAX made so far is undone (lowering
  rules, the compile wrapper, the donation list, the cache gate, the replaced functions) and one
  error is logged. FFI registrations already handed to the plugin stay: the plugin cannot forget
  them, and they are inert without the rules that emit them.
* for xla_gpu: FFI routing (``_ffi``), jaxlib's CUDA handlers and types (``_gpu_targets``), the
  cuda rules, followed for rules registered later (``_rule_table``), and the generic rules that
  choose by platform name (``_gpu_rules``,
  ``_platform_rules``), ``jax.export`` for ``cuda`` (``_export_rules``), DLPack (``_dlpack``),
  reads into numpy through pinned memory (``_host_values``), host callbacks (``_host_callbacks`` with its GPU handler, and the cpu callback rules,
  ``_gpu_rules.register_callbacks``), the ``gpu`` alias, donation and the persistent cache;
  undone the same way.
* for a device that compiles StableHLO itself (runs like ``stablehlo``: ``sim``): no lowering
  rules (JAX's platform-independent ones apply) but linear algebra's, typed FFI targets
  registered for ``cpu`` (``_cpu_targets``), Shardy exported from multi-device programs before
  they reach the plugin (``_shardy``), donation and the persistent cache; undone the same way.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from jax_plugins.pjrtkit import _callback_rules
from jax_plugins.pjrtkit import _cpu_targets
from jax_plugins.pjrtkit import _device
from jax_plugins.pjrtkit import _dlpack
from jax_plugins.pjrtkit import _export_rules
from jax_plugins.pjrtkit import _ffi
from jax_plugins.pjrtkit import _gpu_rules
from jax_plugins.pjrtkit import _gpu_targets
from jax_plugins.pjrtkit import _host_callbacks
from jax_plugins.pjrtkit import _host_values
from jax_plugins.pjrtkit import _jax_compat
from jax_plugins.pjrtkit import _jax_internals
from jax_plugins.pjrtkit import _lowering
from jax_plugins.pjrtkit import _platform_rules
from jax_plugins.pjrtkit import _program_checks
from jax_plugins.pjrtkit import _rule_table
from jax_plugins.pjrtkit import _shardy

logger = logging.getLogger(__name__)

INSTALLED_FEATURES = _jax_internals.CPU_FEATURES
"""What ``install`` installs for the xla_cpu device, in order."""

FEATURES_BY_DEVICE = {_device.XLA_CPU: _jax_internals.CPU_FEATURES,
                      _device.XLA_GPU: _jax_internals.GPU_FEATURES,
                      _device.STABLEHLO: _jax_internals.STABLEHLO_FEATURES}
"""What ``install`` installs for each reference device; every registered device gets those of
the one it runs like (``_device.runs_like``)."""

_DESCRIPTIONS = {
    _device.XLA_CPU: "cpu lowering rules and LAPACK, host callbacks, donation, persistent cache",
    _device.XLA_GPU: ("cuda lowering rules and jaxlib's CUDA kernels, Pallas on Triton and Mosaic "
                      "GPU, host callbacks, the gpu alias, donation, persistent cache"),
    _device.STABLEHLO: ("LAPACK for linear algebra, FFI handlers and host callbacks, Shardy "
                        "export of multi-device programs, donation, persistent cache"),
}
"""What the integration gives each device, in words for warnings."""


@dataclasses.dataclass(frozen=True)
class Status:
  """What ``install`` did.

  Attributes:
    jax_version: ``jax.__version__``.
    installed: the features installed (all of the device's, or none).
    problems: why nothing was installed (empty when everything was).
    device: the device they are for.
  """

  jax_version: str
  installed: tuple[str, ...]
  problems: tuple[str, ...] = ()
  device: str = _device.XLA_CPU


class _Undo:
  """The changes made to JAX so far, undone in reverse order by ``rollback``."""

  def __init__(self) -> None:
    self._steps: list[Callable[[], None]] = []

  def add(self, step: Callable[[], None]) -> None:
    self._steps.append(step)

  def rollback(self) -> None:
    while self._steps:
      step = self._steps.pop()
      try:
        step()
      except Exception:  # pylint: disable=broad-except  (undo the rest regardless)
        logger.exception("pjrtkit: could not undo part of the JAX integration")


def _snapshot_lowerings(platform: str, undo: _Undo) -> None:
  """Records ``platform``'s lowering rules so ``undo`` can put them back."""
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  table = mlir._platform_specific_lowerings  # pylint: disable=protected-access
  before = dict(table.get(platform, {}))

  def restore() -> None:
    rules = table.setdefault(platform, {})
    rules.clear()
    rules.update(before)

  undo.add(restore)


def _snapshot_attribute(owner: Any, name: str, undo: _Undo) -> None:
  """Records ``owner.name`` so ``undo`` can put it back."""
  before = getattr(owner, name)
  undo.add(lambda: setattr(owner, name, before))


def _install_steps(c_api: Any, platform: str, undo: _Undo) -> None:
  """Installs every feature; each change to JAX is recorded in ``undo`` before it is made."""
  from jax._src import compilation_cache  # pylint: disable=g-import-not-at-top
  from jax._src import compiler  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  ffi = _ffi.install(c_api, platform)  # FFI first: the rules below emit custom calls.
  extension = ffi.extension
  _lowering.register_cpu_ffi_targets(platform)
  cpu_targets = _cpu_targets.CpuTargets(platform, ffi.names)
  undo.add(cpu_targets.follow())
  _snapshot_lowerings(platform, undo)
  _lowering.register_cpu_lowerings(platform)
  undo.add(_rule_table.follow(platform, "cpu", skip=_lowering.CALLBACK_PRIMITIVES))
  _platform_rules.register(platform, "cpu")
  undo.add(_export_rules.install(platform, "cpu", default=False))
  undo.add(_dlpack.install(platform, gpu=False))
  _callback_rules.callback_rules()  # Fails before anything of callbacks is installed.
  _snapshot_attribute(compiler, "compile_or_get_cached", undo)
  _host_callbacks.install(c_api, platform, extension)
  _callback_rules.register(platform)
  undo.add(_callback_rules.follow_emit_python_callback(platform))
  compiler.compile_or_get_cached = cpu_targets.registering_compiles(
      _program_checks.checked_compiles(compiler.compile_or_get_cached, platform))
  donation = list(mlir._platforms_with_donation)  # pylint: disable=protected-access
  undo.add(lambda: mlir._platforms_with_donation.__setitem__(  # pylint: disable=protected-access
      slice(None), donation))
  _jax_compat.enable_donation(platform, mlir)
  _snapshot_attribute(compilation_cache, "is_cache_used", undo)
  _jax_compat.enable_persistent_cache(platform, compilation_cache)


def _install_gpu_steps(c_api: Any, platform: str, undo: _Undo) -> None:
  """Installs the xla_gpu device's features, recording each change to JAX in ``undo``."""
  from jax._src import compilation_cache  # pylint: disable=g-import-not-at-top
  from jax._src import compiler  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  extension = _ffi.install(c_api, platform).extension  # FFI first: the rules emit custom calls.
  _gpu_targets.register(platform)
  _gpu_rules.import_late_rule_modules()  # Their cuda rules are copied below.
  _snapshot_lowerings(platform, undo)
  _gpu_rules.register_cuda_lowerings(platform)
  undo.add(_rule_table.follow(platform, _gpu_rules.CUDA, skip=_gpu_rules.CALLBACK_PRIMITIVES,
                              wrap=lambda rule: _gpu_rules.cuda_lowering(rule, platform)))
  _gpu_rules.register_generic_by_platform(platform)
  _platform_rules.register(platform, _gpu_rules.CUDA)
  undo.add(_export_rules.install(platform, _gpu_rules.CUDA, default=True))
  undo.add(_dlpack.install(platform, gpu=True))
  undo.add(_host_values.install(platform))
  _callback_rules.callback_rules()  # Fails before anything of callbacks is installed.
  _snapshot_attribute(compiler, "compile_or_get_cached", undo)
  _host_callbacks.install(c_api, platform, extension, device_memory=True)
  _gpu_rules.register_callbacks(platform)
  undo.add(_callback_rules.follow_emit_python_callback(
      platform, before=_gpu_rules.require_cuda_runtime))
  undo.add(_gpu_rules.alias_gpu(platform))
  donation = list(mlir._platforms_with_donation)  # pylint: disable=protected-access
  undo.add(lambda: mlir._platforms_with_donation.__setitem__(  # pylint: disable=protected-access
      slice(None), donation))
  _jax_compat.enable_donation(platform, mlir)
  _snapshot_attribute(compilation_cache, "is_cache_used", undo)
  _jax_compat.enable_persistent_cache(platform, compilation_cache)


def _install_stablehlo_steps(c_api: Any, platform: str, undo: _Undo) -> None:
  """Installs what a device that compiles StableHLO itself needs: JAX's platform-independent
  lowerings stay, except linear algebra, which lowers as on cpu to LAPACK's typed FFI calls that
  the device runs with jaxlib's handlers; FFI registrations for ``platform`` reach the plugin (the
  device runs typed FFI custom calls with the handlers registered for it); host callbacks lower
  as on xla_cpu, to
  custom calls that run pjrtkit's host-callback handler; multi-device programs reach it with
  Shardy exported (``_shardy``); donation and the persistent cache as on the reference devices."""
  from jax._src import compilation_cache  # pylint: disable=g-import-not-at-top
  from jax._src import compiler  # pylint: disable=g-import-not-at-top
  from jax._src.interpreters import mlir  # pylint: disable=g-import-not-at-top

  ffi = _ffi.install(c_api, platform)
  extension = ffi.extension
  _lowering.register_cpu_ffi_targets(platform)
  cpu_targets = _cpu_targets.CpuTargets(platform, ffi.names)
  undo.add(cpu_targets.follow())
  _snapshot_lowerings(platform, undo)
  _lowering.register_cpu_lowerings(platform, only=_lowering.LINALG_PRIMITIVES)
  _callback_rules.callback_rules()  # Fails before anything of callbacks is installed.
  _snapshot_attribute(compiler, "compile_or_get_cached", undo)
  _host_callbacks.install(c_api, platform, extension)
  _callback_rules.register(platform)
  undo.add(_callback_rules.follow_emit_python_callback(platform))
  compiler.compile_or_get_cached = cpu_targets.registering_compiles(
      _shardy.exporting_compiles(compiler.compile_or_get_cached, platform))
  donation = list(mlir._platforms_with_donation)  # pylint: disable=protected-access
  undo.add(lambda: mlir._platforms_with_donation.__setitem__(  # pylint: disable=protected-access
      slice(None), donation))
  _jax_compat.enable_donation(platform, mlir)
  _snapshot_attribute(compilation_cache, "is_cache_used", undo)
  _jax_compat.enable_persistent_cache(platform, compilation_cache)


def install(c_api: Any, platform: str, device: str = _device.XLA_CPU) -> Status:
  """Installs pjrtkit's JAX integration for ``platform`` (the plugin behind ``c_api``) running
  on ``device`` (a registered device: what it installs is that of the one it runs like).

  Never raises: the plugin stays registered whatever happens here.

  Returns:
    What was installed and, when nothing was, why.
  """
  import jax  # pylint: disable=g-import-not-at-top

  version = jax.__version__
  family = _device.runs_like(device)
  features = FEATURES_BY_DEVICE.get(family)
  if features is None:
    problem = (f"unknown pjrtkit device {device!r}; expected one of "
               f"{sorted(set(FEATURES_BY_DEVICE) | set(_device.device_names()))}")
    logger.error("pjrtkit: %s; platform %r runs without pjrtkit's JAX integration", problem,
                 platform)
    return Status(version, (), (problem,), device)
  if not _jax_compat.is_tested_version(version):
    problem = (f"jax {version} is outside the range pjrtkit checked its JAX integration on "
               f"({_jax_compat.tested_range_text()})")
    logger.warning("pjrtkit: %s; platform %r runs, but without pjrtkit's JAX integration (%s)",
                   problem, platform, _DESCRIPTIONS[family])
    return Status(version, (), (problem,), device)
  if c_api is None:
    problem = "register_plugin returned no PJRT_Api"
    logger.error("pjrtkit: %s; platform %r runs without pjrtkit's JAX integration", problem,
                 platform)
    return Status(version, (), (problem,), device)
  problems = _jax_internals.problems(features)
  if problems:
    logger.warning("pjrtkit: JAX internals the integration relies on changed, so platform %r "
                   "runs without it (//tests/jax:jax_internals_test says more): %s", platform,
                   "; ".join(problems))
    return Status(version, (), tuple(problems), device)
  undo = _Undo()
  try:
    if family == _device.XLA_GPU:
      _install_gpu_steps(c_api, platform, undo)
    elif family == _device.STABLEHLO:
      _install_stablehlo_steps(c_api, platform, undo)
    else:
      _install_steps(c_api, platform, undo)
  except Exception as exc:  # pylint: disable=broad-except  (the plugin must still register)
    undo.rollback()
    logger.exception("pjrtkit: installing the JAX integration for %r failed; it was rolled "
                     "back", platform)
    return Status(version, (), (f"{type(exc).__name__}: {exc}",), device)
  return Status(version, features, (), device)
