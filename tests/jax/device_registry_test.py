"""The device registry: what the plugin library reports is what its build_info.json says, and what
the Python side chooses from.

The C++ registry (``xla_plugin/devices/registry``) reports itself as the plugin attribute
``pjrtkit_devices``; the build writes the same JSON into ``build_info.json`` beside the library,
which ``_device.registry()`` reads before JAX loads the library. A stale or foreign
``build_info.json`` (another build's) fails here.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from tests.testing.plugin_env import plugin_env, plugin_library, run_python, runfiles_root

sys.path.insert(0, str(runfiles_root() / "python"))
os.environ.setdefault("PJRTKIT_PLUGIN_LIBRARY", str(plugin_library()))

from jax_plugins.pjrtkit import _device  # noqa: E402  pylint: disable=g-import-not-at-top

# Reads PJRT_Plugin_Attributes through ctypes (pjrt_c_api.h's layout: PJRT_Api's fifth function
# pointer after the 40-byte header; PJRT_NamedValue is 56 bytes).
_ATTRIBUTES = r"""
import ctypes, json, sys
class NamedValue(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("name", ctypes.c_char_p), ("name_size", ctypes.c_size_t),
              ("type", ctypes.c_int), ("value", ctypes.c_int64), ("value_size", ctypes.c_size_t)]
class Args(ctypes.Structure):
  _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
              ("attributes", ctypes.POINTER(NamedValue)), ("num_attributes", ctypes.c_size_t)]
lib = ctypes.CDLL(sys.argv[1])
lib.GetPjrtApi.restype = ctypes.c_void_p
api = lib.GetPjrtApi()
slot = ctypes.c_void_p.from_address(api + 40 + 4 * 8).value
attributes_fn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(Args))(slot)
args = Args(struct_size=ctypes.sizeof(Args))
assert attributes_fn(ctypes.byref(args)) is None
out = {}
for i in range(args.num_attributes):
  v = args.attributes[i]
  name = v.name[:v.name_size].decode()
  if v.type == 0:  # PJRT_NamedValue_kString
    out[name] = ctypes.string_at(v.value, v.value_size).decode()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def reported() -> dict[str, str]:
  code = _ATTRIBUTES.replace("sys.argv[1]", repr(str(plugin_library())))
  return run_python(code, env=plugin_env(PJRTKIT_DEVICE="xla_cpu"))


def test_the_library_reports_the_registry_its_build_info_holds(reported):
  devices = json.loads(reported["pjrtkit_devices"])
  build_info = plugin_library().with_name("build_info.json")
  assert json.loads(build_info.read_text(encoding="utf-8"))["devices"] == devices
  assert _device.registry() == _device.parse_registry(devices)
  assert reported["pjrtkit_device"] == "xla_cpu"


def test_the_reference_devices_and_their_options(reported):
  devices = {d.name: d for d in _device.parse_registry(json.loads(reported["pjrtkit_devices"]))}
  assert _device.device_names()[:2] == ("xla_cpu", "xla_gpu")
  cpu, gpu = devices["xla_cpu"], devices["xla_gpu"]
  assert (cpu.runs_like, cpu.auto_priority, cpu.inner_plugin_option, cpu.inner_plugin_env) == (
      "xla_cpu", 10, "xla_cpu_plugin_path", "PJRTKIT_XLA_CPU_PLUGIN")
  assert cpu.options == ("device_count", "xla_cpu_plugin_path", "host_buffer_cache_mib",
                         "process_join_timeout_s")
  assert (gpu.runs_like, gpu.auto_priority, gpu.inner_plugin_option, gpu.inner_plugin_env) == (
      "xla_gpu", 20, "xla_gpu_plugin_path", "PJRTKIT_XLA_GPU_PLUGIN")
  assert gpu.options[0] == "xla_gpu_plugin_path"
  assert {"memory_fraction", "preallocate", "visible_devices", "allocator"} <= set(gpu.options)


