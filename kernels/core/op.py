"""`Op`: one implementation of one kernel op, and how a call runs (choice, custom VJP, markers).

An op family (``layer_norm``, ``dot_product_attention``, or a user's own op) is a table of
implementations, each an `Op` instance. A call is described by a `Spec`. For each call and each
phase (forward "fwd", gradient "bwd") an implementation and a config are chosen at trace time:

* ``implementation="name"``: that implementation, or `UnsupportedImplementationError` naming it
  and the reason, raised before anything is compiled or run; its config from tuned results when
  present, else its default config.
* ``implementation=None``: the tuned choice for this device kind and spec when present (active
  `AutotuningResult`s, then the shipped ``kernels/tuned`` files), else, with the autotune cache
  enabled (`autotune_cache`), the cache's choice (measured on first use), else the family's rule;
  the forward and the gradient may get different implementations. "xla" serves every call, so
  there is always a fallback.

Every implementation's forward returns the family's common residuals and every backward takes
them, so any forward can be paired with any backward.
"""

from __future__ import annotations

import abc
import dataclasses
import logging
from typing import Any, Callable, ClassVar, Generic, Mapping, Sequence, TypeVar

import jax

from pjrtkit.kernels.core import device as device_lib
from pjrtkit.kernels.core import autotune_cache, markers, tuned
from pjrtkit.kernels.core.errors import UnsupportedImplementationError
from pjrtkit.kernels.core.spec import Spec

ConfigT = TypeVar("ConfigT")
_LOG = logging.getLogger("pjrtkit.kernels")


@dataclasses.dataclass(frozen=True)
class NoConfig:
  """The config of an implementation without tunable parameters."""


