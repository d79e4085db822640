"""`jax_py_test`: a JAX-facing test that runs on both ends of pjrtkit's supported JAX range.

`name` is a `py_test` on `.venv` (requirements.lock, the newest supported jax/jaxlib);
`name + "_oldest_jax"` runs the same file on `.venv-jax-oldest` (requirements-jax-oldest.lock, the
oldest), through `run_on_oldest_jax.sh`. Both share srcs, data and deps.
"""

def jax_py_test(name, srcs = None, data = [], deps = [], size = "medium", **kwargs):
    """Declares `name` (newest jax) and `name + "_oldest_jax"` (oldest jax) for one test file.

    Args:
      name: the test name; the file is `name + ".py"` unless `srcs` says otherwise.
      srcs: the test's Python files; the first one is run.
      data: runfiles both tests need.
      deps: py_library targets both tests import.
      size: the Bazel test size of both.
      **kwargs: passed to both (tags, timeout, shard_count, ...).
    """
    srcs = srcs or [name + ".py"]
    native.py_test(
        name = name,
        srcs = srcs,
        main = srcs[0],
        data = data,
        deps = deps,
        size = size,
        **kwargs
    )
    native.sh_test(
        name = name + "_oldest_jax",
        srcs = ["//tests/testing:run_on_oldest_jax.sh"],
        args = [
            "$(location @venv_oldest_jax//:python)",
            "$(location %s)" % srcs[0],
        ],
        data = srcs + data + deps + ["@venv_oldest_jax//:python"],
        size = size,
        **kwargs
    )
