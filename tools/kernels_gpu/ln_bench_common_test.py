"""tools.kernels_gpu.ln_bench_common on the CPU device: the Pallas Triton copy roof (Pallas
interpret mode) copies x exactly at tilings that do and do not divide its rows and refuses tiles
Triton cannot hold, and check_and_time checks roofs only for x's shape and dtype, counts a wrong
forward and a wrong roof, reports a refused one and times the correct ones."""

from __future__ import annotations

import sys

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core.interpret import pallas_interpret  # noqa: E402
from tools.kernels_gpu import ln_bench_common as common  # noqa: E402


@pytest.mark.parametrize("rows, block_rows", [(1000, 256), (512, 128), (3, 8)])
def test_triton_copy_returns_x_exactly(rows, block_rows):
  x = jax.random.normal(jax.random.key(1), (rows, 64), jnp.bfloat16)
  with pallas_interpret():
    y = jax.jit(lambda x: common.triton_copy(x, block_rows, 4))(x)
  assert y.dtype == x.dtype and y.shape == x.shape
  np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


@pytest.mark.parametrize("block_rows, channels", [(3, 64), (4, 48)])
def test_triton_copy_refuses_tiles_of_other_sizes_by_name(block_rows, channels):
  x = jnp.zeros((16, channels), jnp.bfloat16)
  with pytest.raises(pk.UnsupportedImplementationError,
                     match=f"block_rows x channels = {block_rows} x {channels} elements is not "
                           "a power of two"):
    common.triton_copy(x, block_rows, 4)


def test_roofs_are_a_negation_and_a_copy():
  x = jax.random.normal(jax.random.key(2), (300, 64), jnp.bfloat16)
  roofs = common.roofs(128, 8)
  assert list(roofs) == ["roof xla -x", "roof triton copy 128 rows 8 warps"]
  assert {phase for phase, _ in roofs.values()} == {"roof"}
  with pallas_interpret():
    negated, copied = (jax.jit(f)(x, None, None) for _, f in roofs.values())
  np.testing.assert_array_equal(np.asarray(negated), -np.asarray(x))
  np.testing.assert_array_equal(np.asarray(copied), np.asarray(x))


def test_check_and_time_checks_roofs_for_shape_and_counts_wrong_contenders(capsys):
  args = common.parse_args("doc", "64x128", "bfloat16", [])
  label, (x, s, o, dy), _ = next(common.cases(args))
  assert label == "64x128 params bfloat16"
  contenders = {
      "fwd xla": ("fwd", lambda x, s, o: pk.layer_norm(x, s, o, implementation="xla")),
      "fwd wrong": ("fwd", lambda x, s, o: x),
      "roof wrong": ("roof", lambda x, s, o: x[:32]),
      "roof refused": ("roof", lambda x, s, o: common.triton_copy(x, 3, 4)),
      **common.roofs(64, 4)}
  with pallas_interpret():
    failures = common.check_and_time("64x128", (x, s, o, dy), contenders, rounds=1)
  out = capsys.readouterr().out
  assert failures == 2
  assert "64x128 fwd wrong: WRONG" in out
  assert "64x128 roof wrong: WRONG a roof returns x's shape and dtype (64, 128) bfloat16" in out
  assert "64x128 roof refused: refused" in out
  for name in ("fwd xla", "roof xla -x", "roof triton copy 64 rows 4 warps"):
    assert f"64x128 {name}: " in out and " TB/s" in out.split(f"64x128 {name}: ")[1].split("\n")[0]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