class Op(abc.ABC, Generic[ConfigT]):
  """One implementation of a kernel op.

  Subclasses set `op_name`, `implementation` and `config_cls` (a frozen dataclass), and implement
  `forward` (and `backward` unless JAX's autodiff of `forward` is wanted). Override
  `_get_autotuning_configs` to define the autotuning search space, `unsupported_reason` to
  refuse calls this implementation cannot serve, and `forward_output` where a call that is not
  differentiated can skip computing the residuals.

  A subclass instance is callable on its own (a one-implementation family):
  ``MyOp()(x, y, alpha=2.0)`` runs `forward_output` (`forward` when differentiated) with the
  tuned or default config, findable by `pjrtkit.kernels.autotune`.
  """

  op_name: ClassVar[str] = ""
  implementation: ClassVar[str] = "default"
  config_cls: ClassVar[type] = NoConfig
  automatic: ClassVar[bool] = True
  """Whether ``implementation=None`` may take this implementation (rule, tuned results,
  autotuning). False keeps it to calls that name it: a kernel whose values and speed have not
  yet been measured on the hardware it targets."""
  portable: ClassVar[bool] = False
  """Whether the implementation lowers for every platform (plain JAX, as "xla" does). When
  ``implementation=None`` takes one that is not, the call lowers it only for the platform of the
  device it was chosen for and the family's "xla" for any other (`Family.call`)."""
  own_residuals: ClassVar[bool] = False
  """Whether `forward`'s residuals fit only this implementation's `backward` (cuDNN's keep its
  pullback): a differentiated call then lowers both phases as chosen on every platform."""
  symbolic_shapes: ClassVar[bool] = False
  """Whether the implementation serves calls with symbolic dimensions (`jax.export` shape
  polymorphism): for ``implementation=None`` such calls run the family's "xla", which must."""

  # --- what a subclass provides -----------------------------------------------------------------

  def unsupported_reason(self, spec: Spec, device: device_lib.DeviceInfo) -> str | None:
    """Why this implementation cannot serve `spec` on `device`; None when it can."""
    del spec, device
    return None

  def default_config(self, spec: Spec) -> ConfigT:
    """The config used when no tuned result applies."""
    del spec
    return self.config_cls()

  def phase_config(self, spec: Spec, phase: str) -> ConfigT:
    """The config for `phase` ("fwd" or "bwd") when no tuned result applies (default:
    `default_config`, the same for both phases)."""
    del phase
    return self.default_config(spec)

  def _get_autotuning_configs(self, spec: Spec) -> Sequence[ConfigT]:
    """The configs `autotune` measures for `spec` (default: only the default config)."""
    return (self.default_config(spec),)

  def autotuning_configs(self, spec: Spec) -> tuple[ConfigT, ...]:
    """`_get_autotuning_configs` without duplicates, default config first."""
    out = [self.default_config(spec)]
    for c in self._get_autotuning_configs(spec):
      if c not in out:
        out.append(c)
    return tuple(out)

  @abc.abstractmethod
  def forward(self, args: tuple[Any, ...], spec: Spec, config: ConfigT) -> tuple[Any, Any]:
    """Returns (output, residuals for `backward`)."""

  def forward_output(self, args: tuple[Any, ...], spec: Spec, config: ConfigT) -> Any:
    """The output alone, for a call that is not differentiated (its residuals are never read).

    The default runs `forward` and drops the residuals (XLA removes what only they need, unless
    a kernel writes them); a kernel that writes residuals can skip them here.
    """
    return self.forward(args, spec, config)[0]

  def backward(self, residuals: Any, dout: Any, spec: Spec, config: ConfigT) -> tuple[Any, ...]:
    """Cotangents of the array arguments (None for absent or non-float ones).

    The default differentiates `forward` with JAX, taking the residuals to be the arguments.
    """
    args = residuals
    diff = [i for i, a in enumerate(args) if _is_float(a)]

    def fwd_of(*diff_args: Any) -> Any:
      full = list(args)
      for i, a in zip(diff, diff_args):
        full[i] = a
      return self.forward(tuple(full), spec, config)[0]

    _, vjp = jax.vjp(fwd_of, *[args[i] for i in diff])
    grads = vjp(dout)
    out: list[Any] = [None] * len(args)
    for i, g in zip(diff, grads):
      out[i] = g
    return tuple(out)

  def example_args(self, spec: Spec, seed: int = 0) -> tuple[Any, ...]:
    """Arguments of `spec`'s shapes the autotuner times this implementation with (default:
    `Spec.example_args`; an op whose integer arguments carry meaning, such as group sizes or
    labels, overrides it with representative values)."""
    return spec.example_args(seed)

  def make_spec(self, *args: Any, **params: Any) -> Spec:
    """The Spec of a direct call of this op: positional arrays, keyword static parameters."""
    name = self.op_name or type(self).__name__
    return Spec.make(name, {f"arg{i}": a for i, a in enumerate(args)}, params)

  # --- calling an Op directly -------------------------------------------------------------------

  def __call__(self, *args: Any, implementation: str | None = None, **params: Any) -> Any:
    spec = self.make_spec(*args, **params)
    family = Family(spec.op, {self.implementation: self}, rule=lambda s, d, p: [self.implementation])
    register_family(family)
    return family.call(spec, args, implementation)

  def __repr__(self) -> str:
    return f"{type(self).__name__}(op={self.op_name!r}, implementation={self.implementation!r})"


def _is_float(x: Any) -> bool:
  return x is not None and jax.numpy.issubdtype(x.dtype, jax.numpy.inexact)


def config_to_json(config: Any) -> tuple[tuple[str, Any], ...]:
  """A frozen dataclass config as sorted (field, value) pairs."""
  return tuple(sorted(dataclasses.asdict(config).items()))


Rule = Callable[[Spec, device_lib.DeviceInfo, str], Sequence[str]]
"""(spec, device, phase) -> implementation names in order of preference."""


@dataclasses.dataclass(frozen=True)
class Choice:
  """An (implementation, config) for one phase, and where it came from."""

  op: Op
  config: Any
  source: str  # "explicit", "tuned", "cache", "rule", "fallback", "symbolic"


