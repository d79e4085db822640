"""Stage 2 of ``ptxas_local``: compiles one serialized Mosaic GPU module with the custom call's own
compile step, ``MosaicGpuCompile`` exported by jax's ``xla_cuda_plugin.so``.

  python tools/kernels_gpu/ptxas_compile.py PLUGIN_SO MODULE

That is the ``mosaic_gpu`` custom call's pass pipeline, LLVM's NVPTX back end and ptxas, all on
the CPU. ``ptxas_local`` runs it in a clean environment: the fake ``libcuda.so.1`` on
``LD_LIBRARY_PATH`` answers compute capability 9.0, ``MOSAIC_GPU_CUDA_ROOT`` and
``./cuda_sdk_lib`` lead to the pinned ptxas, and ``MOSAIC_GPU_DUMP_PTX`` /
``MOSAIC_GPU_DUMP_PTXAS`` make the plugin print the PTX and ``ptxas -v``'s lines to stdout. After
ptxas the host-side JIT fails (no CUDA runtime, no device) and the call returns null: expected.
Only the standard library is imported, so that nothing but the plugin is loaded.
"""

import ctypes
import sys


def main(argv: list) -> int:
  plugin = ctypes.CDLL(argv[0])
  with open(argv[1], "rb") as f:
    data = f.read()
  compile_fn = plugin.MosaicGpuCompile
  compile_fn.argtypes = [ctypes.c_char_p, ctypes.c_int]
  compile_fn.restype = ctypes.c_void_p
  result = compile_fn(data, len(data))
  sys.stdout.flush()
  print(f"\nMOSAIC_GPU_COMPILE_RESULT {'null' if not result else 'ok'}", flush=True)
  return 0


if __name__ == "__main__":
  raise SystemExit(main(sys.argv[1:]))
