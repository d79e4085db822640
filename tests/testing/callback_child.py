"""What the host-callback tests (tests/jax/host_callbacks*_test.py) share: the child processes'
prelude, their environment (JAX_PLATFORMS=pjrtkit,cpu: JAX's callback implementations place
arguments on the cpu backend, as on GPU/TPU) and a runner returning the child's JSON."""

from __future__ import annotations

import textwrap

from tests.testing.plugin_env import plugin_env, run_python

PRELUDE = """
import json
import numpy as np
import jax, jax.numpy as jnp
from jax.experimental import io_callback
from jax_plugins.pjrtkit import _host_callbacks
assert jax.default_backend() == "pjrtkit", jax.default_backend()
"""


def env(**extra: str) -> dict[str, str]:
  """The plugin's test environment with JAX_PLATFORMS=pjrtkit,cpu plus `extra`."""
  return plugin_env(JAX_PLATFORMS="pjrtkit,cpu", **extra)


def run(code: str, setup: str = "") -> dict:
  """Runs the prelude, `setup` (unindented) and `code` in a child; returns its JSON."""
  return run_python(PRELUDE + setup + textwrap.dedent(code), env=env())
