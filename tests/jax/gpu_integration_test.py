"""The xla_gpu device's Python side, on a machine without a GPU.

* ``_device``: which device ``initialize()`` chooses and the options it passes (pure functions,
  checked against the C++ rules' wording in ``xla_plugin/devices/selection``). The rules are
  stated for the reference devices, read from the registry (as ``selection_test.cc`` does), and
  what depends on the whole registry is derived from it, so devices ``tools/new_device.py`` adds
  change nothing here;
* the xla_gpu JAX integration installed over an XLA:CPU client: programs are only lowered (never
  run), and the lowered text shows JAX's cuda choices (cuSOLVER custom calls, the cuda branch of
  ``lax.platform_dependent``), host callbacks lowered as on cpu (pjrtkit's GPU handler runs
  them) and refused without libcudart, the ``gpu`` alias and donation.

``gpu_device_test.py`` runs the same features on a GPU.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.testing.plugin_env import plugin_env, plugin_library, run_python, runfiles_root

sys.path.insert(0, str(runfiles_root() / "python"))
# The device registry comes from the build_info.json beside the library under test.
os.environ.setdefault("PJRTKIT_PLUGIN_LIBRARY", str(plugin_library()))

from jax_plugins.pjrtkit import _device  # noqa: E402  pylint: disable=g-import-not-at-top

PLUGIN = Path("/site/jax_plugins/xla_cuda13/xla_cuda_plugin.so")
REFERENCE = tuple(d for d in _device.registry() if d.name in (_device.XLA_CPU, _device.XLA_GPU))
"""The reference devices' registry entries: the rules below are stated for them."""


@pytest.mark.parametrize("options,environ,gpu,plugin,expected", [
    ({}, {}, False, None, ("xla_cpu", "no NVIDIA GPU")),
    ({}, {}, True, None, ("xla_cpu", "an NVIDIA GPU, but no CUDA PJRT plugin (pip install "
                          "jax-cuda13-pjrt for the xla_gpu device)")),
    ({}, {}, True, PLUGIN, ("xla_gpu", f"an NVIDIA GPU and OpenXLA's CUDA plugin ({PLUGIN})")),
    ({}, {"PJRTKIT_DEVICE": "xla_cpu"}, True, PLUGIN,
     ("xla_cpu", "environment variable PJRTKIT_DEVICE")),
    ({}, {"PJRTKIT_DEVICE": "auto"}, True, PLUGIN,
     ("xla_gpu", f"an NVIDIA GPU and OpenXLA's CUDA plugin ({PLUGIN})")),
    ({"device_count": "2"}, {"PJRTKIT_DEVICE": "xla_gpu"}, True, PLUGIN,
     ("xla_cpu", "create option 'device_count'")),
    ({"memory_fraction": 0.5}, {}, False, None, ("xla_gpu", "create option 'memory_fraction'")),
    ({"device": "xla_gpu"}, {"PJRTKIT_DEVICE": "xla_cpu"}, False, None,
     ("xla_gpu", "create option 'device'")),
])
def test_choice_follows_the_rules_in_order(options, environ, gpu, plugin, expected):
  assert [d.name for d in REFERENCE] == ["xla_cpu", "xla_gpu"]
  choice = _device.choose(options, environ, gpu, plugin, REFERENCE)
  assert (choice.device, choice.reason) == expected


@pytest.mark.parametrize("options,environ,message", [
    ({"device": "tpu"}, {}, "create option 'device' must be 'xla_cpu', 'xla_gpu' or 'auto', "
     "got 'tpu'"),
    ({}, {"PJRTKIT_DEVICE": "gpu"}, "environment variable PJRTKIT_DEVICE must be 'xla_cpu', "
     "'xla_gpu' or 'auto', got 'gpu'"),
    ({"device": "xla_gpu", "device_count": 2}, {}, "create option 'device_count' belongs to the "
     "xla_cpu device, but option 'device' is 'xla_gpu'"),
    ({"device_count": 2, "preallocate": False}, {}, "create options 'device_count' (xla_cpu "
     "device) and 'preallocate' (xla_gpu device) select different devices; pass one device's "
     "options, or choose with option 'device'"),
])
def test_contradictions_are_refused_in_the_cpp_words(options, environ, message):
  with pytest.raises(ValueError) as error:
    _device.choose(options, environ, True, PLUGIN, REFERENCE)
  assert str(error.value) == message


