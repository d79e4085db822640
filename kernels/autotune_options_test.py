"""`pk.autotune`'s Tokamax options (ignore_cache, all_implementations, progress_bar, timeout,
max_workers) beside its own (iterations, method, compile_workers, keyword arguments of f), and
autotuning on JAX's own cpu backend, where XLA:CPU records no trace events for small programs."""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
import time
from pathlib import Path

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels import benchmarking  # noqa: E402
from pjrtkit.kernels.core import autotune as autotune_lib  # noqa: E402
from pjrtkit.kernels.core import autotune_cache  # noqa: E402
from pjrtkit.kernels.core import op as op_lib  # noqa: E402


@dataclasses.dataclass(frozen=True)
class BlockConfig:
  block: int = 4


class AutoSquare(pk.Op):
  """``(x * alpha) ** 2`` with two configs; ``implementation=None`` may take it."""

  op_name = "two_squares"
  implementation = "auto_sq"
  config_cls = BlockConfig

  def _get_autotuning_configs(self, spec):
    return (BlockConfig(4), BlockConfig(8))

  def forward(self, args, spec, config):
    (x,) = args
    return (x * spec.param("alpha")) ** 2, args


class ManualSquare(AutoSquare):
  """The same values; only calls that name it take it (``automatic = False``)."""

  implementation = "manual_sq"
  automatic = False


FAMILY = op_lib.Family("two_squares", {"auto_sq": AutoSquare(), "manual_sq": ManualSquare()},
                       rule=lambda spec, device, phase: ["auto_sq"])
op_lib.register_family(FAMILY)


def two_squares(x, implementation=None):
  """The two-implementation op, as an op's public function calls its family."""
  return FAMILY.call(AutoSquare().make_spec(x, alpha=2.0), (x,), implementation)


def _summary(result: pk.AutotuningResult) -> list[tuple[str, str, str, tuple[int, ...]]]:
  """(phase, requested, implementation, blocks of the candidates) per choice, sorted."""
  return sorted((c.phase, c.requested, c.implementation,
                 tuple(sorted(dict(cfg)["block"] for _, cfg, _ in c.candidates)))
                for c in result.choices)


def _progress_lines(err: str) -> list[str]:
  return [line for line in err.splitlines() if line.startswith("pk.autotune:")]


X = jnp.arange(3.0)


@pytest.fixture(autouse=True)
def _cache_off():
  """The autotune cache off (whatever PJRTKIT_KERNELS_AUTOTUNE says) unless a test turns it on."""
  with autotune_cache.using(enabled=False):
    yield


def test_progress_lines_then_a_tuned_call_is_left_out_unless_ignore_cache(capfd):
  f = jax.jit(two_squares)
  result = pk.autotune(f, X, iterations=1)
  assert _summary(result) == [("fwd", "auto", "auto_sq", (4, 8))]
  lines = _progress_lines(capfd.readouterr().err)
  assert lines[0] == "pk.autotune: [1/1] two_squares fwd implementation=auto: 2 candidates"
  assert re.fullmatch(r"pk\.autotune: 1 call phase tuned in \d+\.\d s", lines[1]), lines
  assert len(lines) == 2
  with result:  # Its choice is active: nothing left to tune (Tokamax's ignore_cache=False).
    again = pk.autotune(f, X, iterations=1)
    assert again.choices == ()
    lines = _progress_lines(capfd.readouterr().err)
    assert len(lines) == 1 and re.fullmatch(
        r"pk\.autotune: 0 call phases tuned in \d+\.\d s; 1 left out, already tuned or cached "
        r"\(ignore_cache=True measures them\)", lines[0]), lines
    forced = pk.autotune(f, X, iterations=1, ignore_cache=True, progress_bar=False)
    assert _summary(forced) == [("fwd", "auto", "auto_sq", (4, 8))]
    assert _progress_lines(capfd.readouterr().err) == []


def test_a_tuned_choice_for_another_request_does_not_count():
  result = pk.autotune(jax.jit(two_squares), X, iterations=1, progress_bar=False)
  f = jax.jit(functools.partial(two_squares, implementation="auto_sq"))
  with result:  # Tuned for implementation=None, not for calls that name "auto_sq".
    named = pk.autotune(f, X, iterations=1, progress_bar=False)
  assert _summary(named) == [("fwd", "auto_sq", "auto_sq", (4, 8))]


def test_all_implementations_adds_each_implementations_choice():
  f = jax.jit(two_squares)
  result = pk.autotune(f, X, iterations=1, all_implementations=True, progress_bar=False)
  # The call's own choice only from what implementation=None may take; "manual_sq" measured too,
  # as the choice of calls that name it.
  assert _summary(result) == [("fwd", "auto", "auto_sq", (4, 8)),
                              ("fwd", "auto_sq", "auto_sq", (4, 8)),
                              ("fwd", "manual_sq", "manual_sq", (4, 8))]
  g = jax.jit(functools.partial(two_squares, implementation="manual_sq"))
  named = pk.autotune(g, X, iterations=1, all_implementations=True, progress_bar=False)
  assert _summary(named) == [("fwd", "auto_sq", "auto_sq", (4, 8)),
                             ("fwd", "manual_sq", "manual_sq", (4, 8))]
  plain = pk.autotune(g, X, iterations=1, progress_bar=False)
  assert _summary(plain) == [("fwd", "manual_sq", "manual_sq", (4, 8))]


def test_keyword_arguments_still_reach_f_beside_the_options():
  f = jax.jit(lambda x, *, scale: two_squares(x * scale))
  result = pk.autotune(f, X, scale=jnp.float32(3.0), ignore_cache=True, progress_bar=False,
                       timeout=None, iterations=1)
  assert _summary(result) == [("fwd", "auto", "auto_sq", (4, 8))]
  # An argument of f named like an option: bound first.
  g = jax.jit(functools.partial(lambda x, timeout: two_squares(x * timeout),
                                timeout=jnp.float32(2.0)))
  assert len(pk.autotune(g, X, iterations=1, progress_bar=False).choices) == 1


