"""pjrtkit.kernels' on-first-use autotune cache on pjrtkit's CPU device: its key, settings, files
(persistence, atomic writes, corrupt and foreign files, the entry bound, clearing), that disabled
is today's choice, and choices made by measurement with fixed and real times."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import threading
import warnings
from pathlib import Path

from pjrtkit.kernels import testing

testing.setup_environment()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
import pytest  # noqa: E402

from pjrtkit import _version  # noqa: E402
from pjrtkit import kernels as pk  # noqa: E402
from pjrtkit.kernels.core import autotune_cache as cache  # noqa: E402
from pjrtkit.kernels.core import op as op_lib  # noqa: E402
from pjrtkit.kernels.core.spec import Spec  # noqa: E402
from pjrtkit.kernels.dot_product_attention import api as attention_api  # noqa: E402
from pjrtkit.kernels.dot_product_attention import base as attention_base  # noqa: E402

CPU = pk.DeviceInfo(platform="pjrtkit", kind="pjrtkit_cpu", compute_capability=None)
Q_SHAPE, KV_SHAPE = (1, 64, 4, 32), (1, 64, 2, 32)


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
  """Each test: its own cache directory, disabled by default, nothing remembered."""
  for name in (cache.ENV_ENABLE, cache.ENV_DIR, cache.ENV_MAX_ENTRIES, cache.ENV_ITERATIONS):
    monkeypatch.delenv(name, raising=False)
  previous = cache.configure(enabled=False, directory=tmp_path / "cache", iterations=1,
                             max_entries=cache.DEFAULT_MAX_ENTRIES)
  cache.clear()
  yield
  cache.clear()
  cache.configure(enabled=previous.enabled, directory=previous.directory,
                  max_entries=previous.max_entries, iterations=previous.iterations)


def _attention_args(dtype=jnp.float32):
  q = jax.random.normal(jax.random.key(0), Q_SHAPE, dtype)
  kv = jax.random.normal(jax.random.key(1), KV_SHAPE, dtype)
  return q, kv


def _attention_spec(dtype=jnp.float32, causal=False) -> Spec:
  q, kv = _attention_args(dtype)
  return attention_base.make_spec(q, kv, kv, None, None, causal, None)


@pytest.fixture(name="chosen")
def _chosen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, tuple, str, tuple, str]]:
  """Records what `Family.cached_choices` returns: (mode, fwd impl, fwd config, fwd source, bwd
  impl, bwd config, bwd source)."""
  seen = []
  original = op_lib.Family.cached_choices

  def spy(self, spec, device, mode, fwd, bwd):
    f, b = original(self, spec, device, mode, fwd, bwd)
    seen.append((mode, f.op.implementation, op_lib.config_to_json(f.config), f.source,
                 b.op.implementation, op_lib.config_to_json(b.config), b.source))
    return f, b

  monkeypatch.setattr(op_lib.Family, "cached_choices", spy)
  return seen


def _fixed_timer(times: dict[tuple[str, str, tuple], float], calls: list | None = None):
  def timer(runner, args, phase, name, config, iterations, method):
    del runner, args, iterations, method
    key = (phase, name, op_lib.config_to_json(config))
    if calls is not None:
      calls.append(key)
    return times.get(key, 100.0)
  return timer


# --- key and settings ---------------------------------------------------------------------------

def test_key_names_versions_device_op_mode_and_the_calls_shapes():
  spec = _attention_spec(jnp.bfloat16, causal=True)
  key = cache.cache_key(CPU, spec, "fwd+bwd")
  assert key == {
      "format": 1, "library_version": _version.__version__, "jax": jax.__version__,
      "jaxlib": jaxlib.__version__, "platform": "pjrtkit", "device_kind": "pjrtkit_cpu",
      "op": "dot_product_attention", "mode": "fwd+bwd", "matmul_precision": None,
      "spec": {"op": "dot_product_attention",
               "args": [["query", [[1, 64, 4, 32], "bfloat16"]],
                        ["key", [[1, 64, 2, 32], "bfloat16"]],
                        ["value", [[1, 64, 2, 32], "bfloat16"]], ["bias", None], ["mask", None]],
               "params": {"is_causal": True, "scale": 1 / 32 ** 0.5}}}
  text = cache.key_text(key)
  assert text == json.dumps(key, sort_keys=True, separators=(",", ":"))
  assert cache.digest(key) == hashlib.sha256(text.encode()).hexdigest()
  assert cache.entry_path(Path("/d"), key) == Path(f"/d/{cache.digest(key)}.json")
  others = [cache.cache_key(CPU, spec, "fwd"),
            cache.cache_key(CPU, _attention_spec(jnp.bfloat16, causal=False), "fwd+bwd"),
            cache.cache_key(CPU, _attention_spec(jnp.float32, causal=True), "fwd+bwd"),
            cache.cache_key(dataclasses.replace(CPU, kind="other"), spec, "fwd+bwd")]
  with jax.default_matmul_precision("highest"):
    others.append(cache.cache_key(CPU, spec, "fwd+bwd"))
  assert others[-1]["matmul_precision"] == "highest"
  assert len({cache.digest(k) for k in [key, *others]}) == 6
  with pytest.raises(ValueError, match=r"mode must be one of \('fwd', 'fwd\+bwd'\), got 'bwd'"):
    cache.cache_key(CPU, spec, "bwd")


def test_settings_from_the_environment(monkeypatch):
  assert cache.settings_from_env() == cache.Settings(False, "~/.cache/pjrtkit/kernels-autotune",
                                                     1024, 5)
  monkeypatch.setenv(cache.ENV_ENABLE, "1")
  monkeypatch.setenv(cache.ENV_DIR, "/x/y")
  monkeypatch.setenv(cache.ENV_MAX_ENTRIES, "7")
  monkeypatch.setenv(cache.ENV_ITERATIONS, "3")
  assert cache.settings_from_env() == cache.Settings(True, "/x/y", 7, 3)
  monkeypatch.setenv(cache.ENV_ENABLE, "0")
  monkeypatch.setenv(cache.ENV_MAX_ENTRIES, "many")
  with pytest.warns(cache.AutotuneCacheWarning,
                    match="PJRTKIT_KERNELS_AUTOTUNE_MAX_ENTRIES='many' is not a positive integer; "
                          "using 1024"):
    assert cache.settings_from_env() == cache.Settings(False, "/x/y", 1024, 3)
  with pytest.raises(ValueError, match="max_entries must be a positive integer, got 0"):
    cache.configure(max_entries=0)
  assert cache.Settings(directory="~/c").path == Path(os.path.expanduser("~/c"))


def test_active_only_when_enabled_and_not_interpreting():
  assert not cache.active()
  with cache.using():
    assert cache.active()
    with pk.pallas_interpret():
      assert not cache.active()
  assert not cache.active()


def test_tolerances_follow_the_calls_dtype():
  assert cache._dtype(_attention_spec(jnp.bfloat16)) == "bfloat16"  # pylint: disable=protected-access
  assert (cache.tolerance("bfloat16", "fwd"), cache.tolerance("float16", "grad"),
          cache.tolerance("float64", "fwd")) == (2e-2, 2e-2, 2e-5)
  want = jnp.array([4.0, 0.0])
  assert cache.mismatch([jnp.array([4.07, 0.0])], [want], "bfloat16", "fwd") is None
  assert cache.mismatch([jnp.array([4.1, 0.0])], [want], "bfloat16", "fwd") == (
      "output 0: max error 0.1 > 0.08 (bfloat16 fwd tolerance)")
  assert cache.mismatch([want, want], [want], "float32", "fwd") == (
      "2 outputs, the reference has 1")
  assert cache.mismatch([jnp.array([jnp.nan, 0.0])], [want], "float32", "fwd") == (
      "output 0 is not finite")
  assert cache.mismatch([jnp.zeros((3,))], [want], "float32", "fwd") == (
      "output 0 has shape (3,), the reference (2,)")
  # Empty leaves agree; the second leaf is checked too, in bfloat16 against a float32 reference.
  got = [jnp.zeros((0, 2)), jnp.array([100.0, -3.0], jnp.bfloat16)]
  assert cache.mismatch(got, [jnp.zeros((0, 2)), jnp.array([101.0, -3.0])], "bfloat16",
                        "fwd") is None
  assert cache.mismatch(got, [jnp.zeros((0, 2)), jnp.array([103.0, -3.0])], "bfloat16",
                        "fwd") == "output 1: max error 3 > 2.06 (bfloat16 fwd tolerance)"
  # NumPy 64-bit integers keep their magnitude; arrays on another device are compared where
  # `got` is.
  assert cache.mismatch([np.array([2**40])], [np.array([0])], "float32", "fwd") == (
      "output 0: max error 1.1e+12 > 2e-05 (float32 fwd tolerance)")
  devices = jax.devices()
  if len(devices) > 1:
    a = jax.device_put(jnp.array([1.0, 2.0]), devices[0])
    b = jax.device_put(jnp.array([1.0, 2.5]), devices[1])
    assert cache.mismatch([a], [b], "float32", "fwd") == (
        "output 0: max error 0.5 > 5e-05 (float32 fwd tolerance)")


# --- disabled: today's choice ------------------------------------------------------------------

def test_disabled_is_todays_choice(monkeypatch, chosen, tmp_path):
  def fail(*a, **k):
    raise AssertionError("the cache measured while disabled")

  monkeypatch.setattr(cache, "measure", fail)
  ran = []
  original_run = op_lib.run

  def spy_run(spec, args, requested, fwd, bwd, refine=None, elsewhere=None):
    ran.append((fwd.op.implementation, fwd.source, bwd.op.implementation, bwd.source, refine))
    return original_run(spec, args, requested, fwd, bwd, refine, elsewhere)

  monkeypatch.setattr(op_lib, "run", spy_run)
  q, kv = _attention_args()
  jax.grad(lambda q: jnp.sum(pk.dot_product_attention(q, kv, kv, is_causal=True)))(q)
  x = jnp.ones((8, 64), jnp.float32)
  jax.jit(lambda x: pk.layer_norm(x, jnp.ones((64,)), None))(x)
  # The rule's choices on pjrtkit's CPU device (attention of 2**14 logits: xla, below native's
  # 2**15), no refinement, nothing written.
  assert ran == [("xla", "rule", "xla", "rule", None),
                 ("native", "rule", "native", "rule", None)]
  assert chosen == []
  assert not (tmp_path / "cache").exists()


def test_enabled_keeps_tuned_choices_and_skips_measuring_them(monkeypatch, chosen):
  def fail(*a, **k):
    raise AssertionError("measured a tuned call")

  monkeypatch.setattr(cache, "measure", fail)
  spec = _attention_spec()
  tuned = pk.AutotuningResult("pjrtkit_cpu", tuple(
      pk.TunedChoice("dot_product_attention", phase, "auto", spec, "xla", (), 1.0)
      for phase in ("fwd", "bwd")))
  q, kv = _attention_args()
  with cache.using(), tuned:
    jax.grad(lambda q: jnp.sum(pk.dot_product_attention(q, kv, kv)))(q)
  assert chosen == []


# --- choices made by measurement ----------------------------------------------------------------

def test_attention_choice_by_fixed_times_per_mode_and_phase(monkeypatch, chosen, tmp_path):
  times = {("fwd", "xla_chunked", (("chunk_size", 128),)): 1.0,
           ("fwd", "native", (("block_k", 128), ("block_q", 32))): 2.0,
           ("bwd", "xla", ()): 0.5,
           ("bwd", "native", (("block_k", 64), ("block_q", 64))): 0.75}
  calls: list = []  # 2**14 logits: the rule's choice is xla.
  monkeypatch.setattr(cache, "time_candidate", _fixed_timer(times, calls))
  q, kv = _attention_args()
  with cache.using():
    out = jax.jit(lambda q: pk.dot_product_attention(q, kv, kv, is_causal=True))(q)
    grad = jax.jit(jax.grad(lambda q: jnp.sum(pk.dot_product_attention(q, kv, kv, is_causal=True))))(q)
  assert chosen == [
      ("fwd", "xla_chunked", (("chunk_size", 128),), "cache", "xla", (), "rule"),
      ("fwd+bwd", "xla_chunked", (("chunk_size", 128),), "cache", "xla", (), "cache")]
  ref = attention_base.reference(q, kv, kv, is_causal=True)
  testing.assert_close(out, ref, "float32", "fwd")
  testing.assert_close(grad, jax.grad(lambda q: jnp.sum(attention_base.reference(q, kv, kv, is_causal=True)))(q),
                       "float32", "grad")
  # Every serving (implementation, config) timed once per phase: 12 per phase, 3 phases.
  assert len(calls) == len(set(calls)) + 12 and len(calls) == 36
  files = sorted((tmp_path / "cache").glob("*.json"))
  assert [cache.Entry.loads(p.read_text()).key["mode"] for p in files] == sorted(
      ["fwd", "fwd+bwd"], key=lambda m: cache.digest(cache.cache_key(CPU, _attention_spec(causal=True), m)))
  entry = cache.read_entry(tmp_path / "cache", cache.cache_key(CPU, _attention_spec(causal=True), "fwd+bwd"))
  assert entry.choices["bwd"].implementation == "xla"
  assert entry.choices["bwd"].candidates[:2] == (
      ("xla", (), 0.5), ("native", (("block_k", 64), ("block_q", 64)), 0.75))
  assert len(entry.choices["fwd"].candidates) == 12


@dataclasses.dataclass(frozen=True)
class _Block:
  block: int = 1


class _Doubling(pk.Op):
  """2x, correct (the reference's output)."""

  op_name = "cache_test_double"
  implementation = "xla"
  config_cls = _Block

  def _get_autotuning_configs(self, spec):
    return (_Block(1), _Block(2))

  def forward(self, args, spec, config):
    (x,) = args
    return x * 2.0, args


class _Fast(_Doubling):
  implementation = "fast"


class _Wrong(_Doubling):
  """3x: outside the tolerance, forward and gradient."""

  implementation = "wrong"

  def forward(self, args, spec, config):
    (x,) = args
    return x * 3.0, args


class _Slow(_Doubling):
  """The reference, slowly: 2x after a hundred 256x256 matmuls whose result enters as zero."""

  def forward(self, args, spec, config):
    (x,) = args
    m = jnp.full((256, 256), 1.0 / 256, jnp.float32) * (1.0 + 0.0 * x.reshape(-1)[0])
    z = jax.lax.fori_loop(0, 100, lambda i, z: z @ m + 1.0, jnp.ones((256, 256), jnp.float32))
    return x * 2.0 + 0.0 * jnp.sum(z), args


class _PallasDoubling(_Doubling):
  """2x through a Pallas kernel (interpreted) that reads its grid position, as the GPU kernels
  do: ``program_id`` has no evaluation rule, so this runs only when traced as a kernel."""

  implementation = "pallas"

  @staticmethod
  def _double(x):
    def kernel(x_ref, o_ref):
      o_ref[...] = x_ref[...] * 2.0 + 0.0 * pl.program_id(0).astype(x_ref.dtype)

    flat = x.reshape(-1)
    y = pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(flat.shape, flat.dtype),
                       grid=(2,), in_specs=[pl.BlockSpec((flat.size // 2,), lambda i: (i,))],
                       out_specs=pl.BlockSpec((flat.size // 2,), lambda i: (i,)),
                       interpret=True)(flat)
    return y.reshape(x.shape)

  def forward(self, args, spec, config):
    return self._double(args[0]), args

  def backward(self, residuals, dout, spec, config):
    return (self._double(dout),)


def _family(*ops: pk.Op, rule: tuple[str, ...]) -> op_lib.Family:
  fam = op_lib.Family("cache_test_double", {o.implementation: o for o in ops},
                      rule=lambda s, d, p: list(rule))
  op_lib.register_family(fam)
  return fam


def _call(fam: op_lib.Family, x: jax.Array) -> jax.Array:
  return fam.call(Spec.make(fam.name, {"x": x}, {}), (x,), None)


def test_fastest_matching_the_reference_wins_and_is_persisted(monkeypatch, chosen, tmp_path):
  fam = _family(_Doubling(), _Fast(), _Wrong(), rule=("fast",))
  one, two = (("block", 1),), (("block", 2),)
  times = {("fwd", "xla", one): 3.0, ("fwd", "xla", two): 3.5, ("fwd", "fast", one): 2.0,
           ("fwd", "fast", two): 1.5, ("fwd", "wrong", one): 0.1, ("fwd", "wrong", two): 0.1,
           ("bwd", "xla", one): 1.0, ("bwd", "xla", two): 1.25, ("bwd", "fast", one): 2.0,
           ("bwd", "fast", two): 2.5, ("bwd", "wrong", one): 0.1, ("bwd", "wrong", two): 0.1}
  calls: list = []
  monkeypatch.setattr(cache, "time_candidate", _fixed_timer(times, calls))
  x = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
  with cache.using():
    y = jax.jit(lambda x: _call(fam, x))(x)
    g = jax.jit(jax.grad(lambda x: jnp.sum(_call(fam, x))))(x)
  assert y.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
  assert g.tolist() == [[2.0] * 3] * 2
  assert chosen == [("fwd", "fast", two, "cache", "fast", one, "rule"),
                    ("fwd+bwd", "fast", two, "cache", "xla", one, "cache")]
  assert all(name != "wrong" for _, name, _ in calls)  # Rejected before timing.
  spec = Spec.make(fam.name, {"x": x}, {})
  directory = tmp_path / "cache"
  entry = cache.read_entry(directory, cache.cache_key(CPU, spec, "fwd+bwd"))
  assert entry == cache.Entry(cache.cache_key(CPU, spec, "fwd+bwd"), {
      "fwd": cache.PhaseChoice("fast", two, 1.5, (("fast", two, 1.5), ("fast", one, 2.0),
                                                  ("xla", one, 3.0), ("xla", two, 3.5))),
      "bwd": cache.PhaseChoice("xla", one, 1.0, (("xla", one, 1.0), ("xla", two, 1.25),
                                                 ("fast", one, 2.0), ("fast", two, 2.5)))})
  assert cache.entry_path(directory, entry.key).read_text() == entry.dumps()
  # Another process (nothing in memory) reads the files and measures nothing.
  cache._MEMORY.clear()  # pylint: disable=protected-access
  del calls[:]
  del chosen[:]
  with cache.using():
    jax.jit(lambda x: _call(fam, x))(x)
    jax.jit(jax.grad(lambda x: jnp.sum(_call(fam, x))))(x)
  assert calls == []
  assert chosen == [("fwd", "fast", two, "cache", "fast", one, "rule"),
                    ("fwd+bwd", "fast", two, "cache", "xla", one, "cache")]
  # Clearing forgets the files and this process's entries: the next call measures again.
  assert cache.clear() == 2
  assert list(directory.iterdir()) == []
  with cache.using():
    jax.jit(lambda x: _call(fam, x))(x)
  assert len(calls) == 4


class _Manual(_Fast):
  """Fast, but not for implementation=None (`Op.automatic`)."""

  implementation = "manual"
  automatic = False


def test_an_implementation_that_is_not_automatic_serves_only_calls_that_name_it(monkeypatch,
                                                                                chosen):
  fam = _family(_Doubling(), _Manual(), rule=("manual", "xla"))
  spec_x = jnp.ones((2, 3), jnp.float32)
  spec = Spec.make(fam.name, {"x": spec_x}, {})
  assert fam.supported(spec, CPU) == ["xla"]
  # The rule names it first: None skips it.
  assert fam.choose(spec, None, "fwd", CPU).op.implementation == "xla"
  assert fam.choose(spec, "manual", "fwd", CPU).op.implementation == "manual"
  # Autotuning for None neither measures it nor takes a cached choice of it.
  times = {("fwd", "xla", (("block", 1),)): 2.0, ("fwd", "xla", (("block", 2),)): 1.0}
  calls: list = []
  monkeypatch.setattr(cache, "time_candidate", _fixed_timer(times, calls))
  with cache.using():
    y = jax.jit(lambda x: _call(fam, x))(spec_x)
  assert y.tolist() == [[2.0] * 3] * 2
  assert {name for _, name, _ in calls} == {"xla"}
  assert chosen[-1][:4] == ("fwd", "xla", (("block", 2),), "cache")
  stale = cache.Entry(cache.cache_key(CPU, spec, "fwd"), {
      "fwd": cache.PhaseChoice("manual", (("block", 1),), 0.5, ())})
  fwd = op_lib.Choice(_Doubling(), _Block(1), "rule")
  monkeypatch.setattr(cache, "lookup_or_measure", lambda *a, **k: stale)
  assert fam.cached_choices(spec, CPU, "fwd", fwd, fwd)[0].op.implementation == "xla"


def test_real_times_pick_the_fast_implementation(chosen):
  fam = _family(_Slow(), _Fast(), rule=("xla",))
  x = jnp.ones((4, 4), jnp.float32)
  with cache.using(iterations=2):
    jax.jit(lambda x: _call(fam, x))(x)
  # The implementation is certain; between its two equal configs the noise decides.
  assert [(c[0], c[1], c[3]) for c in chosen] == [("fwd", "fast", "cache")]
  (entry,) = cache.entries()
  times = {(i, c): t for i, c, t in entry.choices["fwd"].candidates}
  assert set(times) == {(n, ((("block", b)),)) for n in ("fast", "xla") for b in (1, 2)}
  assert max(t for (n, _), t in times.items() if n == "fast") < min(
      t for (n, _), t in times.items() if n == "xla")


def test_kernels_that_read_their_grid_position_are_measured_inside_jit_and_grad(monkeypatch,
                                                                               chosen):
  """The measurement runs where no trace is current: under ``jax.ensure_compile_time_eval()``
  the candidates' own kernel tracing would evaluate ``program_id`` and fail (on the H200 every
  Triton and Mosaic GPU candidate did, leaving only "xla")."""
  fam = _family(_Doubling(), _PallasDoubling(), rule=("xla",))
  one = (("block", 1),)
  times = {("fwd", "xla", one): 3.0, ("fwd", "pallas", one): 1.0,
           ("bwd", "xla", one): 3.0, ("bwd", "pallas", one): 1.0}
  calls: list = []
  monkeypatch.setattr(cache, "time_candidate", _fixed_timer(times, calls))
  x = jnp.arange(4.0, dtype=jnp.float32)
  with cache.using(), warnings.catch_warnings():
    warnings.simplefilter("error", cache.AutotuneCacheWarning)
    y = jax.jit(lambda x: _call(fam, x))(x)
    g = jax.jit(jax.grad(lambda x: jnp.sum(_call(fam, x))))(x)
  assert y.tolist() == [0.0, 2.0, 4.0, 6.0]
  assert g.tolist() == [2.0] * 4
  assert [(c[0], c[1], c[3], c[4], c[6]) for c in chosen] == [
      ("fwd", "pallas", "cache", "xla", "rule"), ("fwd+bwd", "pallas", "cache", "pallas", "cache")]
  assert sorted({name for _, name, _ in calls}) == ["pallas", "xla"]


def test_measurement_runs_off_the_callers_thread_on_its_default_device():
  devices = jax.devices()
  assert len(devices) >= 2  # pjrtkit's CPU device: 4 by default
  seen = []

  def probe():
    seen.append((threading.current_thread() is threading.main_thread(),
                 next(iter(jnp.zeros(2).devices()))))
    return "done"

  with jax.default_device(devices[1]):
    assert cache.untraced(probe) == "done"
  assert cache.untraced(probe) == "done"
  assert seen == [(False, devices[1]), (False, devices[0])]

  def settings():
    c = jax.config
    return (c.jax_default_matmul_precision, c.jax_enable_x64, c.jax_numpy_dtype_promotion,
            c.jax_numpy_rank_promotion, jnp.zeros(2).dtype.name)

  with jax.default_matmul_precision("highest"), jax.enable_x64(True), \
      jax.numpy_dtype_promotion("strict"), jax.numpy_rank_promotion("raise"):
    assert cache.untraced(settings) == ("highest", True, "strict", "raise", "float64")
  assert cache.untraced(settings) == (None, False, "standard", "allow", "float32")

  def fails():
    raise ValueError("from the worker")

  with pytest.raises(ValueError, match="from the worker"):
    cache.untraced(fails)


class _Nested(_Doubling):
  """2x by calling another cached family with ``implementation=None`` from inside the candidate."""

  implementation = "nested"
  inner: op_lib.Family | None = None

  def forward(self, args, spec, config):
    (x,) = args
    return _call(self.inner, x), args


def test_a_candidate_calling_none_inside_a_measurement_takes_the_rule(monkeypatch, chosen):
  inner = op_lib.Family("cache_test_inner", {"xla": _Doubling(), "fast": _Fast()},
                        rule=lambda s, d, p: ["xla"])
  op_lib.register_family(inner)
  monkeypatch.setattr(_Nested, "inner", inner)
  fam = _family(_Doubling(), _Nested(), rule=("xla",))
  one = (("block", 1),)
  calls: list = []
  monkeypatch.setattr(cache, "time_candidate", _fixed_timer(
      {("fwd", "xla", one): 1.0, ("fwd", "nested", one): 2.0}, calls))
  x = jnp.arange(4.0, dtype=jnp.float32)
  cache.configure(enabled=True)  # process-wide, so the measurement's thread sees it enabled too
  assert cache.active()
  result = []
  caller = threading.Thread(target=lambda: result.append(
      jax.jit(lambda x: _call(fam, x))(x).tolist()), daemon=True)
  caller.start()
  caller.join(timeout=60)  # a nested measurement would wait for the caller's lock forever
  assert not caller.is_alive(), "the call did not finish: a nested measurement is waiting"
  assert result == [[0.0, 2.0, 4.0, 6.0]]
  # The outer call measured (and chose xla); the inner family, called by the "nested" candidate
  # during that measurement, took its rule: it consulted no cache and measured nothing.
  two = (("block", 2),)
  assert sorted(set(calls)) == [("fwd", "nested", one), ("fwd", "nested", two),
                                ("fwd", "xla", one), ("fwd", "xla", two)]
  assert [(c[0], c[1], c[3]) for c in chosen] == [("fwd", "xla", "cache")]
  assert [e.key["op"] for e in cache.entries()] == ["cache_test_double"]
  seen = []
  cache.untraced(lambda: seen.append(cache.active()))
  assert seen == [False]


def test_no_matching_candidate_warns_and_keeps_the_rule(monkeypatch, chosen, tmp_path):
  fam = _family(_Doubling(), _Wrong(), rule=("wrong",))
  monkeypatch.setattr(cache, "time_candidate", _fixed_timer({}))

  def failing_check(*a, **k):
    return "always"

  monkeypatch.setattr(cache, "mismatch", failing_check)
  x = jnp.ones((2,), jnp.float32)
  with cache.using(), pytest.warns(cache.AutotuneCacheWarning,
                                   match=r"measuring cache_test_double \(fwd\) failed, using the "
                                         r"rule's choice: autotune: no candidate"):
    assert jax.jit(lambda x: _call(fam, x))(x).tolist() == [3.0, 3.0]
  assert chosen == [("fwd", "wrong", (("block", 1),), "rule", "wrong", (("block", 1),), "rule")]
  assert not (tmp_path / "cache").exists()


# --- files (their format, atomic writes and the entry bound: autotune_cache_files_test.py) -------

def test_a_corrupt_entry_is_measured_again_and_replaced(monkeypatch, chosen, tmp_path):
  fam = _family(_Doubling(), _Fast(), rule=("xla",))
  monkeypatch.setattr(cache, "time_candidate", _fixed_timer({("fwd", "fast", (("block", 2),)): 1.0}))
  x = jnp.ones((3,), jnp.float32)
  key = cache.cache_key(CPU, Spec.make(fam.name, {"x": x}, {}), "fwd")
  path = cache.entry_path(tmp_path / "cache", key)
  path.parent.mkdir()
  path.write_bytes(b"\x00\xff garbage")
  with cache.using(), pytest.warns(cache.AutotuneCacheWarning, match="cannot read|ignoring"):
    jax.jit(lambda x: _call(fam, x))(x)
  assert chosen[0][:3] == ("fwd", "fast", (("block", 2),))
  assert cache.Entry.loads(path.read_text()).choices["fwd"].implementation == "fast"


def test_an_unwritable_directory_warns_and_keeps_the_choice_in_memory(monkeypatch, chosen,
                                                                      tmp_path):
  fam = _family(_Doubling(), _Fast(), rule=("xla",))
  monkeypatch.setattr(cache, "time_candidate", _fixed_timer({("fwd", "fast", (("block", 1),)): 1.0}))
  blocker = tmp_path / "file"
  blocker.write_text("")
  x = jnp.ones((3,), jnp.float32)
  with cache.using(directory=blocker / "sub"), pytest.warns(
      cache.AutotuneCacheWarning, match="cannot write to .*file/sub .*this process only"):
    jax.jit(lambda x: _call(fam, x))(x)
  with cache.using(directory=blocker / "sub"):
    jax.jit(lambda x: _call(fam, x) + 1)(x)  # A new trace: from memory, no warning.
  assert [c[:4] for c in chosen] == [("fwd", "fast", (("block", 1),), "cache")] * 2


def test_enabling_retraces_a_function_jitted_before(monkeypatch, chosen):
  fam = _family(_Doubling(), _Fast(), rule=("xla",))
  monkeypatch.setattr(cache, "time_candidate", _fixed_timer({("fwd", "fast", (("block", 1),)): 1.0}))
  f = jax.jit(lambda x: _call(fam, x))
  x = jnp.ones((3,), jnp.float32)
  f(x)
  assert chosen == []
  cache.configure(enabled=True)
  f(x)
  assert [c[:4] for c in chosen] == [("fwd", "fast", (("block", 1),), "cache")]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
