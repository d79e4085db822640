"""jax.export on pjrtkit: export, serialize, deserialize in another process, call; cross-platform.

What holds (jax 0.11.2 .. 0.12.x), on the xla_cpu device, which lowers as JAX's ``cpu``:
* ``export(f)`` without ``platforms=`` exports for ``pjrtkit`` (programs there may hold
  pjrtkit's own custom calls, which jaxlib's cpu cannot run);
* artefacts for ``cpu`` (the JAX platform the device lowers as), for ``pjrtkit`` and for
  ``['cpu', 'pjrtkit']`` serialize, deserialize in a fresh process and run there with the values
  of the function run directly;
* an artefact for a platform the device does not lower as (``cuda``, ``tpu``) is refused with
  JAX's ValueError naming both platforms, unless exported with ``DisabledSafetyCheck.platform()``;
* on jaxlib's cpu, an artefact for ``pjrtkit`` only (the default one) is refused the same way.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_EXPORT = """
import json, sys, numpy as np, jax, jax.numpy as jnp
from jax import export
def f(x, y):
  return jnp.sin(x) * y + jnp.cumsum(x, axis=1), (x @ x.T).sum()
b = export.symbolic_shape('b')[0]
args = (jax.ShapeDtypeStruct((b, 3), jnp.float32), jax.ShapeDtypeStruct((b, 3), jnp.float32))
out = {{}}
for name, platforms, checks in {cases}:
  exp = export.export(jax.jit(f), platforms=platforms,
                      disabled_checks=[export.DisabledSafetyCheck.platform()] if checks else [])(*args)
  open(sys.argv[1] + '/' + name, 'wb').write(exp.serialize())
  out[name] = list(exp.platforms)
print(json.dumps({{"backend": jax.default_backend(), "platforms": out}}))
"""

_CALL = """
import json, sys, numpy as np, jax, jax.numpy as jnp
from jax import export
x = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
y = jnp.full((2, 3), 2.0, jnp.float32)
out = {}
for name in sys.argv[2:]:
  exp = export.deserialize(bytearray(open(sys.argv[1] + '/' + name, 'rb').read()))
  try:
    a, s = exp.call(x, y)
    out[name] = [np.asarray(a).tolist(), float(s), list(a.devices())[0].platform]
  except ValueError as e:
    out[name] = ["ValueError", str(e)]
# The reference: the same function traced and run directly on this backend.
a, s = jax.jit(lambda x, y: (jnp.sin(x) * y + jnp.cumsum(x, axis=1), (x @ x.T).sum()))(x, y)
out["direct"] = [np.asarray(a).tolist(), float(s), list(a.devices())[0].platform]
print(json.dumps(out))
"""


def _run(code: str, argv: list[str], platforms: str):
  with tempfile.TemporaryDirectory(prefix="export_test_") as tmp:
    script = os.path.join(tmp, "s.py")
    with open(script, "w") as f:
      f.write(code)
    return run_python(f"import runpy, sys\nsys.argv = {[script] + argv!r}\n"
                      f"runpy.run_path({script!r}, run_name='__main__')",
                      env=plugin_env(JAX_PLATFORMS=platforms))


@pytest.fixture(scope="module")
def exported_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
  directory = str(tmp_path_factory.mktemp("exported"))
  cases = [("default", None, False), ("pjrtkit", ["pjrtkit"], False), ("cpu", ["cpu"], False),
           ("both", ["cpu", "pjrtkit"], False), ("cuda", ["cuda"], False),
           ("tpu", ["tpu"], False), ("tpu_any", ["tpu"], True)]
  got = _run(_EXPORT.format(cases=repr(cases)), [directory], "pjrtkit,cpu")
  assert got == {"backend": "pjrtkit", "platforms": {
      "default": ["pjrtkit"], "pjrtkit": ["pjrtkit"], "cpu": ["cpu"], "both": ["cpu", "pjrtkit"],
      "cuda": ["cuda"], "tpu": ["tpu"], "tpu_any": ["tpu"]}}
  return directory


def _refusal(exported_for: str, used_on: str) -> list[str]:
  return ["ValueError", f"Function 'f' was exported for platforms '('{exported_for}',)' but it "
                        f"is used on '('{used_on}',)'."]


def test_exports_for_cpu_and_pjrtkit_run_in_a_fresh_process_with_same_values(exported_dir):
  got = _run(_CALL, [exported_dir, "default", "pjrtkit", "cpu", "both", "tpu_any"], "pjrtkit")
  x = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
  direct = got["direct"]
  assert direct[2] == "pjrtkit"
  assert direct[1] == float(sum(sum(a * b for a, b in zip(r1, r2)) for r1 in x for r2 in x))
  cumsum = [[0.0, 1.0, 3.0], [3.0, 7.0, 12.0]]
  assert len(direct[0]) == 2 and all(len(r) == 3 for r in direct[0])
  for r in range(2):
    for c in range(3):
      assert abs(direct[0][r][c] - cumsum[r][c] - 2.0 * math.sin(x[r][c])) < 1e-5
  # Bitwise the same as the direct run, for every export that may run here.
  for name in ("default", "pjrtkit", "cpu", "both", "tpu_any"):
    assert got[name] == direct, name


def test_exports_for_platforms_the_device_does_not_lower_as_are_refused(exported_dir):
  got = _run(_CALL, [exported_dir, "cuda", "tpu"], "pjrtkit")
  assert got["cuda"] == _refusal("cuda", "pjrtkit")
  assert got["tpu"] == _refusal("tpu", "pjrtkit")


def test_exports_for_cpu_run_on_jaxlibs_cpu_and_pjrtkit_only_ones_do_not(exported_dir):
  got = _run(_CALL, [exported_dir, "cpu", "both", "default"], "cpu")
  assert got["direct"][2] == "cpu"
  assert got["cpu"] == got["direct"]
  assert got["both"] == got["direct"]
  assert got["default"] == _refusal("pjrtkit", "cpu")


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
