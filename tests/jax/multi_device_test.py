"""JAX's multi-device APIs over pjrtkit's 4 devices, with exact values.

pmap, shard_map, jit over a Mesh with NamedSharding, the collectives (psum, all_gather,
ppermute, all_to_all) under both pmap and shard_map, device_put between devices. Each test runs
one child interpreter on the Bazel-built plugin.
"""

from __future__ import annotations

import sys

import pytest

from tests.testing.plugin_env import plugin_env, run_python

_ENV = {"JAX_PLATFORMS": "pjrtkit"}


def test_pmap_collectives_exact_values():
  got = run_python("""
      import json, numpy as np, jax, jax.numpy as jnp
      x = jnp.arange(4.0)
      m = jnp.arange(16.0).reshape(4, 4)
      out = {
          "n": jax.device_count(),
          "psum": jax.pmap(lambda a: jax.lax.psum(a, 'i'), axis_name='i')(x),
          "pmean": jax.pmap(lambda a: jax.lax.pmean(a, 'i'), axis_name='i')(x),
          "pmax": jax.pmap(lambda a: jax.lax.pmax(a, 'i'), axis_name='i')(x),
          "index": jax.pmap(lambda a: a * 0 + jax.lax.axis_index('i'), axis_name='i')(x),
          "all_gather": jax.pmap(lambda a: jax.lax.all_gather(a, 'i'), axis_name='i')(x),
          "ppermute": jax.pmap(
              lambda a: jax.lax.ppermute(a, 'i', [(j, (j + 1) % 4) for j in range(4)]),
              axis_name='i')(x),
          "all_to_all": jax.pmap(lambda a: jax.lax.all_to_all(a, 'i', 0, 0),
                                 axis_name='i')(m),
          "rows": jax.pmap(lambda r: r @ r, axis_name='i')(m),
      }
      shards = jax.pmap(lambda a: a * 10)(x)
      out["shard_devices"] = [s.device.id for s in shards.addressable_shards]
      print(json.dumps({k: (np.asarray(v).tolist() if not isinstance(v, (int, list)) else v)
                        for k, v in out.items()}))
  """, env=plugin_env(**_ENV))
  assert got["n"] == 4
  assert got["psum"] == [6.0, 6.0, 6.0, 6.0]
  assert got["pmean"] == [1.5, 1.5, 1.5, 1.5]
  assert got["pmax"] == [3.0, 3.0, 3.0, 3.0]
  assert got["index"] == [0.0, 1.0, 2.0, 3.0]
  assert got["all_gather"] == [[0.0, 1.0, 2.0, 3.0]] * 4
  assert got["ppermute"] == [3.0, 0.0, 1.0, 2.0]
  # all_to_all over axis 0 of a 4x4 split one row per device is a transpose.
  assert got["all_to_all"] == [[float(4 * c + r) for c in range(4)] for r in range(4)]
  assert got["rows"] == [float(sum((4 * r + c) ** 2 for c in range(4))) for r in range(4)]
  assert got["shard_devices"] == [0, 1, 2, 3]


def test_shard_map_collectives_exact_values():
  got = run_python("""
      import json, numpy as np, jax, jax.numpy as jnp
      from jax.sharding import Mesh, PartitionSpec as P
      mesh = Mesh(np.array(jax.devices()), ('i',))
      def smap(f, out_specs):
        return jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P('i'), out_specs=out_specs))
      x = jnp.arange(8.0)            # two elements per device
      ring = [(j, (j + 1) % 4) for j in range(4)]
      out = {
          # Each device holds its own copy of the sum of the four blocks.
          "psum": smap(lambda a: jax.lax.psum(a, 'i'), P('i'))(x),
          "all_gather": smap(lambda a: jax.lax.all_gather(a, 'i', tiled=True), P('i'))(x),
          "ppermute": smap(lambda a: jax.lax.ppermute(a, 'i', ring), P('i'))(x),
          "all_to_all": smap(lambda a: jax.lax.all_to_all(a, 'i', 0, 0, tiled=True),
                             P('i'))(jnp.arange(16.0)),
          "psum_scatter": smap(lambda a: jax.lax.psum_scatter(a, 'i', tiled=True),
                               P('i'))(jnp.arange(16.0)),
          "axis_index": smap(lambda a: a * 0 + jax.lax.axis_index('i'), P('i'))(x),
      }
      print(json.dumps({k: np.asarray(v).tolist() for k, v in out.items()}))
  """, env=plugin_env(**_ENV))
  assert got["psum"] == [12.0, 16.0] * 4
  assert got["all_gather"] == [float(v) for v in range(8)] * 4
  assert got["ppermute"] == [6.0, 7.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
  # Device d receives block d of every device's 4-element slice: element d of each.
  assert got["all_to_all"] == [float(4 * s + d) for d in range(4) for s in range(4)]
  # Device d's scatter: sum over devices s of element d of their 4-element slices.
  assert got["psum_scatter"] == [float(sum(4 * s + d for s in range(4))) for d in range(4)]
  assert got["axis_index"] == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]


