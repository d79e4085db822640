"""pjrtkit's benchmark: the same workloads on jaxlib's `cpu`, OpenXLA's XLA:CPU plugin loaded
directly, and `pjrtkit`, one backend per child process, reported as ratios measured in one run.

Run it from the repository root with ``.venv/bin/python -m tools.bench`` (or
``bash tools/bench/run.sh``); see README.md in this folder.
"""
