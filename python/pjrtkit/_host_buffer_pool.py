"""The host buffer pool of pjrtkit's reference devices, from Python.

The CPU device copies host data into host memory blocks that it keeps for reuse once their
arrays are gone (up to the create option ``host_buffer_cache_mib``, 512 MiB by default; a block
unused for a second is given back by itself). ``jax.Device.memory_stats()`` counts the kept
blocks only indirectly (``pool_bytes - bytes_in_use``: the PJRT memory stats have no slot for
them); these functions are the explicit interface. They reach the plugin through its PJRT C API
extension (``xla_plugin/abi/pjrtkit_extension.h``), and act on every pjrtkit client of this
process that has not been destroyed: JAX makes one per process.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os


@dataclasses.dataclass(frozen=True)
class HostBufferPoolStats:
  """What the host buffer pools of this process's pjrtkit clients hold (summed over clients).

  Attributes:
    held_bytes: bytes of blocks kept for reuse (what ``trim_host_buffer_pool`` gives back).
    held_blocks: how many blocks those are.
    in_use_bytes: bytes of pool blocks backing live arrays.
    in_use_blocks: how many blocks those are.
    limit_bytes: the most the pools keep (``host_buffer_cache_mib``; 0 when the pool is off).
    clients: pjrtkit clients counted (0 before JAX created its pjrtkit backend).
  """

  held_bytes: int
  held_blocks: int
  in_use_bytes: int
  in_use_blocks: int
  limit_bytes: int
  clients: int


def _call(trim: bool) -> tuple[int, HostBufferPoolStats]:
  """Calls the extension's ``host_buffer_pool``; returns (bytes trimmed, stats after)."""
  # Imported here: `import pjrtkit` must not import JAX's plugin package.
  from jax_plugins.pjrtkit import _paths  # pylint: disable=g-import-not-at-top
  from jax_plugins.pjrtkit import _pjrt_binding  # pylint: disable=g-import-not-at-top

  library = _paths.plugin_library_path()
  # The library JAX loaded (dlopen returns the same handle for the same file).
  get_api = ctypes.CDLL(os.fspath(library), mode=os.RTLD_LOCAL).GetPjrtApi
  get_api.restype = ctypes.c_void_p
  extension = _pjrt_binding.BindingExtension.from_c_api(int(get_api()))
  args = extension.host_buffer_pool(trim)
  stats = HostBufferPoolStats(
      held_bytes=int(args.held_bytes), held_blocks=int(args.held_blocks),
      in_use_bytes=int(args.in_use_bytes), in_use_blocks=int(args.in_use_blocks),
      limit_bytes=int(args.limit_bytes), clients=int(args.clients))
  return int(args.trimmed_bytes), stats


def host_buffer_pool_stats() -> HostBufferPoolStats:
  """Returns what the host buffer pools of this process's pjrtkit clients hold.

  Raises:
    OSError: when the plugin library cannot be loaded.
    LookupError: when the plugin predates this interface (rebuild it).
  """
  return _call(trim=False)[1]


def trim_host_buffer_pool() -> int:
  """Gives the blocks the host buffer pools keep for reuse back to the system now.

  Arrays still alive keep their blocks; the next transfers allocate fresh memory.

  Returns:
    The bytes given back (0 when nothing was kept, or before JAX created its pjrtkit backend).

  Raises:
    OSError: when the plugin library cannot be loaded.
    LookupError: when the plugin predates this interface (rebuild it).
  """
  return _call(trim=True)[0]
