"""The xla_gpu device's Python side, on a machine without a GPU.

* ``_device``: which device ``initialize()`` chooses and the options it passes (pure functions,
  checked against the C++ rules' wording in ``xla_plugin/devices/selection``);
* the xla_gpu JAX integration installed over an XLA:CPU client: programs are only lowered (never
  run), and the lowered text shows JAX's cuda choices (cuSOLVER custom calls, the GPU callback
  handler, the cuda branch of ``lax.platform_dependent``), the ``gpu`` alias and donation.

``gpu_device_test.py`` runs the same features on a GPU.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.testing.plugin_env import plugin_env, run_python, runfiles_root

sys.path.insert(0, str(runfiles_root() / "python"))

from jax_plugins.pjrtkit import _device  # noqa: E402  pylint: disable=g-import-not-at-top

PLUGIN = Path("/site/jax_plugins/xla_cuda13/xla_cuda_plugin.so")


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
  choice = _device.choose(options, environ, gpu, plugin)
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
    _device.choose(options, environ, True, PLUGIN)
  assert str(error.value) == message


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
                 "installed": ["ffi", "cpu lowering", "host callbacks", "donation",
                               "persistent cache"]}


_GPU_INTEGRATION_ON_XLA_CPU = """
    import json
    import jax_plugins.pjrtkit as pjrtkit
    from jax_plugins.pjrtkit import _device
    # The xla_gpu integration over an XLA:CPU client: programs are lowered, never run.
    _device.choose_for_this_process = lambda: _device.Choice(_device.XLA_GPU, "test")
    cpu_options = pjrtkit.default_options
    pjrtkit.default_options = lambda device=None: cpu_options(_device.XLA_CPU)
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
    try:
      callback_text = text(callback, np.float32(1))
    except NotImplementedError as e:
      callback_text = "refused: " + str(e)
    print(json.dumps({
        "installed": list(status.installed), "device": status.device,
        "problems": list(status.problems),
        "gpu_alias": [d.platform for d in jax.devices("gpu")],
        "cholesky": "cusolver_potrf" in text(jnp.linalg.cholesky, spd),
        "cholesky_rule": rule.__wrapped__
                         is mlir._platform_specific_lowerings["cuda"][
                             jax.lax.linalg.cholesky_p].rule,
        "callback": callback_text.split(":")[0] if callback_text.startswith("refused") else
                    "xla_ffi_python_gpu_callback" in callback_text,
        "callback_reason": callback_text[:80],
        "cuda_branch": "5.000000e+00" in text(dependent, np.float32(1)),
        "cpu_branch": "3.000000e+00" in text(dependent, np.float32(1)),
        "donation": "pjrtkit" in mlir._platforms_with_donation,
    }))
"""


_EXPECTED = {
    "installed": ["ffi", "cuda lowering", "pallas gpu", "gpu callbacks", "gpu alias",
                  "donation", "persistent cache"],
    "device": "xla_gpu", "problems": [],
    "gpu_alias": ["pjrtkit"] * 4,
    "cholesky": True, "cholesky_rule": True,
    "cuda_branch": True, "cpu_branch": False,
    "donation": True,
}


def test_the_gpu_integration_lowers_like_cuda_and_refuses_host_callbacks():
  got = run_python(_GPU_INTEGRATION_ON_XLA_CPU, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))
  from jax_plugins.pjrtkit import _gpu_rules  # pylint: disable=g-import-not-at-top

  refusal = "refused: " + _gpu_rules.GPU_CALLBACKS_ERROR.format(what="jax.pure_callback")
  assert refusal.startswith("refused: jax.pure_callback is not supported on pjrtkit's xla_gpu "
                            "device: XLA:GPU's host-callback handler finds")
  assert got == {**_EXPECTED, "callback": "refused", "callback_reason": refusal[:80]}


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
