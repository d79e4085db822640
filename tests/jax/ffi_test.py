"""XLA FFI on pjrtkit: registrations for platform "pjrtkit" reach the plugin's PJRT FFI extension
and XLA:CPU inside it.

Covers jaxlib's LAPACK handlers (linalg lowers to ``lapack_*_ffi`` custom calls on pjrtkit, as on
cpu), a user handler registered with ``jax.ffi.register_ffi_target(..., platform="pjrtkit")``
and called with ``jax.ffi.ffi_call``, FFI types, and the errors of the registration path.
"""

from __future__ import annotations

import ctypes
import sys
import textwrap

import pytest

from tests.testing.plugin_env import plugin_env, run_python, run_python_with_stderr

_PRELUDE = """
import ctypes, json
import numpy as np
import jax, jax.numpy as jnp
from jax_plugins.pjrtkit import _pjrt_ffi, _xla_ffi
"""

# A typed XLA FFI handler written with ctypes: ret0 = arg0 + 1 (f32; adder(k) adds k),
# answering XLA's metadata query like every handler must.
_ADD_ONE = """
def adder(k):
  def add(frame_pointer):
    frame = frame_pointer.contents
    if _xla_ffi.fill_metadata(frame):
      return None
    buf, dtype, shape = _xla_ffi.buffer_view(frame.args.args[0])
    out, _, _ = _xla_ffi.buffer_view(frame.rets.rets[0])
    _xla_ffi.write_array(out, _xla_ffi.read_array(buf, dtype, shape) + np.float32(k))
    return None
  return add
add_one = adder(1)
ADD_ONE = _xla_ffi.HANDLER(add_one)
capsule = jax.ffi.pycapsule(ctypes.cast(ADD_ONE, ctypes.c_void_p).value)
"""


def _run(code: str, *, add_one: bool = False) -> dict:
  """Runs `code` (after the prelude and, when `add_one`, the ctypes handler) in a child."""
  prelude = _PRELUDE + (_ADD_ONE if add_one else "")
  return run_python(prelude + textwrap.dedent(code), env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))


def test_linalg_lowers_to_lapack_and_matches_cpu():
  got = _run("""
      a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
      pk, cpu = jax.devices("pjrtkit")[0], jax.devices("cpu")[0]
      eigh = jax.jit(jnp.linalg.eigh)
      text = eigh.lower(jax.device_put(a, pk)).as_text()
      w_pk, v_pk = eigh(jax.device_put(a, pk))
      w_cpu, v_cpu = eigh(jax.device_put(a, cpu))
      chol = jax.jit(jnp.linalg.cholesky).lower(jax.device_put(a, pk)).as_text()
      print(json.dumps({
          "lapack": "lapack_ssyevd_ffi" in text, "potrf": "lapack_spotrf_ffi" in chol,
          "w_diff": float(np.max(np.abs(np.asarray(w_pk) - np.asarray(w_cpu)))),
          "v_diff": float(np.max(np.abs(np.asarray(v_pk) - np.asarray(v_cpu)))),
          "w_scale": float(np.max(np.abs(np.asarray(w_cpu)))),
          "platform": w_pk.devices().pop().platform}))
  """)
  assert got["lapack"] and got["potrf"]
  assert got["platform"] == "pjrtkit"
  # Same LAPACK kernels on both: equal to within float32 rounding of the surrounding code.
  assert got["w_diff"] <= 1e-6 * got["w_scale"]
  assert got["v_diff"] <= 1e-6


def test_user_handler_registered_before_the_backend_exists():
  got = _run(add_one=True, code="""
      jax.ffi.register_ffi_target("pjrtkit_test_add_one", capsule, platform="pjrtkit")
      x = jnp.arange(4, dtype=jnp.float32)   # Creates the backend: the registration is replayed.
      y = jax.jit(lambda v: jax.ffi.ffi_call("pjrtkit_test_add_one",
                                             jax.ShapeDtypeStruct(v.shape, v.dtype))(v))(x)
      print(json.dumps({"y": y.tolist(), "platform": y.devices().pop().platform}))
  """)
  assert got == {"y": [1.0, 2.0, 3.0, 4.0], "platform": "pjrtkit"}


def test_user_handler_registered_on_a_live_backend_and_conflicts():
  got = _run(add_one=True, code="""
      x = jnp.arange(3, dtype=jnp.float32)
      jax.ffi.register_ffi_target("pjrtkit_test_live", capsule, platform="pjrtkit")
      y = jax.jit(lambda v: jax.ffi.ffi_call("pjrtkit_test_live",
                                             jax.ShapeDtypeStruct(v.shape, v.dtype))(v))(x)
      # The same handler again is fine; another one for the same name is not.
      jax.ffi.register_ffi_target("pjrtkit_test_live", capsule, platform="pjrtkit")
      OTHER = _xla_ffi.HANDLER(add_one)
      other = jax.ffi.pycapsule(ctypes.cast(OTHER, ctypes.c_void_p).value)
      try:
        jax.ffi.register_ffi_target("pjrtkit_test_live", other, platform="pjrtkit")
        conflict = None
      except _pjrt_ffi.PjrtError as e:
        conflict = [e.code, str(e)]
      try:
        jax.ffi.register_ffi_target("pjrtkit_test_untyped", capsule, platform="pjrtkit",
                                    api_version=0)
        untyped = None
      except ValueError as e:
        untyped = str(e)
      print(json.dumps({"y": y.tolist(), "conflict": conflict, "untyped": untyped}))
  """)
  assert got["y"] == [1.0, 2.0, 3.0]
  assert got["conflict"] == [
      6, "PJRT_FFI_Register_Handler: FFI handler 'pjrtkit_test_live' (platform 'pjrtkit') is "
      "already registered with a different handler"]
  assert got["untyped"] == ("pjrtkit can only register typed XLA FFI handlers (api_version=1); "
                            "'pjrtkit_test_untyped' has api_version=0")


