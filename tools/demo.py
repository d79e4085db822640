"""The main job: runs JAX on the pjrtkit plugin and prints what it computed.

Run by tools/main.sh (README command 1) as ``JAX_PLATFORMS=pjrtkit .venv/bin/python tools/demo.py``.
With ``--device-count N`` the plugin is created with the ``device_count`` create option.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str]) -> int:
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--device-count", type=int, default=None,
                      help="the device_count create option (default: the plugin's, 4)")
  args = parser.parse_args(argv)

  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

  jax.config.update("jax_platforms", "pjrtkit")
  if args.device_count is not None:
    jax.config.update("jax_pjrt_client_create_options", {"device_count": args.device_count})

  print("jax.devices():", jax.devices())
  print("platform:", jax.devices()[0].platform, "| device_count:", jax.device_count())
  print("jax.numpy.add(1, 1) ->", jnp.add(1, 1))
  print("jax.jit(lambda x: x * 2)(1.) ->", jax.jit(lambda x: x * 2)(1.))
  out = jax.pmap(lambda x: x + jax.lax.psum(x, "i"), axis_name="i")(jnp.arange(jax.device_count()))
  print("pmap(x + psum(x)) over", jax.device_count(), "devices ->", out)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
