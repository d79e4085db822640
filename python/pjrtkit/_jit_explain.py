"""Reads JAX's tracing-cache-miss explanations into recompile reasons.

With ``jax_explain_cache_misses`` on, JAX logs one WARNING through the logger
``jax._src.interpreters.partial_eval`` each time a ``jit`` retraces (jax 0.11.2 .. 0.12.x).
JAX has no structured form of it, so this module reads the message text: the function and
where it is defined, then the first difference JAX found with the closest previous cache key.
"""

from __future__ import annotations

import dataclasses
import re

EXPLAIN_LOGGER = "jax._src.interpreters.partial_eval"
"""The logger JAX writes tracing-cache-miss explanations to."""

_HEADER = "TRACING CACHE MISS at "
_NEVER_SEEN = re.compile(r"never seen function:\n\s+(?P<name>.+?) id=\d+"
                         r"(?: defined at (?P<file>.+?)(?::(?P<line>\d+))?)?\n?")
_SEEN = re.compile(r"\n  for (?P<name>.+?)(?: defined at (?P<file>.+?)(?::(?P<line>\d+))?)?\n")
_TYPE_DIFF = re.compile(r"^\s*\* at (?P<arg>.+), now (?P<now>\S+) and before (?P<before>\S+?)"
                        r"(?:https?://\S*)?$")
_TREE_DIFF = re.compile(r"\* at input path (?P<path>.+?), now (?P<now>.+?) and before "
                        r"(?P<before>.+?), so ")
_SHARDING = re.compile(r"@(\([^)]*\)|[^,]+)")
_AVAL = re.compile(r"^(?P<dtype>[a-z]+[0-9]*)\[(?P<shape>[^\]]*)\](?P<rest>.*)$")

FIRST_CALL = "first call"
SHAPE = "shape"
DTYPE = "dtype"
WEAK_TYPE = "weak type"
SHARDING = "sharding"
TREE = "tree structure"
CONTEXT = "trace context"
STATIC = "static argument"
UNKNOWN = "unknown"


@dataclasses.dataclass(frozen=True)
class ArgChange:
  """One argument whose type differs from the closest previous call.

  Attributes:
    arg: the argument path as JAX prints it (``x``, ``params[0]['w']``).
    before: its type then (``f32[3]``).
    now: its type now.
    kinds: what differs, from SHAPE, DTYPE, WEAK_TYPE, SHARDING.
  """

  arg: str
  before: str
  now: str
  kinds: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Explanation:
  """One tracing cache miss as JAX explained it.

  Attributes:
    func_name: the function's ``__name__``.
    filename: where it is defined (None when JAX did not say).
    lineno: the line it is defined on (None when JAX did not say).
    reasons: what changed, from the constants of this module (FIRST_CALL for a function JAX
      had not traced before).
    changes: the arguments whose types changed (for SHAPE/DTYPE/WEAK_TYPE/SHARDING).
    text: JAX's message.
  """

  func_name: str
  filename: str | None
  lineno: int | None
  reasons: tuple[str, ...]
  changes: tuple[ArgChange, ...]
  text: str


def aval_change_kinds(before: str, now: str) -> tuple[str, ...]:
  """What differs between two of JAX's short type strings (``f32[3]``, ``i32[]{weak_type=True}``)."""
  b, n = _AVAL.match(before), _AVAL.match(now)
  if b is None or n is None:
    return (UNKNOWN,)
  kinds = []
  if b["dtype"] != n["dtype"]:
    kinds.append(DTYPE)
  # A sharded type reads f32[8@i,4] or f32[8@(i,j)]: what follows '@' is the sharding.
  if _SHARDING.sub("", b["shape"]) != _SHARDING.sub("", n["shape"]):
    kinds.append(SHAPE)
  if ("weak_type" in b["rest"] or "weak_type" in n["rest"]) and b["rest"] != n["rest"]:
    kinds.append(WEAK_TYPE)
  if not kinds:
    kinds.append(SHARDING)
  return tuple(kinds)


def parse(message: str) -> Explanation | None:
  """The explanation in one of JAX's log messages, or None when it is not one."""
  if not message.startswith(_HEADER):
    return None
  never = _NEVER_SEEN.search(message)
  if never:
    return Explanation(never["name"], never["file"], _int(never["line"]), (FIRST_CALL,), (),
                       message)
  seen = _SEEN.search(message)
  if not seen:
    return Explanation("", None, None, (UNKNOWN,), (), message)
  changes = []
  for line in message.splitlines():
    match = _TYPE_DIFF.match(line)
    if match:
      changes.append(ArgChange(match["arg"], match["before"], match["now"],
                               aval_change_kinds(match["before"], match["now"])))
  if "different input pytree" in message:
    reasons: tuple[str, ...] = (TREE,)
    changes = [ArgChange(m["path"], m["before"], m["now"], (TREE,))
               for m in _TREE_DIFF.finditer(message)]
  elif "different input types" in message and changes:
    reasons = tuple(dict.fromkeys(k for c in changes for k in c.kinds))
  elif "Tracing context doesn't match" in message:
    reasons = (CONTEXT,)
  else:
    reasons = (UNKNOWN,)
  return Explanation(seen["name"], seen["file"], _int(seen["line"]), reasons, tuple(changes),
                     message)


def _int(text: str | None) -> int | None:
  return int(text) if text else None
