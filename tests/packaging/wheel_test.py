"""The pjrtkit wheel installs into a fresh venv (no Bazel, no source tree) and JAX runs on it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.testing.plugin_env import plugin_library, runfiles_root

sys.path.insert(0, str(runfiles_root() / "tools"))
import build_wheel  # noqa: E402  pylint: disable=wrong-import-position

_CHECK = """
import json, jax, jax.numpy as jnp, jax_plugins.pjrtkit as p, pjrtkit
out = jax.pmap(lambda x: x + jax.lax.psum(x, 'i'), axis_name='i')(jnp.arange(jax.device_count()))
print(json.dumps({
    "platform": jax.devices()[0].platform,
    "n": jax.device_count(),
    "add": int(jnp.add(1, 1)),
    "jit": float(jax.jit(lambda x: x * 2)(1.)),
    "pmap": out.tolist(),
    "plugin_file": p.__file__,
    "api": list(pjrtkit.build_info().pjrt_c_api_version),
    "jaxlib": __import__("jaxlib").__version__,
    "kernels": float(__import__("pjrtkit.kernels", fromlist=["layer_norm"]).layer_norm(
        jnp.arange(4.0), None, None, implementation="native")[3]),
}))
"""


def _header_version() -> tuple[int, int]:
  """PJRT_API_MAJOR / MINOR of the pjrt_c_api.h the plugin was built with."""
  header = (runfiles_root().parent / "venv" / "include" / "xla" / "pjrt" / "c" /
            "pjrt_c_api.h").read_text(encoding="utf-8")
  major = int(re.search(r"^#define PJRT_API_MAJOR (\d+)", header, re.M).group(1))
  minor = int(re.search(r"^#define PJRT_API_MINOR (\d+)", header, re.M).group(1))
  return major, minor


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
  out = tmp_path_factory.mktemp("dist")
  return build_wheel.build(plugin_library(), plugin_library().with_name("build_info.json"), out)


def test_wheel_name_contents_and_metadata(wheel: Path):
  # Tagged with the newest glibc its libraries need: at or below jaxlib's manylinux_2_27.
  tag = re.fullmatch(r"pjrtkit-0\.1\.0-py3-none-manylinux_2_(\d+)_x86_64\.whl", wheel.name)
  assert tag is not None, wheel.name
  assert int(tag.group(1)) <= 27, wheel.name
  with zipfile.ZipFile(wheel) as zf:
    names = set(zf.namelist())
    meta = zf.read("pjrtkit-0.1.0.dist-info/METADATA").decode()
    info = json.loads(zf.read("jax_plugins/pjrtkit/build_info.json"))
    entry_points = zf.read("pjrtkit-0.1.0.dist-info/entry_points.txt").decode()
  assert {"jax_plugins/pjrtkit/__init__.py", "jax_plugins/pjrtkit/pjrtkit_plugin.so",
          "pjrtkit/__init__.py", "pjrtkit-0.1.0.dist-info/RECORD", "pjrtkit/kernels/__init__.py",
          "pjrtkit/kernels/core/op.py", "pjrtkit/kernels/native/pjrtkit_kernels.so"} <= names
  assert not any(n.endswith("_test.py") or "/testing/" in n for n in names)
  assert {"pjrtkit/kernels/dot_product_attention/mosaic/attention.py",
          "pjrtkit/kernels/dot_product_attention/benchmark.py",
          "pjrtkit/kernels/layer_norm/arg_specs.py"} <= names
  assert "jax_plugins/__init__.py" not in names  # jax_plugins stays a namespace package
  assert info["pjrt_c_api_version"] == list(_header_version())
  assert "Requires-Dist: jaxlib>=0.11.2,<=0.12.0.1" in meta
  assert "Requires-Dist: jax>=0.11.2,<=0.12.0.1" in meta
  assert "Platform: PJRT-C-API-%d.%d" % _header_version() in meta
  assert "pjrtkit = jax_plugins.pjrtkit" in entry_points


def test_library_sources_leave_out_tests_and_test_support():
  keep = build_wheel.is_library_source
  assert keep(Path("dot_product_attention/mosaic/attention.py"))
  assert keep(Path("testing.py"))  # pjrtkit.kernels.testing: tolerances users' tests share
  assert not keep(Path("dot_product_attention/mosaic/bwd_test.py"))
  assert not keep(Path("dot_product_attention/mosaic/testing/protocol_replay.py"))
  assert not keep(Path("dot_product_attention/mosaic/testing/__init__.py"))
  shipped = [p for p in (runfiles_root() / "kernels").rglob("*.py")
             if keep(p.relative_to(runfiles_root() / "kernels"))]
  assert not any("protocol_replay" in p.name for p in shipped) and len(shipped) > 20


def test_fresh_venv_install_runs_jax(wheel: Path, tmp_path: Path):
  base_python = getattr(sys, "_base_executable", sys.executable)
  venv = tmp_path / "venv"
  subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
  py = str(venv / "bin" / "python")
  lock = runfiles_root() / "requirements.lock"
  jaxlib_pin = next(l for l in lock.read_text().splitlines() if l.startswith("jaxlib=="))
  # The paired jaxlib wheel, downloaded beside ours as tools/build_wheels.sh does.
  subprocess.run([py, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                  "--only-binary=:all:", "-d", str(wheel.parent), jaxlib_pin], check=True)
  jaxlib_wheel = next(wheel.parent.glob("jaxlib-*.whl"))
  subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                  "-c", str(lock), str(wheel), str(jaxlib_wheel)], check=True)
  env = {k: v for k, v in os.environ.items()
         if not k.startswith(("PYTHON", "PJRTKIT", "JAX", "TEST_", "RUNFILES"))}
  env["JAX_PLATFORMS"] = "pjrtkit"
  proc = subprocess.run([py, "-I", "-c", _CHECK], cwd=tmp_path, env=env, capture_output=True,
                        text=True, check=False)
  assert proc.returncode == 0, proc.stderr
  got = json.loads(proc.stdout.strip().splitlines()[-1])
  assert got["platform"] == "pjrtkit"
  assert got["n"] == 4
  assert got["add"] == 2
  assert got["jit"] == 2.0
  assert got["pmap"] == [6, 7, 8, 9]
  assert got["plugin_file"].startswith(str(venv))
  assert got["api"] == list(_header_version())
  assert got["jaxlib"] == jaxlib_pin.split("==")[1]
  assert abs(got["kernels"] - 1.3416406) < 1e-5  # (3 - 1.5) / sqrt(1.25 + 1e-6), native kernel


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