class Family:
  """An op family: its implementations and the rule `implementation=None` falls back to."""

  def __init__(self, name: str, implementations: Mapping[str, Op], rule: Rule) -> None:
    self.name = name
    self.implementations = dict(implementations)
    self.rule = rule

  def accepted(self) -> str:
    """``'xla', 'native', ... or None``."""
    return ", ".join(repr(n) for n in self.implementations) + " or None"

  def choose(self, spec: Spec, requested: str | None, phase: str,
             device: device_lib.DeviceInfo) -> Choice:
    """The implementation and config for `phase` of this call (see the module docstring).

    Raises:
      ValueError: for an unknown implementation name.
      UnsupportedImplementationError: when the requested implementation cannot serve the call.
    """
    if requested is not None:
      if requested not in self.implementations:
        raise ValueError(f"{self.name}: unknown implementation={requested!r}; accepted: "
                         f"{self.accepted()}")
      op = self.implementations[requested]
      reason = op.unsupported_reason(spec, device)
      if reason is not None:
        raise UnsupportedImplementationError(self.name, requested, reason)
      found = tuned.lookup(device.kind, self.name, phase, requested, spec)
      if found is not None and found.implementation == requested:
        return Choice(op, op.config_cls(**dict(found.config)), "tuned")
      return Choice(op, op.phase_config(spec, phase), "explicit")
    found = tuned.lookup(device.kind, self.name, phase, markers.AUTO, spec)
    if found is not None and found.implementation in self.implementations:
      op = self.implementations[found.implementation]
      if op.automatic and op.unsupported_reason(spec, device) is None:
        return Choice(op, op.config_cls(**dict(found.config)), "tuned")
    for name in list(self.rule(spec, device, phase)) + ["xla"]:
      op = self.implementations.get(name)
      if op is not None and op.automatic and op.unsupported_reason(spec, device) is None:
        return Choice(op, op.phase_config(spec, phase), "rule")
    raise UnsupportedImplementationError(self.name, "None",
                                         f"no implementation serves this call on "
                                         f"{device.describe()}")

  def supported(self, spec: Spec, device: device_lib.DeviceInfo) -> list[str]:
    """Names of the implementations ``implementation=None`` may take (`Op.automatic`) that can
    serve `spec` on `device`."""
    return [n for n, op in self.implementations.items()
            if op.automatic and op.unsupported_reason(spec, device) is None]

  def call(self, spec: Spec, args: tuple[Any, ...], requested: str | Sequence[Any] | None,
           user_call: Callable[[Callable[..., Any]], Any] | None = None) -> Any:
    """Runs one call: chooses both phases now (so refusals happen before anything runs), then
    runs the forward, with the chosen backward as its custom VJP.

    `requested` may be a sequence of names (as Tokamax takes): the first that serves the call
    runs; when none does, an ``ExceptionGroup`` of their refusals is raised (a one-name
    sequence raises its refusal itself). With `user_call`, the sequence may also hold callables
    (Tokamax's custom implementations): ``user_call(fn)`` runs one with the op's own arguments,
    and its ``NotImplementedError`` passes the call on to the next entry.

    Raises:
      ValueError: an empty sequence or an unknown name.
      UnsupportedImplementationError: the requested implementation cannot serve the call.
    """
    if requested is not None and not isinstance(requested, str):
      items = list(requested)
      if not items or not all(isinstance(n, str) or (user_call is not None and callable(n))
                              for n in items):
        kinds = "names or callables" if user_call is not None else "names"
        raise ValueError(f"{self.name}: implementation must be None, a name or a non-empty "
                         f"sequence of {kinds} ({self.accepted()}), got {requested!r}")
      if len(items) == 1 and isinstance(items[0], str):
        return self.call(spec, args, items[0])
      errors: list[Exception] = []
      for item in items:
        try:
          return self.call(spec, args, item) if isinstance(item, str) else user_call(item)
        except (UnsupportedImplementationError, NotImplementedError) as e:
          if len(items) == 1:
            raise
          errors.append(e)
      raise ExceptionGroup(f"{self.name}: none of the implementations {items} serves this call",
                           errors)
    if spec.symbolic:
      return self._call_symbolic(spec, args, requested)
    device = device_lib.current_device()
    fwd = self.choose(spec, requested, "fwd", device)
    bwd = self.choose(spec, requested, "bwd", device)
    refine = None
    if requested is None and "rule" in (fwd.source, bwd.source) and autotune_cache.active():
      refine = lambda mode: self.cached_choices(spec, device, mode, fwd, bwd)  # noqa: E731
    # The choice was made for `device`; a program lowered for another platform (arrays on JAX's
    # cpu device, `jax.export` for other platforms) gets "xla" instead of a kernel it cannot run.
    fallback = self.implementations.get("xla")
    platforms = device.lowering_platforms
    elsewhere = None
    if requested is None and fallback is not None and platforms:
      elsewhere = (platforms, *(Choice(fallback, fallback.phase_config(spec, p), "fallback")
                                for p in ("fwd", "bwd")))
    return run(spec, args, requested, fwd, bwd, refine, elsewhere)

  def _call_symbolic(self, spec: Spec, args: tuple[Any, ...], requested: str | None) -> Any:
    """A call with symbolic dimensions (`jax.export` shape polymorphism): the requested
    implementation if it serves them (`Op.symbolic_shapes`), for ``None`` the family's "xla"
    (no tuned results, rule or autotuning: they key on concrete shapes).

    Raises:
      ValueError: an unknown implementation name.
      UnsupportedImplementationError: a kernel that needs concrete shapes, or no "xla".
    """
    name = requested or "xla"
    if name not in self.implementations:
      if requested is not None:
        raise ValueError(f"{self.name}: unknown implementation={requested!r}; accepted: "
                         f"{self.accepted()}")
      raise UnsupportedImplementationError(self.name, "None", "a call with symbolic dimensions "
                                           "needs an 'xla' implementation; this family has none")
    op = self.implementations[name]
    if not op.symbolic_shapes:
      serving = [n for n, o in self.implementations.items() if o.symbolic_shapes]
      raise UnsupportedImplementationError(
          self.name, name, f"the call has symbolic dimensions (jax.export shape polymorphism), "
          f"which only these implementations serve: {serving or 'none'}")
    fwd, bwd = (Choice(op, op.phase_config(spec, p), "explicit" if requested else "symbolic")
                for p in ("fwd", "bwd"))
    return run(spec, args, requested, fwd, bwd)

  def cached_choices(self, spec: Spec, device: device_lib.DeviceInfo, mode: str, fwd: Choice,
                     bwd: Choice) -> tuple[Choice, Choice]:
    """`fwd` and `bwd` with each phase of `mode` that the rule chose replaced by the autotune
    cache's choice (measured now on a miss); a phase with a tuned choice, or whose cached
    implementation or config no longer fits, keeps its choice."""
    entry = autotune_cache.lookup_or_measure(self, spec, mode, device)
    if entry is None:
      return fwd, bwd
    out = {"fwd": fwd, "bwd": bwd}
    for phase, cached in entry.choices.items():
      if out[phase].source != "rule":
        continue
      op = self.implementations.get(cached.implementation)
      if op is None or not op.automatic or op.unsupported_reason(spec, device) is not None:
        _LOG.warning("autotune cache: %s %s: cached implementation %r does not serve the call",
                     self.name, phase, cached.implementation)
        continue
      try:
        config = op.config_cls(**dict(cached.config))
      except TypeError as e:
        _LOG.warning("autotune cache: %s %s: cached config %s does not fit %r: %s", self.name,
                     phase, dict(cached.config), cached.implementation, e)
        continue
      out[phase] = Choice(op, config, "cache")
    return out["fwd"], out["bwd"]


