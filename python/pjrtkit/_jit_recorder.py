"""Records, per ``jax.jit`` function, its calls, compilations and their reasons, from JAX's hooks.

Sources, all JAX's own:

* ``jax.monitoring``: the tracing, lowering and backend-compile durations JAX records with the
  name of the function (``/jax/core/compile/*``), the scalar JAX records when a backend compile
  starts, and ``/jax/compilation_cache/cache_hits`` for executables loaded from the persistent
  cache;
* ``jax_explain_cache_misses``: a ``logging.Handler`` on JAX's explanation logger, read by
  ``_jit_explain``.

JAX has no hook per call of a jitted function, so while recording, ``jax.jit`` returns a thin
wrapper around JAX's jitted function that counts calls, waits for the outputs
(``block_until_ready``) to time them, and attributes the events above to the function being
called. The wrapper forwards every attribute (``lower``, ``trace``, ...) to JAX's object. JAX's
explanation does not look at static arguments (it diffs only the traced arguments), so the
wrapper also keeps the static arguments of each call and reports a change of them itself.
"""

from __future__ import annotations

import inspect
import logging
import time
import types
from typing import Any, Callable

from pjrtkit import _jit_explain as explain
from pjrtkit import _jit_records as records

TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
LOWER_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_EVENT = "/jax/core/compile/backend_compile_duration"
CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"

PLACEMENT = "argument placement"
"""Recompiled without retracing: the arguments' sharding, devices or layout changed."""


def _source_location(fun: Callable[..., Any]) -> tuple[str, int | None]:
  target = inspect.unwrap(fun)
  while hasattr(target, "func") and not hasattr(target, "__code__"):  # functools.partial
    target = target.func
  code = getattr(target, "__code__", None)
  if code is None:
    return "", None
  return code.co_filename, code.co_firstlineno


