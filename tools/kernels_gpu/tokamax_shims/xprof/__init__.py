"""A stand-in for xprof, carried instead of its 32 MB wheel (tools/kernels_gpu/tokamax_wheels.txt).

Tokamax imports `xprof.cli.tools.get_kernel_stats_tool` at import time for its xprof timing method;
the kernel comparison times with pjrtkit.kernels.benchmarking (CUPTI) and never calls it.
"""