_FAMILIES: dict[str, Family] = {}


def register_family(family: Family) -> None:
  """Makes `family` known to `autotune` (idempotent per name)."""
  _FAMILIES[family.name] = family


def family(name: str) -> Family:
  """The registered family `name`.

  Raises:
    KeyError: naming the known families.
  """
  if name not in _FAMILIES:
    raise KeyError(f"unknown kernel op {name!r}; known: {sorted(_FAMILIES)}")
  return _FAMILIES[name]


def run(spec: Spec, args: tuple[Any, ...], requested: str | None, fwd: Choice,
        bwd: Choice, refine: Callable[[str], tuple[Choice, Choice]] | None = None,
        elsewhere: tuple[tuple[str, ...], Choice, Choice] | None = None) -> Any:
  """Runs `fwd` with `bwd` as its custom VJP, each inside its marker scope.

  With `refine` (the autotune cache), the choices come from ``refine(mode)`` when JAX traces
  them: mode "fwd" for a call that is not differentiated, "fwd+bwd" for the forward rule and
  the backward of one that is (each mode asked at most once).

  With `elsewhere` ``(platforms, fwd, bwd)``, a phase whose choice is not `Op.portable` runs it
  only in programs lowered for `platforms` (``lax.platform_dependent``) and that phase's choice
  of `elsewhere` in programs lowered for any other (except after a forward with
  `Op.own_residuals`).
  """
  fwd_scope = markers.marker("fwd", requested, spec)
  bwd_scope = markers.marker("bwd", requested, spec)
  refined: dict[str, tuple[Choice, Choice]] = {}
  fwd_own_residuals: list[bool] = []  # Set when the forward's residuals fit only its backward.

  def chosen(mode: str) -> tuple[Choice, Choice]:
    if refine is None:
      return fwd, bwd
    if mode not in refined:
      refined[mode] = refine(mode)
    return refined[mode]

  def on_platform(choice: Choice, phase: int,
                  branch: Callable[[Choice, bool], Callable[..., Any]], *operands: Any) -> Any:
    if elsewhere is None or choice.op.portable:
      return branch(choice, False)(*operands)
    mine, other = branch(choice, True), branch(elsewhere[phase], True)
    if branch is forward and choice.op.own_residuals:
      fwd_own_residuals.append(True)  # This forward and the backward lowered as chosen.
      return mine(*operands)
    if branch is backward and fwd_own_residuals:
      return mine(*operands)
    return jax.lax.platform_dependent(*operands, **dict.fromkeys(elsewhere[0], mine),
                                      default=other)

  def forward_output(c: Choice, _: bool) -> Callable[..., Any]:
    return lambda *a: c.op.forward_output(a, spec, c.config)

  def forward(c: Choice, _: bool) -> Callable[..., Any]:
    return lambda *a: c.op.forward(a, spec, c.config)

  def backward(c: Choice, branched: bool) -> Callable[..., Any]:
    def grads(residuals: Any, dout: Any) -> tuple[Any, ...]:
      out = c.op.backward(residuals, dout, spec, c.config)
      # Branches need one structure whichever implementation ran: zeros for a float's None.
      return tuple(None if not _is_float(a) else g.astype(a.dtype) if g is not None else
                   jax.numpy.zeros(a.shape, a.dtype) if branched else None
                   for a, g in zip(args, out))
    return grads

  @jax.custom_vjp
  def call(*a: Any) -> Any:  # Not differentiated: no residuals.
    f = chosen("fwd")[0]
    with jax.named_scope(fwd_scope):
      return on_platform(f, 1, forward_output, *a)

  def call_fwd(*a: Any) -> tuple[Any, Any]:
    f = chosen("fwd+bwd")[0]
    with jax.named_scope(fwd_scope):
      return on_platform(f, 1, forward, *a)

  def call_bwd(residuals: Any, dout: Any) -> tuple[Any, ...]:
    b = chosen("fwd+bwd")[1]
    with jax.named_scope(bwd_scope):
      return on_platform(b, 2, backward, residuals, dout)

  call.defvjp(call_fwd, call_bwd)
  return call(*args)