def test_a_registered_third_device_is_chosen_by_the_same_rules():
  acme = _device.DeviceInfo("acme", "xla_cpu", "", 0, "xla_cpu_plugin_path",
                            "PJRTKIT_XLA_CPU_PLUGIN",
                            ("device_count", "xla_cpu_plugin_path", "acme_clock_mhz"))
  devices = [d for d in _device.registry() if d.name in ("xla_cpu", "xla_gpu")] + [acme]
  gpu = "/site/xla_cuda_plugin.so"
  choose = lambda options, env={}: _device.choose(options, env, True, gpu, devices).device  # noqa: E731
  assert choose({}) == "xla_gpu"
  assert choose({"device": "acme"}) == "acme"
  assert choose({}, {"PJRTKIT_DEVICE": "acme"}) == "acme"
  assert choose({"acme_clock_mhz": 5}) == "acme"
  assert choose({"device_count": 2}) == "xla_cpu"
  assert choose({"device_count": 2}, {"PJRTKIT_DEVICE": "acme"}) == "acme"
  assert choose({"device_count": 2}, {"PJRTKIT_DEVICE": "xla_gpu"}) == "xla_cpu"
  # The words of xla_plugin/devices/selection/selection_test.cc's same cases.
  with pytest.raises(ValueError) as bad:
    choose({"device": "tpu"})
  assert str(bad.value) == ("create option 'device' must be 'xla_cpu', 'xla_gpu', 'acme' or "
                            "'auto', got 'tpu'")
  with pytest.raises(ValueError) as owned:
    choose({"device": "xla_gpu", "device_count": 2})
  assert str(owned.value) == ("create option 'device_count' belongs to the xla_cpu and acme "
                              "devices, but option 'device' is 'xla_gpu'")
  with pytest.raises(ValueError) as split:
    choose({"acme_clock_mhz": 5, "memory_fraction": 0.5})
  assert str(split.value) == ("create options 'acme_clock_mhz' (acme device) and "
                              "'memory_fraction' (xla_gpu device) select different devices; pass "
                              "one device's options, or choose with option 'device'")


def test_a_device_without_an_inner_plugin_is_read_and_chosen():
  """A device with its own compiler and runtime: runs like "stablehlo", no inner plugin."""
  own = {"name": "own", "runs_like": "stablehlo", "summary": "its own compiler",
         "auto_priority": 30, "inner_plugin_option": "", "inner_plugin_env": "",
         "options": [{"name": "own_queue_depth", "type": "int64", "default": 4, "help": ""}]}
  without_keys = {k: v for k, v in own.items() if not k.startswith("inner_plugin")}
  expected = _device.DeviceInfo("own", "stablehlo", "its own compiler", 30, "", "",
                                ("own_queue_depth",))
  assert _device.parse_registry([own]) == (expected,)
  assert _device.parse_registry([without_keys]) == (expected,)
  assert expected.runs_like in _device.RUNS_LIKE
  devices = [d for d in _device.registry() if d.name in ("xla_cpu", "xla_gpu")] + [expected]
  choose = lambda options, env={}: _device.choose(options, env, False, None, devices)  # noqa: E731
  assert choose({"own_queue_depth": 2}) == _device.Choice("own", "create option 'own_queue_depth'")
  assert choose({}, {"PJRTKIT_DEVICE": "own"}).device == "own"
  assert choose({}).device == "own"  # The highest auto priority, always available.
  assert choose({"device_count": 2}).device == "xla_cpu"


def test_a_device_added_after_the_build_names_the_command_that_installs_it(tmp_path, monkeypatch):
  # A checkout where tools/new_device.py wrote xla_plugin/devices/acme, and a package whose
  # plugin (build_info.json) predates it: the refusal says what to run.
  devices = [d for d in _device.registry() if d.name in ("xla_cpu", "xla_gpu")]
  package = tmp_path / "python" / "jax_plugins" / "pjrtkit"
  package.mkdir(parents=True)
  (tmp_path / "WORKSPACE").write_text("")
  (tmp_path / "xla_plugin" / "devices" / "acme").mkdir(parents=True)
  (tmp_path / "xla_plugin" / "devices" / "acme" / "BUILD").write_text("")
  (tmp_path / "xla_plugin" / "devices" / "registry").mkdir()
  (tmp_path / "xla_plugin" / "devices" / "registry" / "devices.bzl").write_text(
      'DEVICES = [\n    "xla_cpu",\n    "acme",\n]\n')
  (tmp_path / "xla_plugin" / "devices" / "registry" / "BUILD").write_text("")
  monkeypatch.setattr(_device._paths, "_HERE", package)
  monkeypatch.delenv("PJRTKIT_PLUGIN_LIBRARY", raising=False)
  accepted = "'xla_cpu', 'xla_gpu' or 'auto'"
  tail = (f"; {tmp_path}/xla_plugin/devices/acme exists, but the plugin this package loads "
          f"({package}/pjrtkit_plugin.so) was built without it: run `bash tools/setup.sh` (it "
          "rebuilds the plugin with every registered device and installs it into .venv)")
  with pytest.raises(ValueError) as option:
    _device.choose({"device": "acme"}, {}, False, None, devices)
  assert str(option.value) == f"create option 'device' must be {accepted}, got 'acme'" + tail
  with pytest.raises(ValueError) as env:
    _device.choose({}, {"PJRTKIT_DEVICE": "acme"}, False, None, devices)
  assert str(env.value) == (f"environment variable PJRTKIT_DEVICE must be {accepted}, got "
                            "'acme'" + tail)
  # A name with no folder, a folder that is not a device, and a path get the accepted names only.
  for name in ("zeta", "registry", "../acme"):
    with pytest.raises(ValueError) as other:
      _device.choose({"device": name}, {}, False, None, devices)
    assert str(other.value) == f"create option 'device' must be {accepted}, got '{name}'"


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-v"] + sys.argv[1:]))

