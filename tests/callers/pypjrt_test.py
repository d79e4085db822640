"""pypjrt 0.1.1 (PyPI), an independent PJRT client built against PJRT C API 0.114, computes
through pjrtkit: it sends the struct sizes of its own header, older than pjrtkit's."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pypjrt
import pytest

from tests.testing import plugin_env

# f32[4] -> f32[4]: x + 1.
_ADD_ONE = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<4xf32>
  %y = stablehlo.add %x, %c : tensor<4xf32>
  return %y : tensor<4xf32>
}"""

_F32 = 11  # PJRT_Buffer_Type_F32.


def _xla_cpu_plugin() -> Path:
  """The XLA:CPU plugin from the test's runfiles."""
  root = plugin_env.runfiles_root()
  for candidate in sorted((root.parent).glob("**/xla_cpu_pjrt.so")):
    return candidate.resolve()
  raise FileNotFoundError("xla_cpu_pjrt.so not in the runfiles")


@pytest.fixture(name="plugin")
def _plugin() -> pypjrt.Plugin:
  os.environ["PJRTKIT_DEVICE"] = "xla_cpu"
  os.environ["PJRTKIT_XLA_CPU_PLUGIN"] = str(_xla_cpu_plugin())
  return pypjrt.Plugin(str(plugin_env.plugin_library().resolve()))


def test_pypjrt_reads_the_plugins_version_and_slots(plugin: pypjrt.Plugin) -> None:
  assert repr(plugin).startswith("<Plugin pjrtkit_plugin.so api=0.")
  assert "(using ABI 0.114) slots=138" in repr(plugin)


def test_pypjrt_creates_a_client_and_computes(plugin: pypjrt.Plugin) -> None:
  with pypjrt.Client.create(plugin, options={"device_count": 2}) as client:
    with client.devices() as devices:
      assert len(devices) == 2
      executable = client.compile(_ADD_ONE)
      argument = client.buffer_from_host(np.arange(4, dtype=np.float32), _F32, [4], devices[0])
      (out,) = executable(argument)
      np.testing.assert_array_equal(
          np.frombuffer(bytes(out.to_host()), dtype=np.float32), [1.0, 2.0, 3.0, 4.0])
      # PJRT_Executable_GetCompileOptions (C API 0.87) returns the options it compiled with:
      # CompileOptionsProto{executable_build_options {num_replicas: 1, num_partitions: 1}}.
      assert executable.compile_options() == b"\x1a\x04\x20\x01\x28\x01"


if __name__ == "__main__":
  import sys  # pylint: disable=g-import-not-at-top

  sys.exit(pytest.main([__file__, "-v"] + sys.argv[1:]))