def test_unknown_names_are_refused_listing_every_registered_device():
  names = _device.device_names()
  assert names[:2] == ("xla_cpu", "xla_gpu")
  accepted = ", ".join(f"'{n}'" for n in names) + " or 'auto'"
  with pytest.raises(ValueError) as error:
    _device.choose({"device": "tpu"}, {}, True, PLUGIN)
  assert str(error.value) == f"create option 'device' must be {accepted}, got 'tpu'"
  with pytest.raises(ValueError) as error:
    _device.choose({}, {"PJRTKIT_DEVICE": "gpu"}, True, PLUGIN)
  assert str(error.value) == f"environment variable PJRTKIT_DEVICE must be {accepted}, got 'gpu'"


def test_gpu_visibility_reads_the_driver_and_cuda_visible_devices(tmp_path):
  (tmp_path / "0000:00:06.0").mkdir()
  assert _device.nvidia_gpu_visible({}, str(tmp_path))
  assert not _device.nvidia_gpu_visible({"CUDA_VISIBLE_DEVICES": ""}, str(tmp_path))
  assert not _device.nvidia_gpu_visible({"CUDA_VISIBLE_DEVICES": "-1"}, str(tmp_path))
  assert _device.nvidia_gpu_visible({"CUDA_VISIBLE_DEVICES": "0"}, str(tmp_path))
  assert not _device.nvidia_gpu_visible({}, str(tmp_path / "missing"))
  empty = tmp_path / "empty"
  empty.mkdir()
  assert not _device.nvidia_gpu_visible({}, str(empty))


