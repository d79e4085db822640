"""Programs pjrtkit refuses on the reference device instead of computing them wrongly (JAX's own tests found
them: tools/jax_suite). Each check runs in a fresh interpreter on pjrtkit and on jaxlib's cpu."""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_GRAD_THROUGH_REDUCED = """
    import json, jax, numpy as np
    from jax.sharding import PartitionSpec as P, AxisType
    mesh = jax.make_mesh((2,), ('x',), axis_types=(AxisType.Explicit,),
                         devices=jax.devices()[:2])
    with jax.set_mesh(mesh):
      arr = jax.device_put(np.arange(8.), P('x'))
      @jax.shard_map(out_specs=P(reduced={'x'}))
      def f(x):
        return jax.lax.all_gather(x, 'x', tiled=True, to='reduced')
      try:
        out = np.asarray(jax.grad(lambda x: f(x).sum())(arr)).tolist()
      except Exception as e:
        out = f"{type(e).__name__}: {e}"
    print(json.dumps(out))
"""


def test_reduced_axes_compute_right_on_jaxlibs_cpu():
  got = run_python(_GRAD_THROUGH_REDUCED, env=plugin_env(
      JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=4"))
  assert got == [1.0] * 8


def test_reduced_axes_are_refused_on_pjrtkit_instead_of_wrong_values():
  got = run_python(_GRAD_THROUGH_REDUCED, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))
  assert isinstance(got, str), f"pjrtkit computed {got} (jaxlib's cpu: all ones)"
  assert got == ("NotImplementedError: pjrtkit: the program uses Shardy unreduced axes (a "
                 "sharding with `unreduced={...}`, e.g. from PartitionSpec(unreduced=...)), "
                 "which the XLA:CPU of xla-cpu-pjrt 0.0.1 that pjrtkit's reference device runs "
                 "on partitions incorrectly (wrong values, or a process abort); pjrtkit refuses "
                 "to compile it (set PJRTKIT_ALLOW_UNSUPPORTED_PROGRAMS=1 to compile it anyway, "
                 "at your own risk)")


def test_the_refusal_can_be_lifted_and_then_xla_cpu_computes_it_wrongly():
  got = run_python(_GRAD_THROUGH_REDUCED, env=plugin_env(
      JAX_PLATFORMS="pjrtkit,cpu", PJRTKIT_ALLOW_UNSUPPORTED_PROGRAMS="1"))
  assert got == [2.0] * 8  # XLA:CPU 0.0.1's wrong answer (jaxlib's cpu: all ones).


def test_unreduced_sum_that_aborted_the_process_is_an_error():
  got = run_python("""
      import json, jax, jax.numpy as jnp, numpy as np
      from jax.sharding import PartitionSpec as P, AxisType
      mesh = jax.make_mesh((2, 2), ('x', 'y'), axis_types=(AxisType.Explicit,) * 2)
      with jax.set_mesh(mesh):
        inp1 = jax.device_put(np.arange(16).reshape(8, 2), P('x', 'y'))
        inp2 = jax.device_put(np.arange(8).reshape(2, 4), P('y', None))
        try:
          arr = jnp.dot(inp1, inp2, out_sharding=P('x', unreduced={'y'}))
          f = jax.jit(lambda x: jax.lax.reduce_sum(x, axes=[0], out_sharding=P(unreduced={'x'})))
          out = str(f(arr).sharding)
        except Exception as e:
          out = f"{type(e).__name__}: {str(e).splitlines()[0]}"
      print(json.dumps(out))
  """, env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))
  assert got.startswith("NotImplementedError: pjrtkit: the program uses Shardy unreduced "
                        "axes"), got


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))


_GPU_KERNEL_EXPORTED = """
    import json, jax, jax.numpy as jnp, numpy as np
    target = "__gpu$xla.gpu.triton"
    f = jax.jit(lambda x: jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((4,), jnp.float32))(x))
    x = np.ones(4, np.float32)
    exported = jax.export.export(
        f, disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(target)])(x)
    back = jax.export.deserialize(exported.serialize())
    try:
      back.call(x)
      out = "ran"
    except Exception as e:
      out = f"{type(e).__name__}: {e}"
    print(json.dumps(out))
"""


def test_gpu_kernels_exported_elsewhere_are_refused_on_the_cpu_device():
  # As if exported on pjrtkit's GPU device (both devices are platform 'pjrtkit', so JAX's own
  # platform check lets it through): a clear error instead of XLA:CPU's missing-handler failure.
  got = run_python(_GPU_KERNEL_EXPORTED,
                   env=plugin_env(JAX_PLATFORMS="pjrtkit,cpu"))
  assert got == ("ValueError: pjrtkit: the program calls Pallas Triton kernels (custom call "
                 "'__gpu$xla.gpu.triton'), which only pjrtkit's xla_gpu device runs; this is "
                 "pjrtkit's xla_cpu device (device kind 'pjrtkit_cpu'). A program exported "
                 "(jax.export) on one pjrtkit device runs only on that device kind: export it "
                 "again on this one, or choose an implementation this device has")
