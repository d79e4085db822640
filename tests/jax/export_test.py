"""jax.export on pjrtkit: export, serialize, deserialize in another process, call; cross-platform.

What holds (jax 0.11.2 .. 0.12.x):
* a function exported for ``pjrtkit`` (the default platform when pjrtkit is the backend)
  serializes, deserializes in a fresh process and runs there with the same values;
* a function exported for ``cpu`` only is refused on pjrtkit with JAX's ValueError naming both
  platforms, unless it was exported with ``DisabledSafetyCheck.platform()``, and then it runs;
* a function exported for ``['cpu', 'pjrtkit']`` runs on both backends.
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
  script = os.path.join(tempfile.mkdtemp(prefix="export_test_"), "s.py")
  with open(script, "w") as f:
    f.write(code)
  return run_python(f"import runpy, sys\nsys.argv = {[script] + argv!r}\n"
                    f"runpy.run_path({script!r}, run_name='__main__')",
                    env=plugin_env(JAX_PLATFORMS=platforms))


@pytest.fixture(scope="module")
def exported_dir() -> str:
  directory = tempfile.mkdtemp(prefix="exported_")
  cases = [("default", None, False), ("pjrtkit", ["pjrtkit"], False), ("cpu", ["cpu"], False),
           ("cpu_any", ["cpu"], True), ("both", ["cpu", "pjrtkit"], False)]
  got = _run(_EXPORT.format(cases=repr(cases)), [directory], "pjrtkit,cpu")
  assert got == {"backend": "pjrtkit", "platforms": {
      "default": ["pjrtkit"], "pjrtkit": ["pjrtkit"], "cpu": ["cpu"], "cpu_any": ["cpu"],
      "both": ["cpu", "pjrtkit"]}}
  return directory


def test_exported_for_pjrtkit_runs_in_a_fresh_process_with_same_values(exported_dir):
  got = _run(_CALL, [exported_dir, "default", "pjrtkit", "both", "cpu_any"], "pjrtkit")
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
  for name in ("default", "pjrtkit", "both", "cpu_any"):
    assert got[name] == direct, name


def test_exported_for_cpu_only_is_refused_on_pjrtkit_with_a_clear_error(exported_dir):
  got = _run(_CALL, [exported_dir, "cpu"], "pjrtkit")
  assert got["cpu"] == ["ValueError",
                        "Function 'f' was exported for platforms '('cpu',)' but it is used on "
                        "'('pjrtkit',)'."]


def test_multi_platform_export_runs_on_cpu_too_and_pjrtkit_only_export_does_not(exported_dir):
  got = _run(_CALL, [exported_dir, "both", "pjrtkit"], "cpu")
  assert got["direct"][2] == "cpu"
  assert got["both"] == got["direct"]
  assert got["pjrtkit"] == ["ValueError",
                            "Function 'f' was exported for platforms '('pjrtkit',)' but it is "
                            "used on '('cpu',)'."]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