class _StaticArgs:
  """Which arguments of one jitted function are static, as JAX infers them."""

  def __init__(self, fun: Callable[..., Any], argnums: Any, argnames: Any):
    nums = {argnums} if isinstance(argnums, int) else set(argnums or ())
    names = {argnames} if isinstance(argnames, str) else set(argnames or ())
    try:
      params = [p for p in inspect.signature(fun).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
      params = []
    by_name = {p.name: i for i, p in enumerate(params)}
    self._nums = sorted(nums | {by_name[n] for n in names if n in by_name})
    self._names = sorted(names | {params[i].name for i in nums if 0 <= i < len(params)})
    self._labels = {i: params[i].name if 0 <= i < len(params) else f"arg{i}" for i in self._nums}

  def key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The static arguments of one call, as (name, value) pairs."""
    pairs = [(self._labels[i], args[i]) for i in self._nums if i < len(args)]
    pairs += [(n, kwargs[n]) for n in self._names if n in kwargs]
    return tuple(pairs)


class _Call:
  """Events of one call in progress."""

  def __init__(self, function: "_Function", static_key: tuple[tuple[str, Any], ...]):
    self.function = function
    self.static_key = static_key
    self.trace_s: list[float] = []
    self.lower_s: list[float] = []
    self.backend: list[tuple[float, bool]] = []  # (seconds, loaded from persistent cache)
    self.explanations: list[explain.Explanation] = []


class _Function:
  """What is known so far about one ``jax.jit`` object."""

  def __init__(self, fun: Callable[..., Any], static: _StaticArgs):
    self.name = getattr(fun, "__name__", type(fun).__name__)
    self.filename, self.lineno = _source_location(fun)
    self.static = static
    self.calls = 0
    self.compiles: list[records.CompileEvent] = []
    self.execute_s: list[float] = []
    self.static_keys: list[tuple[tuple[str, Any], ...]] = []

  @property
  def location(self) -> str:
    return f"{self.filename}:{self.lineno}" if self.filename else ""

  def owns(self, e: explain.Explanation) -> bool:
    """Whether a JAX explanation is about this function."""
    if e.filename and self.filename:
      return (e.filename, e.lineno) == (self.filename, self.lineno) and e.func_name == self.name
    return e.func_name == self.name

  def _reasons(self, call: _Call) -> tuple[tuple[str, ...], str, str]:
    ours = [e for e in call.explanations if self.owns(e)]
    text = ours[-1].text if ours else ""
    if not self.compiles:
      return (explain.FIRST_CALL,), "", text
    if call.static_key not in self.static_keys:
      before = dict(self.static_keys[-1]) if self.static_keys else {}
      detail = "; ".join(f"{k}: {before.get(k)!r} -> {v!r}" for k, v in call.static_key
                         if k not in before or before[k] != v)
      return (explain.STATIC,), detail, text
    if ours:
      detail = "; ".join(f"{c.arg}: {c.before} -> {c.now}" for c in ours[-1].changes)
      return ours[-1].reasons, detail, text
    if call.trace_s:
      return (explain.UNKNOWN,), "", text
    return (PLACEMENT,), "", text

  def finish(self, call: _Call, wall_s: float) -> None:
    """Books one finished call."""
    self.calls += 1
    overhead = sum(call.trace_s) + sum(call.lower_s) + sum(s for s, _ in call.backend)
    self.execute_s.append(max(0.0, wall_s - overhead))
    if call.backend:
      reasons, detail, text = self._reasons(call)
      for i, (seconds, hit) in enumerate(call.backend):
        first = i == 0  # tracing and lowering belong to the first executable of the call
        self.compiles.append(records.CompileEvent(
            call=self.calls, reasons=reasons, detail=detail,
            trace_s=sum(call.trace_s) if first else 0.0,
            lower_s=sum(call.lower_s) if first else 0.0,
            backend_s=seconds, persistent_cache_hit=hit, explanation=text if first else ""))
    if call.static_key not in self.static_keys:
      self.static_keys.append(call.static_key)

  def report(self) -> records.FunctionReport:
    return records.FunctionReport(self.name, self.location, self.calls, tuple(self.compiles),
                                  tuple(self.execute_s))


class _ExplanationHandler(logging.Handler):
  """Hands JAX's tracing-cache-miss explanations to the recorder; passes other records on."""

  def __init__(self, recorder: "JitRecorder"):
    super().__init__(logging.DEBUG)
    self._recorder = recorder

  def emit(self, record: logging.LogRecord) -> None:
    parsed = explain.parse(record.getMessage())
    if parsed is not None:
      self._recorder.on_explanation(parsed)
    elif not logging.getLogger().handlers and record.levelno >= logging.WARNING:
      logging.lastResort.handle(record)  # what Python would have done without this handler


class _RecordedJit:
  """What ``jax.jit`` returns while recording: JAX's jitted function plus bookkeeping."""

  def __init__(self, jitted: Any, function: _Function, recorder: "JitRecorder"):
    self._jitted = jitted
    self._function = function
    self._recorder = recorder
    self.__wrapped__ = jitted
    self.__name__ = function.name
    self.__doc__ = getattr(jitted, "__doc__", None)

  def __call__(self, *args: Any, **kwargs: Any) -> Any:
    return self._recorder.call(self._jitted, self._function, args, kwargs)

  def __get__(self, obj: Any, objtype: Any = None) -> Any:
    return self if obj is None else types.MethodType(self, obj)

  def __getattr__(self, name: str) -> Any:
    return getattr(self._jitted, name)


class JitRecorder:
  """Installs the hooks, collects events, builds the report. Use as a context manager."""

  def __init__(self) -> None:
    self._functions: list[_Function] = []
    self._stack: list[_Call] = []
    self._pending_hit = False
    self._other_compiles = 0
    self._other_hits = 0
    self._handler = _ExplanationHandler(self)
    self._undo: list[Callable[[], None]] = []

  # -- hooks ---------------------------------------------------------------------------------
  def on_explanation(self, e: explain.Explanation) -> None:
    """A JAX explanation: kept by the innermost call in progress."""
    if self._stack:
      self._stack[-1].explanations.append(e)

  def _on_event(self, event: str, **_: Any) -> None:
    if event == CACHE_HIT_EVENT:
      self._pending_hit = True

  def _on_scalar(self, event: str, _value: float, **_: Any) -> None:
    if event == BACKEND_EVENT:  # a backend compile starts
      self._pending_hit = False

  def _on_duration(self, event: str, seconds: float, **kwargs: Any) -> None:
    fun_name = kwargs.get("fun_name")
    call = self._stack[-1] if self._stack else None
    name = call.function.name if call else None
    if event == BACKEND_EVENT:
      hit, self._pending_hit = self._pending_hit, False
      if call is not None and fun_name == f"jit({name})":
        call.backend.append((seconds, hit))
      else:
        self._other_compiles += 1
        self._other_hits += hit
    elif call is not None and event == TRACE_EVENT and fun_name == name:
      call.trace_s.append(seconds)
    elif call is not None and event == LOWER_EVENT and fun_name == f"jit({name})":
      call.lower_s.append(seconds)

  # -- calls ---------------------------------------------------------------------------------
  def wrap_jit(self, jit: Callable[..., Any]) -> Callable[..., Any]:
    """A drop-in ``jax.jit`` whose functions are recorded."""
    missing = object()

    def recorded_jit(fun: Any = missing, /, **kwargs: Any) -> Any:
      if fun is missing:
        return lambda f: recorded_jit(f, **kwargs)
      static = _StaticArgs(fun, kwargs.get("static_argnums"), kwargs.get("static_argnames"))
      function = _Function(fun, static)
      self._functions.append(function)
      return _RecordedJit(jit(fun, **kwargs), function, self)

    recorded_jit.__doc__ = jit.__doc__
    recorded_jit.__wrapped__ = jit  # type: ignore[attr-defined]
    return recorded_jit

  def call(self, jitted: Any, function: _Function, args: tuple[Any, ...],
           kwargs: dict[str, Any]) -> Any:
    """Calls ``jitted`` and books the call (calls made while tracing are passed through)."""
    import jax  # pylint: disable=g-import-not-at-top

    if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves((args, kwargs))):
      return jitted(*args, **kwargs)
    call = _Call(function, function.static.key(args, kwargs))
    self._stack.append(call)
    start = time.perf_counter()
    try:
      out = jax.block_until_ready(jitted(*args, **kwargs))
    finally:
      self._stack.pop()
    function.finish(call, time.perf_counter() - start)
    return out

  # -- lifetime ------------------------------------------------------------------------------
  def __enter__(self) -> "JitRecorder":
    import jax  # pylint: disable=g-import-not-at-top

    monitoring = jax.monitoring
    monitoring.register_event_listener(self._on_event)
    monitoring.register_scalar_listener(self._on_scalar)
    monitoring.register_event_duration_secs_listener(self._on_duration)
    self._undo.append(lambda: monitoring.unregister_event_listener(self._on_event))
    self._undo.append(lambda: monitoring.unregister_scalar_listener(self._on_scalar))
    self._undo.append(lambda: monitoring.unregister_event_duration_listener(self._on_duration))
    logger = logging.getLogger(explain.EXPLAIN_LOGGER)
    logger.addHandler(self._handler)
    self._undo.append(lambda: logger.removeHandler(self._handler))
    explain_was = jax.config.jax_explain_cache_misses
    jax.config.update("jax_explain_cache_misses", True)
    self._undo.append(lambda: jax.config.update("jax_explain_cache_misses", explain_was))
    real_jit = jax.jit
    jax.jit = self.wrap_jit(real_jit)
    self._undo.append(lambda: setattr(jax, "jit", real_jit))
    return self

  def __exit__(self, *exc: Any) -> None:
    while self._undo:
      self._undo.pop()()

  def report(self, script: str) -> records.Report:
    """The report of everything recorded so far (functions never called are left out)."""
    import jax  # pylint: disable=g-import-not-at-top

    return records.Report(
        script=script, platform=jax.default_backend(), jax_version=jax.__version__,
        functions=tuple(f.report() for f in self._functions if f.calls),
        other_compiles=self._other_compiles, other_persistent_cache_hits=self._other_hits)