def test_max_workers_is_compile_workers_and_bad_values_are_refused():
  f = jax.jit(two_squares)
  assert autotune_lib._workers(None, 3) == 3  # pylint: disable=protected-access
  assert autotune_lib._workers(2, 2) == 2  # pylint: disable=protected-access
  assert autotune_lib._timeout(float("inf")) is None  # pylint: disable=protected-access
  assert autotune_lib._timeout(2) == 2.0  # pylint: disable=protected-access
  assert len(pk.autotune(f, X, iterations=1, max_workers=2, progress_bar=False).choices) == 1
  cases = [
      (dict(max_workers=0), "max_workers must be a positive integer, got 0"),
      (dict(compile_workers=2, max_workers=3),
       "compile_workers=2 and max_workers=3 name the same setting (max_workers is Tokamax's "
       "name); give one"),
      (dict(timeout=0), "timeout must be None or a positive number of seconds, got 0"),
      (dict(timeout=True), "timeout must be None or a positive number of seconds, got True"),
  ]
  for kwargs, message in cases:
    with pytest.raises(ValueError) as refused:
      pk.autotune(f, X, progress_bar=False, **kwargs)
    assert str(refused.value) == message


class _FakeLowered:
  """A lowered candidate whose compile takes `seconds`."""

  def __init__(self, seconds: float) -> None:
    self.seconds = seconds
    self.finished = False

  def compile(self):
    time.sleep(self.seconds)
    self.finished = True
    return "compiled"


def test_timeout_leaves_out_candidates_not_compiled_in_time():
  # Workers: the slow compile is left out, and waited for (nothing compiles while timing).
  slow = _FakeLowered(2.0)
  items = [(_FakeLowered(0.0), 1.0), (slow, 1.0), ValueError("did not lower")]
  out = autotune_lib._compile_all(items, 3, timeout=0.5)  # pylint: disable=protected-access
  assert isinstance(out[0], benchmarking.BenchmarkRunner) and out[0].compiled == "compiled"
  assert isinstance(out[1], TimeoutError) and slow.finished
  assert str(out[1]) == "not compiled within timeout=0.5 s"
  assert str(out[2]) == "did not lower"
  # One worker (the caller's thread): candidates not started by the deadline are left out.
  late = _FakeLowered(0.0)
  out = autotune_lib._compile_all(  # pylint: disable=protected-access
      [(_FakeLowered(0.6), 1.0), (late, 1.0)], 1, timeout=0.5)
  assert out[0].compiled == "compiled" and isinstance(out[1], TimeoutError) and not late.finished
  out = autotune_lib._compile_all(items[:1], 1)  # pylint: disable=protected-access
  assert out[0].lowering_time_ms == 1.0


def test_a_timed_out_call_has_no_candidate(monkeypatch):
  monkeypatch.setattr(autotune_lib, "_compile_all",
                      lambda lowered, workers, timeout=None: [TimeoutError("slow")] * len(lowered))
  with pytest.raises(RuntimeError) as refused:
    pk.autotune(jax.jit(two_squares), X, timeout=1.0, progress_bar=False)
  assert str(refused.value).startswith("autotune: no candidate of two_squares (fwd) could be "
                                       "measured on platform ")


def test_the_autotune_cache_entry_counts_as_cached(tmp_path: Path, monkeypatch):
  """With the cache on, lowering f measures a missing entry (as any call does); autotune then
  leaves the call out, and with ignore_cache=True lowers with the cache off and measures it."""
  measured = []
  original = autotune_cache.measure

  def counting(*args, **kwargs):
    measured.append(args[1].op)
    return original(*args, **kwargs)

  monkeypatch.setattr(autotune_cache, "measure", counting)
  x = jnp.ones((4, 32))
  f = jax.jit(lambda x: pk.layer_norm(x, None, None))
  with autotune_cache.using(directory=tmp_path, iterations=1):
    result = pk.autotune(f, x, iterations=1, progress_bar=False)
    assert measured == ["layer_norm"] and result.choices == ()
    (entry,) = autotune_cache.entries(tmp_path)
    spec = pk.find_kernel_calls(f, x)[0].spec
    assert autotune_cache.cached_entry(spec, "fwd", pk.current_device()) == entry
    assert autotune_cache.cached_entry(spec, "fwd+bwd", pk.current_device()) is None
    forced = pk.autotune(f, x, iterations=1, ignore_cache=True, progress_bar=False)
    assert measured == ["layer_norm"]  # Lowering with the cache off measured nothing more.
    assert [(c.op, c.phase, c.requested) for c in forced.choices] == [
        ("layer_norm", "fwd", "auto")]


def test_autotune_on_jaxlibs_cpu_backend():
  """The audit's call: layer norm's gradient, 8x16, on JAX's own cpu device; method=None falls
  back to the wall clock where XLA:CPU's trace has no device events."""
  x, scale = jnp.ones((8, 16)), jnp.ones((16,))

  def loss(x, scale):
    return jnp.sum(pk.layer_norm(x, scale=scale, offset=None, implementation=None))

  with jax.default_device(jax.devices("cpu")[0]):
    result = pk.autotune(jax.jit(jax.grad(loss)), x, scale, progress_bar=False)
  assert result.device_kind == "cpu"
  assert sorted((c.op, c.phase, c.requested, c.implementation) for c in result.choices) == [
      ("layer_norm", "bwd", "auto", "xla"), ("layer_norm", "fwd", "auto", "xla")]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