def test_an_unregistered_target_fails_to_compile_with_xlas_message():
  got = _run("""
      try:
        jax.jit(lambda v: jax.ffi.ffi_call("pjrtkit_test_missing",
                                           jax.ShapeDtypeStruct((2,), jnp.float32))(v))(
            jnp.zeros(2, jnp.float32))
        err = None
      except Exception as e:
        err = str(e)
      print(json.dumps({"err": err}))
  """)
  assert "No FFI handler registered for pjrtkit_test_missing" in got["err"]


def test_ffi_types_get_ids_from_the_plugin():
  got = _run("""
      jax.devices()
      first = ctypes.c_int64(0)
      jax.ffi.register_ffi_type("pjrtkit_test_state",
                                {"type_id": jax.ffi.pycapsule(ctypes.addressof(first))},
                                platform="pjrtkit")
      again = ctypes.c_int64(0)
      jax.ffi.register_ffi_type("pjrtkit_test_state",
                                {"type_id": jax.ffi.pycapsule(ctypes.addressof(again))},
                                platform="pjrtkit")
      second = ctypes.c_int64(0)
      jax.ffi.register_ffi_type("pjrtkit_test_other",
                                {"type_id": jax.ffi.pycapsule(ctypes.addressof(second))},
                                platform="pjrtkit")
      print(json.dumps([first.value, again.value, second.value]))
  """)
  first, again, second = got
  assert first >= 2**44
  assert again == first
  assert second == first + 1


def test_python_abi_declarations_match_pjrt_0_81():
  from jax_plugins.pjrtkit import _pjrt_ffi  # pylint: disable=g-import-not-at-top
  args = _pjrt_ffi._RegisterHandlerArgs  # pylint: disable=protected-access
  assert args.traits.offset + ctypes.sizeof(ctypes.c_uint32) == _pjrt_ffi.REGISTER_HANDLER_ARGS_SIZE
  assert _pjrt_ffi.REGISTER_HANDLER_ARGS_SIZE == 52
  types = _pjrt_ffi._TypeRegisterArgs  # pylint: disable=protected-access
  assert types.type_info.offset + 8 == _pjrt_ffi.TYPE_REGISTER_ARGS_SIZE == 48
  extension = _pjrt_ffi._FfiExtension  # pylint: disable=protected-access
  assert ctypes.sizeof(extension) == _pjrt_ffi.FFI_EXTENSION_SIZE == 48


def test_a_refused_replay_is_logged_and_named_in_the_compile_error():
  # Registered before the backend exists, so JAX's call returns OK; XLA:CPU refuses the handler
  # (it declares XLA FFI API 99.0) when pjrtkit replays it at client creation.
  got, stderr = run_python_with_stderr(_PRELUDE + textwrap.dedent("""
      def future_major(frame_pointer):
        frame = frame_pointer.contents
        if _xla_ffi.fill_metadata(frame):
          ext = ctypes.cast(frame.extension_start,
                            ctypes.POINTER(_xla_ffi.MetadataExtension)).contents
          ext.metadata.contents.api_version.major_version = 99
          ext.metadata.contents.api_version.minor_version = 0
        return None
      FUTURE = _xla_ffi.HANDLER(future_major)
      capsule = jax.ffi.pycapsule(ctypes.cast(FUTURE, ctypes.c_void_p).value)
      jax.ffi.register_ffi_target("future_major_op", capsule, platform="pjrtkit")
      x = jnp.zeros(2, jnp.float32)   # Creates the backend: the registration is replayed.
      try:
        jax.jit(lambda v: jax.ffi.ffi_call("future_major_op",
                                           jax.ShapeDtypeStruct((2,), jnp.float32))(v))(x)
        err = None
      except Exception as e:
        err = str(e)
      print(json.dumps({"err": err, "after": (x + 1).tolist()}))
  """), env=plugin_env(JAX_PLATFORMS="pjrtkit"))
  refusal = ("XLA:CPU refused FFI handler 'future_major_op': it is built against XLA FFI API "
             "99.0, XLA:CPU implements 0.")
  assert "pjrtkit: warning: FAILED_PRECONDITION: replaying FFI handler 'future_major_op'" in stderr
  assert refusal in stderr
  assert "No FFI handler registered for future_major_op" in got["err"]
  assert "'future_major_op' was refused when registered: FAILED_PRECONDITION" in got["err"]
  assert refusal in got["err"]
  assert got["after"] == [1.0, 1.0]  # The client keeps working.