def test_jit_with_named_sharding_over_meshes():
  got = run_python("""
      import json, numpy as np, jax, jax.numpy as jnp
      from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
      devs = jax.devices()
      mesh1 = Mesh(np.array(devs), ('i',))
      mesh2 = Mesh(np.array(devs).reshape(2, 2), ('a', 'b'))
      x = jnp.arange(16.0).reshape(4, 4)
      rows = jax.device_put(x, NamedSharding(mesh1, P('i')))
      grid = jax.device_put(x, NamedSharding(mesh2, P('a', 'b')))
      colsum = jax.jit(lambda a: (a * 2).sum(axis=0),
                       out_shardings=NamedSharding(mesh1, P()))(rows)
      gram = jax.jit(lambda a: a @ a.T,
                     out_shardings=NamedSharding(mesh2, P('a', None)))(grid)
      resharded = jax.jit(lambda a: a + 1, out_shardings=NamedSharding(mesh2, P(None, 'b')))(rows)
      def shards(arr):
        return sorted((s.device.id, [list(i.indices(n)[:2]) for i, n in zip(s.index, arr.shape)],
                       np.asarray(s.data).tolist()) for s in arr.addressable_shards)
      print(json.dumps({
          "rows": shards(rows), "grid": shards(grid),
          "colsum": np.asarray(colsum).tolist(),
          "colsum_replicated": colsum.sharding.is_fully_replicated,
          "gram": np.asarray(gram).tolist(),
          "gram_spec": list(gram.sharding.spec),
          "gram_shard_shapes": sorted({tuple(s.data.shape) for s in gram.addressable_shards}),
          "resharded": np.asarray(resharded).tolist(),
          "resharded_devices": sorted(resharded.sharding.device_set, key=lambda d: d.id)[0].platform,
      }))
  """, env=plugin_env(**_ENV))
  x = [[float(4 * r + c) for c in range(4)] for r in range(4)]
  assert got["rows"] == [[d, [[d, d + 1], [0, 4]], [x[d]]] for d in range(4)]
  assert got["grid"] == [
      [0, [[0, 2], [0, 2]], [[0.0, 1.0], [4.0, 5.0]]],
      [1, [[0, 2], [2, 4]], [[2.0, 3.0], [6.0, 7.0]]],
      [2, [[2, 4], [0, 2]], [[8.0, 9.0], [12.0, 13.0]]],
      [3, [[2, 4], [2, 4]], [[10.0, 11.0], [14.0, 15.0]]],
  ]
  assert got["colsum"] == [48.0, 56.0, 64.0, 72.0]
  assert got["colsum_replicated"] is True
  assert got["gram"] == [[sum(a * b for a, b in zip(x[i], x[j])) for j in range(4)]
                         for i in range(4)]
  assert got["gram_spec"] == ["a", None]
  assert got["gram_shard_shapes"] == [[2, 4]]
  assert got["resharded"] == [[v + 1 for v in row] for row in x]
  assert got["resharded_devices"] == "pjrtkit"


def test_device_put_between_devices_and_donation_across_shards():
  got = run_python("""
      import json, warnings, numpy as np, jax, jax.numpy as jnp
      from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
      warnings.simplefilter('error')   # a donation warning fails the test
      devs = jax.devices()
      hops = []
      y = jax.device_put(jnp.arange(3), devs[0])
      for d in (2, 3, 1, 0):
        y = jax.device_put(y, devs[d])
        hops.append([sorted(x.id for x in y.devices()), np.asarray(y).tolist()])
      z = jax.jit(lambda a: a * 5)(jax.device_put(jnp.arange(3), devs[3]))
      mesh = Mesh(np.array(devs), ('i',))
      s = NamedSharding(mesh, P('i'))
      xs = jax.device_put(jnp.arange(8.0), s)
      before = sorted(sh.data.unsafe_buffer_pointer() for sh in xs.addressable_shards)
      ys = jax.jit(lambda a: a * 3, donate_argnums=0, out_shardings=s)(xs)
      after = sorted(sh.data.unsafe_buffer_pointer() for sh in ys.addressable_shards)
      pm = jax.pmap(lambda a: a)(jnp.arange(8.0).reshape(4, 2))   # already one row per device
      pm2 = jax.pmap(lambda a: a * 2, donate_argnums=0)(pm)
      print(json.dumps({"hops": hops, "z": np.asarray(z).tolist(),
                        "z_device": sorted(x.id for x in z.devices()),
                        "donated_deleted": xs.is_deleted(), "reused": before == after,
                        "ys": np.asarray(ys).tolist(), "pmap_donated": pm.is_deleted(),
                        "pm2": np.asarray(pm2).tolist()}))
  """, env=plugin_env(**_ENV))
  assert got["hops"] == [[[2], [0, 1, 2]], [[3], [0, 1, 2]], [[1], [0, 1, 2]], [[0], [0, 1, 2]]]
  assert got["z"] == [0, 5, 10]
  assert got["z_device"] == [3]
  assert got["donated_deleted"] is True
  assert got["reused"] is True
  assert got["ys"] == [3.0 * v for v in range(8)]
  assert got["pmap_donated"] is True
  assert got["pm2"] == [[2.0 * (2 * r + c) for c in range(2)] for r in range(4)]


if __name__ == "__main__":
  sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))