def test_gpu_options_are_jaxs_gpu_settings_and_share_the_gpu_when_asked():
  jax_settings = {"platform_name": "cuda", "allocator": "default", "memory_fraction": 0.5,
                  "abort_collectives_on_failure": False, "use_tfrt_gpu_client": False}
  options = _device.gpu_default_options(PLUGIN, {}, ["pjrtkit", "cpu"], jax_settings)
  assert options == {"device": "xla_gpu", "xla_gpu_plugin_path": str(PLUGIN),
                     "allocator": "default", "memory_fraction": 0.5,
                     "abort_collectives_on_failure": False, "use_tfrt_gpu_client": False}
  # JAX may create its own CUDA client beside pjrtkit's: pjrtkit does not preallocate.
  assert _device.gpu_default_options(PLUGIN, {}, [], jax_settings)["preallocate"] is False
  assert _device.gpu_default_options(PLUGIN, {}, ["cuda", "pjrtkit"], {})["preallocate"] is False
  # Unless the user chose.
  assert "preallocate" not in _device.gpu_default_options(
      PLUGIN, {"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}, [], {})


def test_only_execute_stage_handlers_go_through_pjrtkits_ffi_extension():
  from jax_plugins.pjrtkit import _gpu_targets  # pylint: disable=g-import-not-at-top

  capsule = object()
  assert _gpu_targets.execute_only(capsule)
  assert _gpu_targets.execute_only({"execute": capsule})
  assert not _gpu_targets.execute_only({"execute": capsule, "instantiate": capsule})


def test_without_a_gpu_initialize_chooses_xla_cpu():
  got = run_python("""
      import json, jax
      import jax_plugins.pjrtkit as pjrtkit
      jax.devices()  # initialize()
      status = pjrtkit.integration_status()
      print(json.dumps({"kind": jax.devices()[0].device_kind,
                        "backend": jax.devices()[0].backend,
                        "device": status.device, "installed": list(status.installed)}))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit", CUDA_VISIBLE_DEVICES="-1"))
  assert got == {"kind": "pjrtkit_cpu", "backend": "xla_cpu", "device": "xla_cpu",
                 "installed": ["ffi", "cpu lowering", "platform_dependent", "export", "dlpack",
                               "host callbacks", "donation", "persistent cache"]}


def test_the_choice_is_exported_for_the_library_to_decide_the_same():
  environ = {"PJRTKIT_DEVICE": "auto"}
  changed = _device.export_choice(_device.Choice("xla_gpu", "create option 'device'"), PLUGIN,
                                  environ)
  assert changed == {"PJRTKIT_DEVICE": "xla_gpu", "PJRTKIT_XLA_GPU_PLUGIN": str(PLUGIN)}
  assert environ == changed
  # A plugin path the user set stays; the device is the choice (create options win over it).
  environ = {"PJRTKIT_DEVICE": "xla_gpu", "PJRTKIT_XLA_CPU_PLUGIN": "/mine/xla_cpu_pjrt.so"}
  changed = _device.export_choice(_device.Choice("xla_cpu", "create option 'device_count'"),
                                  Path("/site/xla_cpu_pjrt.so"), environ)
  assert changed == {"PJRTKIT_DEVICE": "xla_cpu"}
  assert environ == {"PJRTKIT_DEVICE": "xla_cpu", "PJRTKIT_XLA_CPU_PLUGIN": "/mine/xla_cpu_pjrt.so"}


def test_the_library_reports_the_device_initialize_chose():
  got = run_python("""
      import json, os, jax
      from jax._src import xla_bridge
      jax.devices()
      backend = xla_bridge.get_backend("pjrtkit")
      print(json.dumps({"env": os.environ["PJRTKIT_DEVICE"],
                        "plugin": os.path.basename(os.environ["PJRTKIT_XLA_CPU_PLUGIN"]),
                        "version": backend.platform_version}))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit", CUDA_VISIBLE_DEVICES="-1"))
  assert got["env"] == "xla_cpu"
  assert got["plugin"] == "xla_cpu_pjrt.so"
  assert got["version"].startswith("pjrtkit 0.1.0 (xla_cpu")


def test_a_create_option_of_the_other_device_is_refused_by_the_library():
  # PJRTKIT_DEVICE decides the library's device; a client asking for the other one is refused.
  got = run_python("""
      import json
      from jax._src import xla_bridge
      try:
        xla_bridge.register_plugin("pjrtkit_other", library_path=__import__("os").environ[
            "PJRTKIT_PLUGIN_LIBRARY"], options={"device": "xla_gpu"})
        xla_bridge.backends()
        print(json.dumps({"error": "none"}))
      except Exception as e:  # the backend's creation error
        print(json.dumps({"error": str(e)}))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit_other", PJRTKIT_DEVICE="xla_cpu",
                      CUDA_VISIBLE_DEVICES="-1"))
  assert "this process's plugin serves the xla_cpu device" in got["error"], got


def test_libcudart_is_looked_for_explicitly_then_loaded_then_in_the_wheels(tmp_path,
                                                                          monkeypatch):
  from jax_plugins.pjrtkit import _cuda_runtime  # pylint: disable=g-import-not-at-top

  site = tmp_path / "site"
  for relative in ("nvidia/cu12/lib", "nvidia/cu13/lib"):
    (site / relative).mkdir(parents=True)
    (site / relative / f"libcudart.so.{relative[9:11]}").write_bytes(b"")
  monkeypatch.setattr(sys, "path", [str(site)])
  monkeypatch.setattr(_cuda_runtime, "_mapped_libraries", lambda: ["/proc-maps/libcudart.so.13"])
  monkeypatch.setenv("PJRTKIT_CUDART", "/explicit/libcudart.so")
  found = _cuda_runtime.candidates()
  assert found[:4] == ["/explicit/libcudart.so", "/proc-maps/libcudart.so.13",
                       str(site / "nvidia/cu13/lib/libcudart.so.13"),
                       str(site / "nvidia/cu12/lib/libcudart.so.12")]
  assert found[4:7] == ["libcudart.so.13", "libcudart.so.12", "libcudart.so"]
  # Beside the CUDA PJRT plugin's site-packages too (it may not be on sys.path).
  monkeypatch.setattr(sys, "path", [])
  monkeypatch.delenv("PJRTKIT_CUDART")
  plugin = site / "jax_plugins" / "xla_cuda13" / "xla_cuda_plugin.so"
  assert _cuda_runtime.candidates(str(plugin))[1] == str(
      site / "nvidia/cu13/lib/libcudart.so.13")


def test_without_libcudart_the_refusal_names_what_was_tried(monkeypatch):
  from jax_plugins.pjrtkit import _cuda_runtime  # pylint: disable=g-import-not-at-top

  monkeypatch.setattr(_cuda_runtime, "_LOADED", [])
  monkeypatch.setattr(_cuda_runtime, "candidates", lambda plugin_path=None: ["/no/libcudart.so"])
  with pytest.raises(_cuda_runtime.CudaRuntimeNotFound) as missing:
    _cuda_runtime.load()
  assert "install the NVIDIA CUDA runtime wheel" in str(missing.value)
  assert "Tried: /no/libcudart.so (" in str(missing.value)


class _FakeCuda:
  """libcudart over host memory: copies are memmoves, recorded with the synchronizations."""

  def __init__(self):
    self.calls = []

  def copy_to_host(self, host, device, nbytes, stream):
    import ctypes  # pylint: disable=g-import-not-at-top
    self.calls.append(("d2h", nbytes, stream))
    ctypes.memmove(host, device, nbytes)

  def copy_to_device(self, device, host, nbytes, stream):
    import ctypes  # pylint: disable=g-import-not-at-top
    self.calls.append(("h2d", nbytes, stream))
    ctypes.memmove(device, host, nbytes)

  def synchronize(self, stream):
    self.calls.append(("sync", stream))


def test_the_gpu_handler_copies_on_the_calls_stream_and_synchronizes(monkeypatch):
  import ctypes  # pylint: disable=g-import-not-at-top
  import ml_dtypes  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  from jax_plugins.pjrtkit import _cuda_runtime  # pylint: disable=g-import-not-at-top
  from jax_plugins.pjrtkit import _host_callbacks  # pylint: disable=g-import-not-at-top
  from jax_plugins.pjrtkit import _xla_ffi  # pylint: disable=g-import-not-at-top

  cuda = _FakeCuda()
  monkeypatch.setattr(_cuda_runtime, "load", lambda: cuda)
  monkeypatch.setattr(_xla_ffi, "stream", lambda frame: 0x5EED)
  keep = []

  def buffer(dtype_code, array, shape):  # An XLA_FFI_Buffer over `array`'s memory.
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    buf = _xla_ffi.Buffer(ctypes.sizeof(_xla_ffi.Buffer), None, dtype_code,
                          array.ctypes.data if array is not None else None, len(shape), dims)
    keep.extend([dims, buf, array])
    return _xla_ffi.buffer_view(ctypes.addressof(buf))

  f32 = np.arange(6, dtype=np.float32).reshape(2, 3)
  int4 = np.array([0x21, 0x03], np.uint8)  # int4 [1, 2, 3] packed, low nibble first.
  memory = _host_callbacks._DeviceMemory(None)  # pylint: disable=protected-access
  views = [buffer(11, f32, (2, 3)), buffer(_xla_ffi.DTYPE_TOKEN, None, ()),
           buffer(21, int4, (3,))]
  args = memory.read(views)
  np.testing.assert_array_equal(args[0], f32)
  assert args[1] is None
  np.testing.assert_array_equal(args[2], np.array([1, 2, 3], ml_dtypes.int4))
  assert cuda.calls == [("d2h", 24, 0x5EED), ("d2h", 2, 0x5EED), ("sync", 0x5EED)]

  cuda.calls.clear()
  out_f32 = np.zeros((2, 3), np.float32)
  out_int4 = np.zeros(2, np.uint8)
  rets = [buffer(11, out_f32, (2, 3)), buffer(_xla_ffi.DTYPE_TOKEN, None, ()),
          buffer(21, out_int4, (3,))]
  memory.write(rets, [f32 * 2, None, np.array([-1, 4, 5], ml_dtypes.int4)])
  np.testing.assert_array_equal(out_f32, f32 * 2)
  np.testing.assert_array_equal(out_int4, np.array([0x4F, 0x05], np.uint8))
  # The host arrays are kept until the stream is synchronized after the copies.
  assert cuda.calls == [("h2d", 24, 0x5EED), ("h2d", 2, 0x5EED), ("sync", 0x5EED)]


_GPU_INTEGRATION_ON_XLA_CPU = """
    import json, re
    import jax_plugins.pjrtkit as pjrtkit
    from jax_plugins.pjrtkit import _device
    # The xla_gpu integration over an XLA:CPU client: programs are lowered, never run.
    _device.choose_for_this_process = lambda: _device.Choice(_device.XLA_GPU, "test")
    cpu_options = pjrtkit.default_options
    pjrtkit.default_options = lambda device=None: cpu_options(_device.XLA_CPU)
    # The library itself serves the xla_cpu device (its client is an XLA:CPU one).
    export = _device.export_choice
    _device.export_choice = lambda choice, plugin, environ=None: export(
        _device.Choice(_device.XLA_CPU, "test"), None, environ)
    import jax, jax.numpy as jnp, numpy as np
    from jax._src.interpreters import mlir
    jax.devices()
    status = pjrtkit.integration_status()
    text = lambda f, *a: jax.jit(f).lower(*a).as_text()
    spd = np.eye(4, dtype=np.float32) * 2
    callback = lambda x: jax.pure_callback(lambda v: v, jax.ShapeDtypeStruct((), jnp.float32), x)
    dependent = lambda x: jax.lax.platform_dependent(x, cpu=lambda v: v * 3.0,
                                                     cuda=lambda v: v * 5.0)
    rule = mlir._platform_specific_lowerings["pjrtkit"][jax.lax.linalg.cholesky_p].rule
    from jax_plugins.pjrtkit import _cuda_runtime
    def no_cudart():
      raise _cuda_runtime.CudaRuntimeNotFound("no libcudart here (test)")
    from jax._src import callback as cb, core, dispatch
    # Registered after initialize(): a cuda rule, and a rule calling emit_python_callback itself.
    late = core.Primitive("pjrtkit_test_late_cuda")
    late.def_abstract_eval(lambda v: v)
    seen = []
    def late_rule(ctx, v):
      seen.append([list(ctx.module_context.platforms), ctx.module_context.backend.platform])
      return mlir.lower_fun(lambda a: a * 7.0, multiple_results=False)(ctx, v)
    mlir.register_lowering(late, late_rule, platform="cuda")
    cuda_callback = core.Primitive("pjrtkit_test_cuda_callback")  # A cuda rule calling back.
    cuda_callback.def_abstract_eval(lambda v: v)
    mlir.register_lowering(cuda_callback, lambda ctx, v: cb.emit_python_callback(
        ctx, lambda a: (a,), None, [v], ctx.avals_in, ctx.avals_out, has_side_effect=False,
        returns_token=False)[0], platform="cuda")
    own = core.Primitive("pjrtkit_test_own_callback")
    own.def_abstract_eval(lambda v: v)
    mlir.register_lowering(own, lambda ctx, v: cb.emit_python_callback(
        ctx, lambda a: (a,), None, [v], ctx.avals_in, ctx.avals_out, has_side_effect=False,
        returns_token=False)[0])
    _cuda_runtime.load = no_cudart  # Host callbacks need libcudart on the xla_gpu device.
    try:
      refused_text = text(callback, np.float32(1))
    except NotImplementedError as e:
      refused_text = "refused: " + str(e)
    try:
      own_refused = text(own.bind, np.float32(1))
    except NotImplementedError as e:
      own_refused = "refused: " + str(e)
    _cuda_runtime.load = lambda: None  # As if it were there: the program lowers.
    callback_text = text(callback, np.float32(1))
    targets = lambda t: sorted(set(re.findall(r"xla_ffi_\\w*python\\w*callback", t)))
    lax = jax.lax
    io = lambda x: jax.experimental.io_callback(lambda v: v, jax.ShapeDtypeStruct((), jnp.float32),
                                                x, ordered=True)
    show = lambda x: (jax.debug.print("x={x}", x=x), x)[1]
    in_control_flow = {
        "cond": lambda x: lax.cond(x > 0, callback, lambda v: v, x),
        "switch": lambda x: lax.switch(1, [lambda v: v, io, show], x),
        "while_body": lambda x: lax.while_loop(lambda v: v < 10, callback, x),
        "while_cond": lambda x: lax.while_loop(lambda v: callback(v) < 10, lambda v: v + 1, x),
        "scan": lambda x: lax.scan(lambda c, _: (io(c), None), x, None, length=3)[0],
        "fori_loop": lambda x: lax.fori_loop(0, 3, lambda i, v: show(v), x),
        "cond_in_while": lambda x: lax.while_loop(
            lambda v: v < 10, lambda v: lax.cond(v > 0, callback, io, v), x),
        "platform_dependent": lambda x: lax.platform_dependent(x, cuda=callback,
                                                              default=lambda v: v * 2),
    }
    from jax import export
    exported = {p: export.export(jax.jit(jnp.linalg.cholesky), platforms=[p])(spd)
                for p in ("cuda", "cpu")}
    try:
      cpu_export = text(exported["cpu"].call, spd)
    except ValueError as e:
      cpu_export = str(e)
    print(json.dumps({
        "export_default": export.default_export_platform(),
        "cuda_export": "cusolver_potrf" in text(exported["cuda"].call, spd),
        "cpu_export": cpu_export,
        "installed": list(status.installed), "device": status.device,
        "problems": list(status.problems),
        "gpu_alias": [d.platform for d in jax.devices("gpu")],
        "cholesky": "cusolver_potrf" in text(jnp.linalg.cholesky, spd),
        "cholesky_rule": rule.__wrapped__
                         is mlir._platform_specific_lowerings["cuda"][
                             jax.lax.linalg.cholesky_p].rule,
        "callback_targets": sorted(set(re.findall(r"xla_ffi_\\w*python\\w*callback",
                                                  callback_text))),
        "callback_index": "index = 0 : ui64" in callback_text,
        "refused": refused_text,
        "late_cuda_rule": "7.000000e+00" in text(late.bind, np.float32(1)),
        "late_cuda_rule_saw": seen,
        "cuda_rule_callback": targets(text(cuda_callback.bind, np.float32(1))),
        "own_callback": targets(text(own.bind, np.float32(1))),
        "own_refused": own_refused,
        "cuda_branch": "5.000000e+00" in text(dependent, np.float32(1)),
        "cpu_branch": "3.000000e+00" in text(dependent, np.float32(1)),
        "donation": "pjrtkit" in mlir._platforms_with_donation,
        "in_control_flow": {name: targets(text(f, np.float32(1)))
                            for name, f in in_control_flow.items()},
    }))
"""


_EXPECTED = {
    "installed": ["ffi", "cuda lowering", "platform_dependent", "export", "dlpack", "host values",
                  "pallas gpu", "host callbacks", "gpu alias", "donation", "persistent cache"],
    "device": "xla_gpu", "problems": [],
    "gpu_alias": ["pjrtkit"] * 4,
    "cholesky": True, "cholesky_rule": True,
    "cuda_branch": True, "cpu_branch": False,
    "donation": True,
    # Registered after initialize(): a cuda rule lowers (run as for cuda), and a primitive's own
    # rule calling emit_python_callback lowers as JAX's callbacks do.
    "late_cuda_rule": True, "late_cuda_rule_saw": [[["cuda"], "cuda"]],
    "own_callback": ["xla_ffi_python_cpu_callback"],
    # A cuda rule calling emit_python_callback gets cpu's callback too (cuda's would crash).
    "cuda_rule_callback": ["xla_ffi_python_cpu_callback"],
    # jax.export: artefacts for cuda are called on the xla_gpu device (cuSOLVER inside), those for
    # cpu refused in JAX's words, and export(f) exports for cuda.
    "export_default": "cuda", "cuda_export": True,
    "cpu_export": ("Function 'cholesky' was exported for platforms '('cpu',)' but it is used "
                   "on '('pjrtkit',)'."),
    # Inside every control-flow form, host callbacks lower as at top level (the cuda rule's
    # xla_ffi_python_gpu_callback finds no callbacks in a plugin's execute context).
    "in_control_flow": {name: ["xla_ffi_python_cpu_callback"] for name in (
        "cond", "switch", "while_body", "while_cond", "scan", "fori_loop", "cond_in_while",
        "platform_dependent")},
}


def test_the_gpu_integration_lowers_like_cuda_and_callbacks_like_cpu():
  got = run_python(_GPU_INTEGRATION_ON_XLA_CPU, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))
  from jax_plugins.pjrtkit import _gpu_rules  # pylint: disable=g-import-not-at-top

  refusal = "refused: " + _gpu_rules.GPU_CALLBACKS_ERROR.format(
      what="jax.pure_callback", reason="no libcudart here (test)")
  assert refusal == ("refused: jax.pure_callback on pjrtkit's xla_gpu device needs the CUDA "
                     "runtime (libcudart) to copy the callback's operands and results between "
                     "the GPU and the host: no libcudart here (test)")
  # Host callbacks are JAX's cpu program (pjrtkit's GPU handler runs it), not the cuda one.
  own_refusal = "refused: " + _gpu_rules.GPU_CALLBACKS_ERROR.format(
      what="a host callback", reason="no libcudart here (test)")
  assert got == {**_EXPECTED, "callback_targets": ["xla_ffi_python_cpu_callback"],
                 "callback_index": True, "refused": refusal, "own_refused": own_refusal}


def test_the_gpu_alias_yields_to_jaxs_cuda_and_is_not_added_for_xla_cpu():
  got = run_python("""
      import json, jax
      from jax._src import xla_bridge as xb
      jax.devices()
      print(json.dumps(xb._alias_to_platforms["gpu"]))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  assert "pjrtkit" not in got and got[0] == "cuda"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v"] + sys.argv[1:]))