def test_an_error_inside_the_device_is_a_python_exception_and_the_client_keeps_working():
  # An FFI handler that fails while the program runs (an error inside the device): the error
  # reaches Python through the execution's event, and later work on the same client is fine.
  got = _run("""
      def failing(frame_pointer):
        frame = frame_pointer.contents
        if _xla_ffi.fill_metadata(frame):
          return None
        return _xla_ffi.make_error(frame, _xla_ffi.ERROR_INTERNAL, "pjrtkit_test: boom")
      FAILING = _xla_ffi.HANDLER(failing)
      capsule = jax.ffi.pycapsule(ctypes.cast(FAILING, ctypes.c_void_p).value)
      jax.ffi.register_ffi_target("pjrtkit_test_failing", capsule, platform="pjrtkit")
      pk = jax.devices("pjrtkit")[0]
      x = jax.device_put(np.arange(4, dtype=np.float32), pk)
      call = jax.jit(lambda v: jax.ffi.ffi_call("pjrtkit_test_failing",
                                                jax.ShapeDtypeStruct(v.shape, v.dtype))(v))
      errors = []
      for _ in range(3):
        try:
          np.asarray(call(x))
          errors.append(None)
        except Exception as e:
          errors.append([type(e).__name__, str(e)])
      after = (jax.jit(lambda v: v * 2)(x)).tolist()
      print(json.dumps({"errors": errors, "after": after}))
  """)
  for error in got["errors"]:
    assert error is not None
    assert "pjrtkit_test: boom" in error[1]
  assert got["after"] == [0.0, 2.0, 4.0, 6.0]



def test_cpu_handlers_registered_before_and_after_the_backend_run_on_pjrtkit():
  # JAX's FFI tutorial registers for platform="cpu" only; pjrtkit's CPU device takes those too.
  got = _run(add_one=True, code="""
      jax.ffi.register_ffi_target("pjrtkit_test_cpu_early", capsule, platform="cpu")
      x = jnp.arange(4, dtype=jnp.float32)   # Creates the backends.
      jax.ffi.register_ffi_target("pjrtkit_test_cpu_late", capsule, platform="cpu")
      jax.ffi.register_ffi_target("pjrtkit_test_cpu_untyped", capsule, platform="cpu",
                                  api_version=0)   # Left to cpu, without an error here.
      call = lambda name: jax.jit(lambda v: jax.ffi.ffi_call(
          name, jax.ShapeDtypeStruct(v.shape, v.dtype))(v))
      cpu = jax.device_put(x, jax.devices("cpu")[0])
      try:
        call("pjrtkit_test_cpu_untyped")(x)
        untyped = None
      except Exception as e:
        untyped = str(e)
      print(json.dumps({
          "early": call("pjrtkit_test_cpu_early")(x).tolist(),
          "late": call("pjrtkit_test_cpu_late")(x).tolist(),
          "late_cpu": call("pjrtkit_test_cpu_late")(cpu).tolist(),
          "platform": call("pjrtkit_test_cpu_late")(x).devices().pop().platform,
          "untyped": untyped}))
  """)
  assert got["untyped"] is not None and "pjrtkit_test_cpu_untyped" in got["untyped"]
  del got["untyped"]
  assert got == {"early": [1.0, 2.0, 3.0, 4.0], "late": [1.0, 2.0, 3.0, 4.0],
                 "late_cpu": [1.0, 2.0, 3.0, 4.0], "platform": "pjrtkit"}


@pytest.mark.parametrize("pjrtkit_first", [False, True])
@pytest.mark.parametrize("backends_first", [False, True])
def test_a_handler_registered_for_pjrtkit_wins_over_cpus_of_the_same_name(pjrtkit_first,
                                                                          backends_first):
  got, stderr = run_python_with_stderr(
      _PRELUDE + _ADD_ONE + textwrap.dedent(f"""
      ADD_TWO = _xla_ffi.HANDLER(adder(2))
      two = jax.ffi.pycapsule(ctypes.cast(ADD_TWO, ctypes.c_void_p).value)
      if {backends_first}:
        jax.devices()
      order = [("pjrtkit", two), ("cpu", capsule)]
      for platform, fn in (order if {pjrtkit_first} else order[::-1]):
        jax.ffi.register_ffi_target("pjrtkit_test_both", fn, platform=platform)
      f = jax.jit(lambda v: jax.ffi.ffi_call(
          "pjrtkit_test_both", jax.ShapeDtypeStruct(v.shape, v.dtype))(v))
      x = jnp.zeros(2, jnp.float32)
      print(json.dumps({{"pjrtkit": f(x).tolist(),
                         "cpu": f(jax.device_put(x, jax.devices("cpu")[0])).tolist()}}))
  """), env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))
  assert got == {"pjrtkit": [2.0, 2.0], "cpu": [1.0, 1.0]}
  assert "could not be registered" not in stderr


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
