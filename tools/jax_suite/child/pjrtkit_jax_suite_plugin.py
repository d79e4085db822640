"""pytest plugin loaded into every child run of tools/jax_suite (`-p pjrtkit_jax_suite_plugin`).

It runs inside the interpreter under test (any JAX release), so it imports nothing from the tool.
Driven by environment variables the runner sets:

  PJRTKIT_JAX_SUITE_INFO      path: JSON written after backend start-up (jax/jaxlib versions,
                              default backend, device count, jtu.device_under_test()).
  PJRTKIT_JAX_SUITE_LOG       path: JSON lines, one per test start and per test phase report, so
                              a crash or a timeout still leaves per-test results behind.
  PJRTKIT_JAX_SUITE_BACKEND   the platform `jax.default_backend()` must return; the session stops
                              with a usage error (exit code 4) when it does not.
  PJRTKIT_JAX_SUITE_DEVICES   the device count the default backend must have (optional).
  PJRTKIT_JAX_TEST_DUT        value for JAX's `jax_test_dut` flag (what `jtu.device_under_test()`
                              returns); unset leaves JAX's default, the default backend's platform.
  PJRTKIT_JAX_SUITE_DESELECT  path: node ids (one a line) to leave out, e.g. a test that crashed
                              the interpreter in an earlier attempt and the tests already run.
  PJRTKIT_JAX_SUITE_DIRECT    a platform name: register OpenXLA's XLA:CPU PJRT plugin (the one
                              pjrtkit's reference device wraps, from the `xla-cpu-pjrt` package)
                              directly under that name with 4 devices, so a failure can be told
                              apart as pjrtkit's own or the inner plugin's.

The backends are started in `pytest_configure`, before collection, so start-up log lines and
warnings (JAX warns that an unknown platform is experimental) do not land inside a test under the
`filterwarnings = error` setting of JAX's pyproject.toml, exactly as for jaxlib's cpu.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import pytest


def _append(record: dict[str, Any]) -> None:
  path = os.environ.get("PJRTKIT_JAX_SUITE_LOG")
  if not path:
    return
  with open(path, "a", encoding="utf-8") as f:
    f.write(json.dumps(record) + "\n")
    f.flush()


def _register_direct_xla_cpu(platform: str) -> None:
  import importlib.util  # pylint: disable=g-import-not-at-top
  from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top

  spec = importlib.util.find_spec("xla_plugins.xla_cpu_pjrt")
  if spec is None or not spec.submodule_search_locations:
    raise pytest.UsageError("PJRTKIT_JAX_SUITE_DIRECT needs the xla-cpu-pjrt package")
  library = os.path.join(list(spec.submodule_search_locations)[0], "xla_cpu_pjrt.so")
  xla_bridge.register_plugin(platform, priority=400, library_path=library,
                             options={"cpu_device_count": 4})


def _write_info(info: dict[str, Any]) -> None:
  path = os.environ.get("PJRTKIT_JAX_SUITE_INFO")
  if path:
    with open(path, "w", encoding="utf-8") as f:
      json.dump(info, f, indent=1)


_INFO: dict[str, Any] = {}


def pytest_configure(config: pytest.Config) -> None:
  """Starts JAX's backends and checks the default backend and its device count.

  Does not import `jax._src.test_util`: it binds `sys.stdout` at import (`capture_stdout =
  partial(_capture_output, sys.stdout)`), and pytest's capture is suspended here, so every test
  reading captured output would see nothing; `pytest_collectstart` imports it under the capture.
  `jax_test_dut` also goes into sys.argv, for modules that parse absl flags.
  """
  import jax  # pylint: disable=g-import-not-at-top
  import jaxlib  # pylint: disable=g-import-not-at-top

  direct = os.environ.get("PJRTKIT_JAX_SUITE_DIRECT")
  if direct:
    _register_direct_xla_cpu(direct)
  dut = os.environ.get("PJRTKIT_JAX_TEST_DUT")
  if dut:
    # JAX's test modules call jax.config.parse_flags_with_absl() at import, which reads the
    # `--jax...` arguments of sys.argv: the same flag an absltest run takes on its command line.
    sys.argv.append(f"--jax_test_dut={dut}")
  info = _INFO
  info.update({
      "jax": jax.__version__,
      "jaxlib": jaxlib.__version__,
      "jax_platforms": os.environ.get("JAX_PLATFORMS", ""),
      "jax_test_dut_flag": os.environ.get("PJRTKIT_JAX_TEST_DUT", ""),
  })
  try:
    info["default_backend"] = jax.default_backend()
    info["device_count"] = jax.device_count()
    info["devices"] = [str(d) for d in jax.devices()]
    backends = jax._src.xla_bridge.backends()  # pylint: disable=protected-access
    info["backends"] = sorted(backends)
    default = jax._src.xla_bridge.get_backend()  # pylint: disable=protected-access
    # The registered name, which differs from the platform for XLA:CPU loaded directly ("cpu").
    info["default_backend_name"] = next(
        (name for name, b in backends.items() if b is default), info["default_backend"])
  except Exception as e:  # pylint: disable=broad-except
    info["error"] = f"{type(e).__name__}: {e}"
  _write_info(info)
  if "error" in info:
    raise pytest.UsageError(f"JAX backends failed to start: {info['error']}")
  want = os.environ.get("PJRTKIT_JAX_SUITE_BACKEND")
  if want and want not in (info["default_backend"], info["default_backend_name"]):
    raise pytest.UsageError(
        f"jax.default_backend() is {info['default_backend']!r} (registered as "
        f"{info['default_backend_name']!r}), expected {want!r}")
  want_devices = os.environ.get("PJRTKIT_JAX_SUITE_DEVICES")
  if want_devices and info["device_count"] != int(want_devices):
    raise pytest.UsageError(
        f"jax.device_count() is {info['device_count']}, expected {want_devices}")


def pytest_collectstart(collector: pytest.Collector) -> None:
  """Sets `jax_test_dut` before the first test module is imported.

  Some of JAX's test files never call `jax.config.parse_flags_with_absl()` at import
  (mesh_utils_test.py; lobpcg_test.py only under `__main__`), so the flag in sys.argv would not
  reach them. `jax._src.test_util` is imported here with pytest's global capture resumed, the
  stream the test modules would import it under (it binds `sys.stdout` at import), and the flag
  set directly (a module that parses sys.argv sets the same value).
  """
  dut = os.environ.get("PJRTKIT_JAX_TEST_DUT")
  if not dut or _INFO.get("jax_test_dut_set"):
    return
  import jax  # pylint: disable=g-import-not-at-top

  capture = collector.config.pluginmanager.getplugin("capturemanager")
  if capture is not None:
    capture.resume_global_capture()
  try:
    from jax._src import test_util  # pylint: disable=g-import-not-at-top,unused-import
  finally:
    if capture is not None:
      capture.suspend_global_capture()
  jax.config.update("jax_test_dut", dut)
  _INFO["jax_test_dut_set"] = True


def pytest_collection_finish(session: pytest.Session) -> None:
  """Records what `jtu.device_under_test()` returns, now that the test modules imported it."""
  from jax._src import test_util as jtu  # pylint: disable=g-import-not-at-top

  _INFO["device_under_test"] = jtu.device_under_test()
  _write_info(_INFO)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
  path = os.environ.get("PJRTKIT_JAX_SUITE_DESELECT")
  if not path or not os.path.exists(path):
    return
  with open(path, encoding="utf-8") as f:
    drop = {line.strip() for line in f if line.strip()}
  keep = [item for item in items if item.nodeid not in drop]
  gone = [item for item in items if item.nodeid in drop]
  if gone:
    config.hook.pytest_deselected(items=gone)
    items[:] = keep


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
  _append({"event": "start", "nodeid": nodeid, "t": time.time()})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
  message = ""
  if report.outcome == "skipped" and isinstance(report.longrepr, tuple):
    message = str(report.longrepr[2])
  elif report.failed:
    # The raw exception text (the runner keeps its first informative line).
    crash = getattr(report.longrepr, "reprcrash", None)
    message = str(crash.message if crash is not None else report.longreprtext)
  _append({"event": "report", "nodeid": report.nodeid, "when": report.when,
           "outcome": report.outcome, "message": message[:2000],
           "duration": report.duration})
