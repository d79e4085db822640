"""Host<->device transfer workloads and the memcpy bandwidth they are compared with."""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from tools.bench.config import BenchConfig, size_name
from tools.bench.records import Measurement
from tools.bench.timing import median_of_calls, median_seconds

ZERO_COPY_ALIGNMENT = 64
"""Host alignment XLA:CPU needs to alias a host buffer (cpu::MinAlign, EIGEN_MAX_ALIGN_BYTES)."""


def host_array(nbytes: int, *, aligned: bool = False) -> np.ndarray:
  """A float32 array of `nbytes` with known, non-zero contents, at a fixed alignment.

  By default the data starts 16 bytes past a ZERO_COPY_ALIGNMENT boundary, where glibc's malloc
  puts numpy's large arrays (an mmap'd chunk plus its 16-byte header): what users hand to
  device_put, and too little alignment for XLA:CPU to alias. With `aligned` it starts on the
  boundary. Fixing the offset keeps runs comparable (numpy's own small arrays land anywhere).
  """
  offset_in_block = 0 if aligned else 16
  raw = np.empty(nbytes + 2 * ZERO_COPY_ALIGNMENT, dtype=np.uint8)
  start = (-raw.ctypes.data) % ZERO_COPY_ALIGNMENT + offset_in_block
  out = raw[start:start + nbytes].view(np.float32)
  out[:] = np.arange(nbytes // 4, dtype=np.float32) % 1021.0
  return out


def _alignment_note(array: np.ndarray) -> str:
  return f"source address % 64 = {array.ctypes.data % 64}"


def memcpy(config: BenchConfig) -> list[Measurement]:
  """numpy copy into a preallocated array, per transfer size (the bandwidth reference)."""
  out = []
  for nbytes in config.transfer_sizes:
    src = host_array(nbytes)
    dst = np.empty_like(src)
    seconds = median_seconds(lambda: np.copyto(dst, src), repeats=config.transfer_repeats(nbytes))
    if not np.array_equal(dst, src):
      raise AssertionError("memcpy baseline copied the wrong data")
    out.append(Measurement(f"memcpy_{size_name(nbytes)}", f"memcpy {size_name(nbytes)}", "memcpy",
                           seconds, nbytes=nbytes))
    del src, dst
  return out


def host_to_device(config: BenchConfig, device: Any) -> list[Measurement]:
  """jax.device_put of a numpy array, waited for, per transfer size; plus one aligned source."""
  import jax  # pylint: disable=g-import-not-at-top

  cases = [(nbytes, False) for nbytes in config.transfer_sizes]
  cases.append((config.transfer_sizes[min(2, len(config.transfer_sizes) - 1)], True))
  out = []
  for nbytes, aligned in cases:
    src = host_array(nbytes, aligned=aligned)
    check = jax.device_put(src, device)
    if float(check[-1]) != float(src[-1]):
      raise AssertionError("device_put produced the wrong data")
    del check
    seconds = median_seconds(lambda: jax.device_put(src, device).block_until_ready(),
                             repeats=config.transfer_repeats(nbytes))
    name = size_name(nbytes) + ("_aligned64" if aligned else "")
    label = f"device_put {size_name(nbytes)}" + (" (64B-aligned src)" if aligned else "")
    out.append(Measurement(f"h2d_{name}", label, "transfer", seconds, nbytes=nbytes,
                           note=_alignment_note(src)))
    del src
  return out


KEPT_ALIVE_BYTES = 64 << 20
"""Size of each put of the arrays-kept-alive pattern."""
KEPT_ALIVE_COUNT = 8
"""Arrays kept alive at once in that pattern (512 MiB of 64 MiB puts)."""


def host_to_device_kept(config: BenchConfig, device: Any) -> list[Measurement]:
  """device_put of 64 MiB misaligned numpy arrays whose results stay alive.

  The other pattern of `host_to_device` drops each result before the next put, which lets a
  pool hand the same block back every time. Here every sample puts KEPT_ALIVE_COUNT arrays and
  keeps them all (as a training loop keeps its inputs or a user keeps a dataset), so no put of a
  sample can reuse the memory of another; the arrays are deleted between samples. Two rows: the
  first sample alone (every put gets memory the process never had: first touches) and the median
  over all samples (later samples may reuse what the earlier ones released).
  """
  import jax  # pylint: disable=g-import-not-at-top

  src = host_array(KEPT_ALIVE_BYTES)
  samples = max(3, config.transfer_repeats(KEPT_ALIVE_BYTES) // 3)
  first: list[float] = []
  every: list[float] = []
  for sample in range(samples):
    kept = []
    for _ in range(KEPT_ALIVE_COUNT):
      start = time.perf_counter()
      kept.append(jax.device_put(src, device).block_until_ready())
      elapsed = time.perf_counter() - start
      every.append(elapsed)
      if sample == 0:
        first.append(elapsed)
    if float(kept[-1][-1]) != float(src[-1]) or float(kept[0][1]) != float(src[1]):
      raise AssertionError("device_put (kept alive) produced the wrong data")
    for array in kept:
      array.delete()
    del kept
  name = size_name(KEPT_ALIVE_BYTES)
  note = f"{KEPT_ALIVE_COUNT} arrays alive per sample; {_alignment_note(src)}"
  return [
      Measurement(f"h2d_{name}_kept_first", f"device_put {name}, kept alive, first sample",
                  "transfer", statistics.median(first), nbytes=KEPT_ALIVE_BYTES, note=note),
      Measurement(f"h2d_{name}_kept", f"device_put {name}, kept alive", "transfer",
                  statistics.median(every), nbytes=KEPT_ALIVE_BYTES, note=note),
  ]


def device_to_host(config: BenchConfig, device: Any) -> list[Measurement]:
  """np.asarray of fresh device arrays (made and waited for before the timing starts, so no
  allocation or free of another array overlaps a sample), per transfer size."""
  import jax  # pylint: disable=g-import-not-at-top

  out = []
  for nbytes in config.transfer_sizes:
    src = host_array(nbytes)
    count = config.transfer_repeats(nbytes) + 1  # One warm-up conversion.
    if nbytes >= 256 << 20:
      count = min(count, 4)  # At most 2 GiB of device arrays at once.
    arrays = [jax.device_put(src, device) for _ in range(count)]
    jax.block_until_ready(arrays)
    probe = np.asarray(arrays[0])
    if float(probe[-1]) != float(src[-1]) or probe.shape != src.shape:
      raise AssertionError("np.asarray returned the wrong data")
    aliased = probe.ctypes.data == arrays[0].unsafe_buffer_pointer()
    del probe
    seconds = median_of_calls(np.asarray, arrays[1:])
    out.append(Measurement(f"d2h_{size_name(nbytes)}", f"np.asarray {size_name(nbytes)}",
                           "transfer", seconds, nbytes=nbytes,
                           note="zero copy: the result is a view of the device buffer" if aliased
                           else "the result is a copy"))
    del arrays, src
  return out
