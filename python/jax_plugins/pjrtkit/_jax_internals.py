"""Every private JAX object pjrtkit reads, calls, wraps or extends, named in one place and checked.

JAX gives a PJRT plugin no public way to join what it decides by platform name (cpu lowering
rules, host callbacks, donation, the persistent cache, compile-only topologies), so pjrtkit's
integration reaches into ``jax._src``. Each such object is one ``Internal`` of ``INTERNALS``:
its dotted name, the pjrtkit feature that needs it, how it is used, why, and a check that the
object still has the shape pjrtkit relies on (most are built by ``_jax_checks``). ``problems()``
runs the checks; the integration (``_integration.install``) installs nothing when one fails, and
``//tests/jax:jax_internals_test`` fails naming the object when a JAX release changes one. The
same test makes sure no module of pjrtkit imports from ``jax._src`` without an entry here.

The checks are written against the tested range (``_jax_compat.TESTED_JAX_RANGE``, jax 0.11.2
and 0.12.0.1). Outside that range the integration is off without running them.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from jax_plugins.pjrtkit._jax_checks import (LOOKUP_CHECK, dataclass_fields, exists,
                                             generic_rule_check, gpu_registrations_check,
                                             has_params, impl_check, importable_or_absent,
                                             is_dict, load_module, param_names,
                                             registrations_check, rule_check, rules_table_check,
                                             source_has, source_text)

FFI = "ffi"
CPU_LOWERING = "cpu lowering"
HOST_CALLBACKS = "host callbacks"
DONATION = "donation"
PERSISTENT_CACHE = "persistent cache"
TOPOLOGY = "ahead-of-time topologies"
JIT_REPORT = "jit_report"
CUDA_LOWERING = "cuda lowering"
PALLAS_GPU = "pallas gpu"
GPU_ALIAS = "gpu alias"
KERNELS_CUPTI = "kernels cupti"
PLATFORM_DEPENDENT = "platform_dependent"
EXPORT = "export"
DLPACK = "dlpack"
HOST_VALUES = "host values"
SHARDY_EXPORT = "shardy export"
FEATURES = (FFI, CPU_LOWERING, HOST_CALLBACKS, DONATION, PERSISTENT_CACHE, TOPOLOGY, JIT_REPORT,
            CUDA_LOWERING, PALLAS_GPU, GPU_ALIAS, KERNELS_CUPTI, PLATFORM_DEPENDENT, EXPORT, DLPACK,
            HOST_VALUES, SHARDY_EXPORT)
"""The pjrtkit features that rely on JAX internals (``_integration`` installs those of the device
JAX runs on: ``CPU_FEATURES`` or ``GPU_FEATURES``; ``pjrtkit.jit_report`` and
``pjrtkit.kernels``' "cupti" benchmarking method check their own)."""

CPU_FEATURES = (FFI, CPU_LOWERING, PLATFORM_DEPENDENT, EXPORT, DLPACK, HOST_CALLBACKS,
                DONATION, PERSISTENT_CACHE)
"""What the integration installs for the xla_cpu device."""
GPU_FEATURES = (FFI, CUDA_LOWERING, PLATFORM_DEPENDENT, EXPORT, DLPACK, HOST_VALUES, PALLAS_GPU,
                HOST_CALLBACKS, GPU_ALIAS, DONATION, PERSISTENT_CACHE)
"""What the integration installs for the xla_gpu device (host callbacks: the same rules, compile
wrapper and internals as on xla_cpu; only the FFI handler differs, and it uses no JAX internal)."""
STABLEHLO_FEATURES = (FFI, CPU_LOWERING, HOST_CALLBACKS, SHARDY_EXPORT, DONATION, PERSISTENT_CACHE)
"""What the integration installs for a device that compiles StableHLO itself (``sim``): JAX's
platform-independent lowerings stay as they are, except linear algebra's (the cpu rules, LAPACK
through typed FFI calls); FFI registrations and host callbacks as on xla_cpu (the device runs the
typed FFI custom calls itself)."""


@dataclasses.dataclass(frozen=True)
class Internal:
  """One private JAX object pjrtkit relies on.

  Attributes:
    name: the object, as a dotted path (attributes of classes and module-level names alike).
    feature: the pjrtkit feature that needs it (one of ``FEATURES``).
    use: how pjrtkit uses it: read, called, wrapped (replaced by a wrapper that calls the
      original) or extended (pjrtkit adds to it).
    why: what pjrtkit does with it.
    check: returns None when the object has the expected shape, else the problem in words.
  """

  name: str
  feature: str
  use: str
  why: str
  check: Callable[[], str | None]


# ---- individual checks that need more than a signature or a source line --------------------

MOSAIC_GPU_LIB = "jax._src.lib.mosaic_gpu"
CUPTI_FUNCTIONS = ("_cupti_init", "_cupti_get_timings")


def cupti_extension() -> Any | None:
  """jaxlib's Mosaic GPU extension with CUPTI timings (present with the jax-cuda plugin), or None.

  ``pjrtkit.kernels.benchmarking`` times method "cupti" with it, as
  ``jax.experimental.mosaic.gpu.profiler`` does; without it "cupti" is unavailable.
  """
  try:
    lib = importlib.import_module(MOSAIC_GPU_LIB)
  except ImportError:
    return None
  ext = getattr(lib, "_mosaic_gpu_ext", None)
  if ext is None or not all(hasattr(ext, f) for f in CUPTI_FUNCTIONS):
    return None
  return ext


def _cupti_check() -> str | None:
  """None without the CUDA plugin (the feature is simply off); else the CUPTI functions must be
  there."""
  try:
    lib = importlib.import_module(MOSAIC_GPU_LIB)
  except ImportError:
    return None
  ext = getattr(lib, "_mosaic_gpu_ext", None)
  if ext is None:
    return None
  missing = [f for f in CUPTI_FUNCTIONS if not callable(getattr(ext, f, None))]
  return f"_mosaic_gpu_ext lacks {missing}" if missing else None


def donation_problem(mlir: Any = None) -> str | None:
  """Why JAX's donation list cannot be extended, or None when it can."""
  mlir = mlir if mlir is not None else load_module("jax._src.interpreters.mlir")
  platforms = getattr(mlir, "_platforms_with_donation", None)
  if not isinstance(platforms, list):
    return ("jax._src.interpreters.mlir._platforms_with_donation is "
            f"{type(platforms).__name__}, expected a list")
  if not all(isinstance(p, str) for p in platforms) or "cpu" not in platforms:
    return ("jax._src.interpreters.mlir._platforms_with_donation no longer lists platform "
            f"names: {platforms!r}")
  return None


CACHE_PLATFORMS_SOURCE = 'supported_platforms = ["tpu", "gpu", "cpu", "neuron"]'
"""The line of ``is_cache_used`` that gates the persistent cache by platform name."""


def cache_problem(compilation_cache: Any = None, compiler: Any = None) -> str | None:
  """Why JAX's persistent-cache gate cannot be widened, or None when it can."""
  compilation_cache = (compilation_cache if compilation_cache is not None
                       else load_module("jax._src.compilation_cache"))
  compiler = compiler if compiler is not None else load_module("jax._src.compiler")
  gate = getattr(compilation_cache, "is_cache_used", None)
  if gate is None or not callable(gate):
    return "jax._src.compilation_cache.is_cache_used is missing"
  original = getattr(gate, "__wrapped__", gate)
  if param_names(original) != ["backend"]:
    return (f"jax._src.compilation_cache.is_cache_used{inspect.signature(original)} no longer "
            "takes (backend)")
  try:
    source = inspect.getsource(original)
  except (OSError, TypeError) as exc:
    return f"cannot read jax._src.compilation_cache.is_cache_used: {exc}"
  if CACHE_PLATFORMS_SOURCE not in source or "backend.platform in supported_platforms" not in source:
    return ("jax._src.compilation_cache.is_cache_used no longer gates on "
            f"'{CACHE_PLATFORMS_SOURCE}' / 'backend.platform in supported_platforms'")
  # compiler.py must look the gate up through the module at call time, or a wrapper is unseen.
  get_key = getattr(compiler, "_get_cache_key", None)
  if get_key is None or "is_cache_used" not in get_key.__code__.co_names:
    return "jax._src.compiler._get_cache_key no longer calls compilation_cache.is_cache_used"
  return None


def _alias_check() -> str | None:
  aliases = getattr(load_module("jax._src.xla_bridge"), "_alias_to_platforms", None)
  if not isinstance(aliases, dict) or not isinstance(aliases.get("gpu"), list) or \
      "cuda" not in aliases["gpu"]:
    return "no longer maps 'gpu' to a list of platforms holding 'cuda'"
  return None


EMIT_PYTHON_CALLBACK_SOURCE = (
    "platform = ctx.module_context.platforms[0]",
    'call_target_name = f"xla_ffi{partition}_python_{device}_callback"',
    "ctx.module_context.add_host_callback(",
    "index = np.uint64(len(ctx.module_context.host_callbacks) - 1)",
    "(ctx, *operands, index=np.uint64(index))",
)
"""Lines of ``emit_python_callback`` that make its module what pjrtkit's handler runs."""


def _serialize_portable_artifact_check() -> str | None:
  mlir = getattr(load_module("jax._src.lib._jax"), "mlir", None)
  fn = getattr(mlir, "serialize_portable_artifact", None)
  if fn is None:
    return "is gone"
  doc = getattr(fn, "__doc__", "") or ""
  if "use_mixed_serialization" not in doc:
    return "no longer takes use_mixed_serialization"
  return None


def _deserialize_portable_artifact_check() -> str | None:
  mlir = getattr(load_module("jax._src.lib._jax"), "mlir", None)
  return None if callable(getattr(mlir, "deserialize_portable_artifact", None)) else "is gone"


def _mlir_ir_check() -> str | None:
  ir = getattr(importlib.import_module("jax._src.lib.mlir"), "ir")  # jaxlib's, re-exported.
  missing = [name for name in ("Module", "StringAttr", "DictAttr", "ArrayAttr", "OpResult")
             if not hasattr(ir, name)]
  if not hasattr(getattr(ir, "Module", None), "parse"):
    missing.append("Module.parse")
  return f"jax._src.lib.mlir.ir lacks {', '.join(missing)}" if missing else None


def _sdy_check() -> str | None:
  sdy = getattr(importlib.import_module("jax._src.lib.mlir.dialects"), "sdy")
  attr = getattr(sdy, "TensorShardingPerValueAttr", None)
  if attr is None or not hasattr(attr, "shardings"):
    return "jax._src.lib.mlir.dialects.sdy has no TensorShardingPerValueAttr.shardings"
  return None


def _propagation_check() -> str | None:
  """Shardy's propagation pipeline parses in JAX's MLIR context (jaxlib registers the passes)."""
  passmanager = getattr(importlib.import_module("jax._src.lib.mlir"), "passmanager")
  make_context = getattr(load_module("jax._src.interpreters.mlir"), "make_ir_context")
  shardy = importlib.import_module("jax_plugins.pjrtkit._shardy")
  try:
    with make_context():
      passmanager.PassManager.parse(shardy.PROPAGATION_PIPELINE)
  except Exception as e:  # pylint: disable=broad-except
    return f"cannot parse {shardy.PROPAGATION_PIPELINE}: {str(e).splitlines()[0]}"
  return None


def _compile_entry_check() -> str | None:
  compiler = load_module("jax._src.compiler")
  pxla = load_module("jax._src.interpreters.pxla")
  fn = getattr(compiler, "compile_or_get_cached", None)
  if fn is None:
    return "is gone"
  original = getattr(fn, "__wrapped__", fn)
  if param_names(original)[:5] != ["backend", "computation", "devices", "compile_options",
                               "host_callbacks"]:
    return (f"{inspect.signature(original)} no longer starts with (backend, computation, "
            "devices, compile_options, host_callbacks)")
  if getattr(pxla, "compiler", None) is not compiler or \
      "compiler.compile_or_get_cached(" not in inspect.getsource(pxla):
    return "is no longer called by jax._src.interpreters.pxla through the module"
  return None


def _get_backend_check() -> str | None:
  cls = load_module("jax._src.interpreters.mlir").ModuleContext
  fn = getattr(cls, "get_backend", None)
  return None if fn is not None and "optional" in param_names(fn) else "no longer takes optional="


_PE = "jax._src.interpreters.partial_eval"


def _array_property_getter(name: str) -> Any:
  """JAX's own getter of property ``ArrayImpl.<name>`` (under pjrtkit's, when it is wrapped)."""
  getter = getattr(load_module("jax._src.array"), "ArrayImpl").__dict__[name].fget
  return getattr(getter, "__wrapped__", getter)


def _array_method_problem(name: str, params: list[str]) -> str | None:
  """What changed in ``ArrayImpl.<name>`` (None: it is there and takes ``params``)."""
  method = getattr(load_module("jax._src.array"), "ArrayImpl").__dict__.get(name)
  if method is None:
    return "is gone"
  missing = [p for p in params if p not in param_names(getattr(method, "__wrapped__", method))]
  return f"no longer takes {missing}" if missing else None

INTERNALS: tuple[Internal, ...] = (
    # -- registration and ahead-of-time topologies -------------------------------------------
    Internal("jax._src.xla_bridge.register_plugin", TOPOLOGY, "called",
             "registers the plugin with a make_topology factory (PJRT_Compile needs the XLA:CPU "
             "path in topology options)",
             has_params("jax._src.xla_bridge", "register_plugin",
                        ["plugin_name", "priority", "library_path", "options",
                          "make_topology"])),
    Internal("jax._src.lib.xla_client.make_c_api_device_topology", TOPOLOGY, "called",
             "the default topology factory, with pjrtkit's options added",
             exists("jax._src.lib.xla_client", "make_c_api_device_topology")),
    Internal("jax._src.lib._jax.CompileOnlyPyClient", TOPOLOGY, "read",
             "tells a compile-only (topology) lowering apart, to refuse host callbacks there",
             exists("jax._src.lib._jax", "CompileOnlyPyClient")),
    Internal("jax._src.interpreters.mlir.ModuleContext.get_backend", TOPOLOGY, "called",
             "the backend a lowering is for (optional=True)", _get_backend_check),
    # -- FFI registrations -------------------------------------------------------------------
    Internal("jax._src.lib.xla_client.register_custom_call_handler", FFI, "called",
             "routes jax.ffi.register_ffi_target(platform='pjrtkit') to the plugin's FFI "
             "extension (queued registrations are replayed)",
             has_params("jax._src.lib.xla_client", "register_custom_call_handler",
                        ["platform", "handler"])),
    Internal("jax._src.lib.xla_client.register_custom_type_handler", FFI, "called",
             "routes jax.ffi.register_ffi_type(platform='pjrtkit') the same way",
             exists("jax._src.lib.xla_client", "register_custom_type_handler")),
    Internal("jax._src.lib.xla_client.register_custom_call_target", FFI, "wrapped",
             "records typed targets registered for cpu, registered for pjrtkit when a program "
             "calls them (_cpu_targets; jax.ffi.register_ffi_target calls it as a module "
             "attribute)",
             has_params("jax._src.lib.xla_client", "register_custom_call_target",
                        ["name", "fn", "platform", "api_version", "traits"])),
    Internal("jax._src.lib.xla_client._custom_callback", FFI, "read",
             "cpu registrations queued until cpu's handler exists, recorded for pjrtkit",
             is_dict("jax._src.lib.xla_client", "_custom_callback")),
    # -- cpu lowering rules and the LAPACK / sparse handlers they emit -----------------------
    Internal("jax._src.interpreters.mlir._platform_specific_lowerings", CPU_LOWERING, "read",
             "the cpu rules pjrtkit registers for its platform too",
             lambda: rules_table_check("cpu")),
    Internal("jax._src.interpreters.mlir.register_lowering", CPU_LOWERING, "called",
             "registers rules for platform 'pjrtkit'",
             has_params("jax._src.interpreters.mlir", "register_lowering",
                        ["prim", "rule", "platform", "inline", "cacheable"])),
    Internal("jax._src.interpreters.mlir._get_lowering_rules", CPU_LOWERING, "read",
             "looks rules up with `in` and `[]` only, so pjrtkit's table (_rule_table) can "
             "follow cpu's (cuda's on xla_gpu) for rules registered after initialize()",
             LOOKUP_CHECK),
    Internal("jax._src.lib.lapack.registrations", CPU_LOWERING, "called",
             "jaxlib's LAPACK FFI handlers, registered for 'pjrtkit'",
             registrations_check("jax._src.lib.lapack")),
    Internal("jax._src.lib.cpu_sparse.registrations", CPU_LOWERING, "called",
             "jaxlib's CPU sparse FFI handlers, registered for 'pjrtkit'",
             registrations_check("jax._src.lib.cpu_sparse")),
    # -- host callbacks ----------------------------------------------------------------------
    Internal("jax._src.compiler.compile_or_get_cached", HOST_CALLBACKS, "wrapped",
             "JAX's one compile entry point (called as a module attribute by pxla); pjrtkit's "
             "wrappers bind the executables it loads to their host callbacks and refuse programs "
             "the inner plugin computes wrongly (_program_checks)", _compile_entry_check),
    Internal("jax._src.compiler.compile_or_get_cached", SHARDY_EXPORT, "wrapped",
             "programs for a device that reads plain StableHLO have Shardy exported first "
             "(_shardy)", _compile_entry_check),
    Internal("jax._src.lib._jax.mlir.serialize_portable_artifact", SHARDY_EXPORT, "called",
             "serializes without mixed dialects, which runs Shardy's round-trip export",
             _serialize_portable_artifact_check),
    Internal("jax._src.lib._jax.mlir.deserialize_portable_artifact", SHARDY_EXPORT, "called",
             "reads the exported program back as a module",
             _deserialize_portable_artifact_check),
    Internal("jax._src.lib.mlir.ir", SHARDY_EXPORT, "called",
             "MLIR's Python IR (Module.parse, attributes, OpResult): main's results a shard_map "
             "returns get its out sharding before the export", _mlir_ir_check),
    Internal("jax._src.lib.mlir.dialects.sdy", SHARDY_EXPORT, "called",
             "reads a sdy.manual_computation's out_shardings (TensorShardingPerValueAttr)",
             _sdy_check),
    Internal("jax._src.lib.mlir.passmanager", SHARDY_EXPORT, "called",
             "runs Shardy's sharding propagation (sdy-propagation-pipeline) on programs over "
             "more than one partition before the export", _propagation_check),
    Internal("jax._src.interpreters.mlir.make_ir_context", SHARDY_EXPORT, "called",
             "the MLIR context the exported module lives in",
             exists("jax._src.interpreters.mlir", "make_ir_context")),
    Internal("jax._src.callback.emit_python_callback", HOST_CALLBACKS, "called (by JAX's rules)",
             "emits xla_ffi_python_cpu_callback with attribute `index` for the cpu platform",
             source_has("jax._src.callback", "emit_python_callback",
                        EMIT_PYTHON_CALLBACK_SOURCE)),
    Internal("jax._src.callback.emit_python_callback", HOST_CALLBACKS, "wrapped",
             "rules of other primitives that call it (here and through jax.interpreters.mlir) "
             "lower for pjrtkit as for cpu (_callback_rules.follow_emit_python_callback)",
             has_params("jax._src.callback", "emit_python_callback", ["ctx"])),
    Internal("jax._src.interpreters.mlir._lowerings", HOST_CALLBACKS, "read",
             "the generic rule table, where JAX keeps the pure_callback / io_callback rules",
             is_dict("jax._src.interpreters.mlir", "_lowerings")),
    Internal("jax._src.callback.pure_callback_lowering", HOST_CALLBACKS, "called",
             "JAX's rule for pure_callback, run with the platforms read as cpu",
             rule_check("generic", "jax._src.callback", "pure_callback_p",
                        "pure_callback_lowering")),
    Internal("jax._src.callback.io_callback_lowering", HOST_CALLBACKS, "called",
             "JAX's rule for io_callback, run the same way",
             rule_check("generic", "jax._src.callback", "io_callback_p",
                        "io_callback_lowering")),
    Internal("jax._src.buffer_callback._buffer_callback_lowering", HOST_CALLBACKS, "called",
             "JAX's rule for jax.experimental.buffer_callback, run with the platforms read as "
             "cpu: emits xla_buffer_python_cpu_callback with attribute `index`",
             rule_check("generic", "jax._src.buffer_callback", "buffer_callback_p",
                        "_buffer_callback_lowering")),
    Internal("jax._src.debugging.debug_callback_lowering", HOST_CALLBACKS, "called",
             "JAX's cpu rule for jax.debug.callback",
             rule_check("cpu", "jax._src.debugging", "debug_callback_p",
                        "debug_callback_lowering")),
    Internal("jax._src.debugging.debug_print_lowering_rule", HOST_CALLBACKS, "called",
             "JAX's cpu rule for jax.debug.print",
             rule_check("cpu", "jax._src.debugging", "debug_print_p",
                        "debug_print_lowering_rule")),
    Internal("jax._src.checkify.check_lowering_rule", HOST_CALLBACKS, "called",
             "JAX's cpu rule for checkify's check",
             rule_check("cpu", "jax._src.checkify", "check_p", "check_lowering_rule")),
    Internal("jax._src.interpreters.mlir.ModuleContext", HOST_CALLBACKS, "read",
             "replace(platforms=, backend=) makes the cpu-named context the rules run in",
             dataclass_fields("jax._src.interpreters.mlir.ModuleContext",
                              ["platforms", "backend", "host_callbacks"], ["replace"])),
    Internal("jax._src.interpreters.mlir.LoweringRuleContext", HOST_CALLBACKS, "read",
             "replace(module_context=, platforms=), tokens_out and set_tokens_out carry ordered "
             "effects' tokens back",
             dataclass_fields("jax._src.interpreters.mlir.LoweringRuleContext",
                              ["module_context", "platforms", "tokens_out"],
                              ["replace", "set_tokens_out"])),
    Internal("jax._src.callback.pure_callback_impl", HOST_CALLBACKS, "called",
             "raises JAX's own 'cpu is not listed' error at lowering",
             impl_check("jax._src.callback", "pure_callback_impl",
                        ["args", "result_avals", "callback", "sharding", "vmap_method"])),
    Internal("jax._src.callback.io_callback_impl", HOST_CALLBACKS, "called",
             "the same, for io_callback",
             impl_check("jax._src.callback", "io_callback_impl",
                        ["args", "result_avals", "callback", "sharding", "ordered"])),
    Internal("jax._src.debugging.debug_callback_p.impl", HOST_CALLBACKS, "called",
             "the same, for jax.debug callbacks",
             impl_check("jax._src.debugging", "debug_callback_p.impl",
                        ["args", "callback", "effect", "partitioned"])),
    Internal("jax._src.debugging.debug_effect", HOST_CALLBACKS, "read",
             "the effect passed to the probe above", exists("jax._src.debugging",
                                                            "debug_effect")),
    Internal("jax._src.xla_bridge.local_devices", HOST_CALLBACKS, "called",
             "is the cpu backend there? (backend='cpu')",
             has_params("jax._src.xla_bridge", "local_devices", ["backend"])),
    Internal("jax._src.xla_bridge.get_backend", HOST_CALLBACKS, "called",
             "the backend a lowering without one runs on", has_params(
                 "jax._src.xla_bridge", "get_backend", ["platform"])),
    # -- donation and the persistent cache (gated by platform name) --------------------------
    Internal("jax._src.interpreters.mlir._platforms_with_donation", DONATION, "extended",
             "'pjrtkit' is appended so jit(donate_argnums=...) donates", donation_problem),
    Internal("jax._src.compilation_cache.is_cache_used", PERSISTENT_CACHE, "wrapped",
             "lets 'pjrtkit' through the platform-name gate (jax._src.compiler._get_cache_key "
             "must call it through the module)", cache_problem),
    # -- the xla_gpu device: cuda rules, jaxlib's CUDA kernels, Pallas, callbacks, 'gpu' -------
    Internal("jax._src.interpreters.mlir._platform_specific_lowerings", CUDA_LOWERING, "read",
             "the cuda rules pjrtkit registers for its platform on the xla_gpu device",
             lambda: rules_table_check("cuda")),
    Internal("jax._src.interpreters.mlir._get_lowering_rules", CUDA_LOWERING, "read",
             "looks rules up with `in` and `[]` only, so pjrtkit's table follows cuda's",
             LOOKUP_CHECK),
    Internal("jax._src.interpreters.mlir.register_lowering", CUDA_LOWERING, "called",
             "registers the cuda rules, run as for cuda, for platform 'pjrtkit'",
             has_params("jax._src.interpreters.mlir", "register_lowering",
                        ["prim", "rule", "platform", "inline", "cacheable"])),
    Internal("jax._src.interpreters.mlir._lowerings", CUDA_LOWERING, "read",
             "the generic rules of pallas_call and mpmd_map",
             is_dict("jax._src.interpreters.mlir", "_lowerings")),
    Internal("jax._src.interpreters.mlir.ModuleContext", CUDA_LOWERING, "read",
             "replace(platforms=, backend=) makes the cuda-named context the rules run in",
             dataclass_fields("jax._src.interpreters.mlir.ModuleContext",
                              ["platforms", "backend"], ["replace"])),
    Internal("jax._src.interpreters.mlir.LoweringRuleContext", CUDA_LOWERING, "read",
             "replace(module_context=, platforms=) and the tokens of ordered effects",
             dataclass_fields("jax._src.interpreters.mlir.LoweringRuleContext",
                              ["module_context", "platforms", "tokens_out"],
                              ["replace", "set_tokens_out"])),
    Internal("jax._src.xla_bridge.get_backend", CUDA_LOWERING, "called",
             "the backend a lowering without one runs on", has_params(
                 "jax._src.xla_bridge", "get_backend", ["platform"])),
    Internal("jax._src.interpreters.mlir._lowerings", PLATFORM_DEPENDENT, "read",
             "the generic rules of platform_index and cond",
             is_dict("jax._src.interpreters.mlir", "_lowerings")),
    Internal("jax._src.interpreters.mlir.LoweringRuleContext", PLATFORM_DEPENDENT, "read",
             "replace(platforms=) names the device's JAX platform to the two rules; tokens of "
             "ordered effects in a cond are copied back",
             dataclass_fields("jax._src.interpreters.mlir.LoweringRuleContext",
                              ["module_context", "platforms", "tokens_out"],
                              ["replace", "set_tokens_out"])),
    Internal("jax._src.lax.control_flow.conditionals._platform_index_lowering",
             PLATFORM_DEPENDENT, "called",
             "lax.platform_dependent chooses the cpu branch on xla_cpu, the cuda one on xla_gpu",
             generic_rule_check("jax._src.lax.control_flow.conditionals", "platform_index_p",
                                "_platform_index_lowering", ["mlir.lower_per_platform("])),
    Internal("jax._src.lax.control_flow.conditionals._cond_lowering", PLATFORM_DEPENDENT,
             "called", "cond's rule keeps the branches of lax.platform_dependent by platform name "
             "(jnp.linalg uses it); its branches lower with pjrtkit's module context",
             generic_rule_check("jax._src.lax.control_flow.conditionals", "cond_p",
                                "_cond_lowering", ["mlir._platforms_for_eqn(ctx)"])),
    # -- jax.export: artefacts for the JAX platform the device lowers as ----------------------
    Internal("jax._src.export._export._call_exported_lowering", EXPORT, "called",
             "Exported.call accepts an artefact for the device's JAX platform (cpu or cuda) and "
             "calls it with that platform's branch",
             generic_rule_check("jax._src.export._export", "call_exported_p",
                                "_call_exported_lowering",
                                ["lowering_platforms = ctx.module_context.platforms"])),
    Internal("jax._src.export._export.default_export_platform", EXPORT, "replaced",
             "export(f) on pjrtkit exports for the device's JAX platform, as JAX's gpu backend "
             "exports for cuda", source_has("jax._src.export._export", "default_export_platform",
                                            ["xb.default_backend()"])),
    Internal("jax._src.export._export.default_lowering_platform", EXPORT, "replaced",
             "the old name of default_export_platform, the same function",
             exists("jax._src.export._export", "default_lowering_platform")),
    # -- DLPack: pjrtkit arrays exported by pjrtkit, CUDA tensors imported through 'gpu' --------
    Internal("jax._src.array.ArrayImpl.__dlpack__", DLPACK, "wrapped",
             "exports pjrtkit arrays (jaxlib's C++ refuses any platform id but its own)",
             lambda: _array_method_problem("__dlpack__",
                                            ["stream", "max_version", "dl_device", "copy"])),
    Internal("jax._src.array.ArrayImpl.__dlpack_device__", DLPACK, "wrapped",
             "answers kDLCPU / kDLCUDA for pjrtkit arrays",
             lambda: _array_method_problem("__dlpack_device__", [])),
    Internal("jax._src.array.ArrayImpl.__cuda_array_interface__", DLPACK, "wrapped",
             "answers the CUDA Array Interface of xla_gpu arrays (jaxlib's refuses pjrtkit)",
             lambda: None if isinstance(getattr(load_module("jax._src.array"), "ArrayImpl")
                                        .__dict__.get("__cuda_array_interface__"), property)
             else "is not a property"),
    Internal("jax._src.dlpack._DL_DEVICE_TO_PLATFORM", DLPACK, "changed",
             "CUDA tensors are imported through the 'gpu' alias (JAX's cuda, else pjrtkit)",
             is_dict("jax._src.dlpack", "_DL_DEVICE_TO_PLATFORM")),
    # -- host values: np.asarray of xla_gpu arrays through pinned memory -----------------------
    Internal("jax._src.array.ArrayImpl._value", HOST_VALUES, "replaced",
             "np.asarray / device_get of a large xla_gpu array views a pinned_host copy",
             lambda: None if isinstance(getattr(load_module("jax._src.array"), "ArrayImpl")
                                        .__dict__.get("_value"), property)
             else "is not a property"),
    Internal("jax._src.array.ArrayImpl.copy_to_host_async", HOST_VALUES, "wrapped",
             "starts that pinned_host copy", lambda: _array_method_problem(
                 "copy_to_host_async", [])),
    Internal("jax._src.config.transfer_guard_device_to_host", HOST_VALUES, "read",
             "a guarded process converts through JAX's own path, which logs or refuses",
             lambda: None if hasattr(getattr(load_module("jax._src.config"),
                                             "transfer_guard_device_to_host", None), "value")
             else "is gone or has no value"),
    Internal("jax._src.array.ArrayImpl._npy_value", HOST_VALUES, "set",
             "the host value both use (the view is cached there, as JAX caches its own)",
             lambda: None if "_npy_value" in source_text(_array_property_getter("_value"))
             else "is no longer _value's cache"),
    Internal("jax._src.lib.gpu_solver.registrations", CUDA_LOWERING, "called",
             "jaxlib's cuSOLVER FFI handlers, registered for 'pjrtkit' (XLA:GPU's CUDA)",
             gpu_registrations_check("jax._src.lib.gpu_solver")),
    Internal("jax._src.lib.gpu_linalg.registrations", CUDA_LOWERING, "called",
             "jaxlib's CUDA linalg helpers (lu pivots, cholesky update), the same way",
             gpu_registrations_check("jax._src.lib.gpu_linalg")),
    Internal("jax._src.lib.gpu_prng.registrations", CUDA_LOWERING, "called",
             "jaxlib's CUDA threefry kernel, the same way",
             gpu_registrations_check("jax._src.lib.gpu_prng")),
    Internal("jax._src.lib.gpu_sparse.registrations", CUDA_LOWERING, "called",
             "jaxlib's cuSPARSE kernels, the same way",
             gpu_registrations_check("jax._src.lib.gpu_sparse")),
    Internal("jaxlib.plugin_support.import_from_plugin", CUDA_LOWERING, "called",
             "jaxlib's cuda_plugin_extension: its ffi_handlers() (the GPU host-callback "
             "handlers) and ffi_types(), registered for 'pjrtkit'",
             has_params("jaxlib.plugin_support", "import_from_plugin",
                        ["plugin_name", "submodule_name"])),
    Internal("jax._src.lib.xla_client.register_custom_type", CUDA_LOWERING, "called",
             "registers the cuda_plugin_extension's FFI types for 'pjrtkit'",
             has_params("jax._src.lib.xla_client", "register_custom_type",
                        ["type_name", "type_id", "platform"])),
    Internal("jax._src.lib.xla_client.generate_pjrt_gpu_plugin_options", CUDA_LOWERING, "called",
             "JAX's GPU client settings (XLA_PYTHON_CLIENT_*) become the xla_gpu device's "
             "create options", exists("jax._src.lib.xla_client",
                                      "generate_pjrt_gpu_plugin_options")),
    Internal("jax._src.pallas.pallas_call._pallas_call_lowering", PALLAS_GPU, "called",
             "pallas_call's generic rule, run as for cuda: Triton or Mosaic GPU",
             generic_rule_check("jax._src.pallas.pallas_call", "pallas_call_p",
                                "_pallas_call_lowering", ["cuda=gpu_lowering"])),
    Internal("jax._src.pallas.mpmd._mpmd_map_lowering", PALLAS_GPU, "called",
             "mpmd_map's generic rule (Mosaic GPU kernels), run as for cuda",
             generic_rule_check("jax._src.pallas.mpmd", "mpmd_map_p", "_mpmd_map_lowering",
                                ["ctx.module_context.platforms", 'case "cuda"'])),
    Internal("jax._src.pallas.triton.pallas_call_registration", PALLAS_GPU, "read (its source)",
             "Triton's registration reads the lowering platform from the rule context",
             source_has("jax._src.pallas.triton.pallas_call_registration", None,
                        ["ctx.platforms or ctx.module_context.platforms"])),
    Internal("jax._src.pallas.mosaic_gpu.pallas_call_registration", PALLAS_GPU, "imported",
             "registers Pallas's Mosaic GPU lowering of pallas_call before the first kernel "
             "(JAX 0.11.2 imports it only from mpmd_map's lowering)",
             importable_or_absent("jax._src.pallas.mosaic_gpu.pallas_call_registration")),
    Internal("jax._src.xla_bridge._alias_to_platforms", GPU_ALIAS, "extended",
             "'pjrtkit' is appended to the 'gpu' alias (after cuda) on the xla_gpu device, so "
             "jax.devices('gpu') finds it", _alias_check),
    # -- pjrtkit.jit_report ------------------------------------------------------------------
    Internal(f"{_PE}.explain", JIT_REPORT, "read (its log text)",
             "jit_report parses the WARNING it logs through the logger "
             f"'{_PE}' with regular expressions (pjrtkit._jit_explain)",
             source_has(_PE, None, ["logger = logging.getLogger(__name__)",
                                    'TRACING CACHE MISS at {callsite}:',
                                    "never seen function:\\n    {func_name} id={id(fun)}",
                                    "different input pytree", "for {func_name}",
                                    "Tracing context doesn't match"])),
    Internal(f"{MOSAIC_GPU_LIB}._mosaic_gpu_ext._cupti_init", KERNELS_CUPTI, "called",
             "pjrtkit.kernels.benchmarking method 'cupti': starts CUPTI kernel timing (what "
             "jax.experimental.mosaic.gpu.profiler uses); absent without the CUDA plugin",
             _cupti_check),
    Internal(f"{MOSAIC_GPU_LIB}._mosaic_gpu_ext._cupti_get_timings", KERNELS_CUPTI, "called",
             "pjrtkit.kernels.benchmarking method 'cupti': reads the kernels' device times",
             _cupti_check),
    Internal("jax.monitoring events /jax/core/compile/*", JIT_REPORT, "read",
             "jit_report times tracing, lowering and backend compiles from these events",
             source_has("jax._src.dispatch", None, ["/jax/core/compile/jaxpr_trace_duration",
                                                    "/jax/core/compile/backend_compile_duration",
                                                    "/jax/core/compile/jaxpr_to_mlir_module_duration"])),
)
"""Every JAX internal pjrtkit uses (``//tests/jax:jax_internals_test`` keeps the list complete)."""


def problems(features: Sequence[str] = FEATURES) -> list[str]:
  """The internals of ``features`` that changed, as ``'name: problem'`` lines; never raises."""
  found = []
  for internal in INTERNALS:
    if internal.feature not in features:
      continue
    try:
      problem = internal.check()
    except Exception as exc:  # pylint: disable=broad-except  (a fence must not break initialize)
      problem = f"checking it failed: {type(exc).__name__}: {exc}"
    if problem is not None:
      found.append(f"{internal.name} ({internal.feature}): {problem}")
  return found
