"""Errors raised by pjrtkit.kernels before anything runs."""

from __future__ import annotations


class UnsupportedImplementationError(NotImplementedError):
  """An explicitly requested implementation cannot serve a call.

  Raised at trace time, before anything is compiled or run. The message names the op, the
  implementation and the reason (device, dtype, shape or feature).
  """

  def __init__(self, op: str, implementation: str, reason: str) -> None:
    self.op = op
    self.implementation = implementation
    self.reason = reason
    super().__init__(f"{op}: implementation={implementation!r} cannot serve this call: {reason}")
