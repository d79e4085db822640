"""Repository rules that make pjrtkit build offline.

`pjrtkit_venv` exposes what the build needs from the project virtualenv (`.venv` at the workspace
root, made by `tools/setup.sh`): OpenXLA's PJRT C API headers (`.venv/pjrt_headers`, fetched as
`tools/pjrt_headers/headers.lock` pins), the 0.81 header shipped by `xla-cpu-pjrt`, the XLA FFI
headers shipped by jaxlib, pybind11 and the Python headers, the XLA:CPU plugin binary, the StableHLO
C API library shipped by `torch-mlir` (`libTorchMLIRAggregateCAPI.so`, which
//xla_plugin/stablehlo loads at run time), and a Python toolchain whose interpreter is the venv's
python, so that `py_test` runs with jax installed.

`pjrtkit_system_gtest` exposes Debian's googletest (package libgtest-dev).
"""

_VENV_BUILD = """
load("@bazel_tools//tools/python:toolchain.bzl", "py_runtime_pair")

package(default_visibility = ["//visibility:public"])

# OpenXLA's PJRT C API headers: pjrt_c_api.h and its extension headers at the version pinned in
# tools/pjrt_headers/headers.lock (tools/setup.sh fetches them into .venv/pjrt_headers).
cc_library(
    name = "pjrt_c_api",
    hdrs = glob(["include/xla/pjrt/c/*.h", "include/xla/backends/profiler/plugin/*.h"]),
    includes = ["include"],
)

# The PJRT C API 0.81 header that xla-cpu-pjrt 0.0.1 ships: for tests of callers built against
# an older header than pjrtkit's (never mixed with :pjrt_c_api in one target).
cc_library(
    name = "pjrt_c_api_0_81",
    hdrs = ["include_0_81/xla/pjrt/c/pjrt_c_api.h"],
    includes = ["include_0_81"],
)

cc_library(
    name = "xla_ffi_api",
    hdrs = glob(["include/xla/ffi/api/*.h"]),
    includes = ["include"],
)

cc_library(
    name = "python_headers",
    hdrs = glob(["python_include/**/*.h"]),
    includes = ["python_include"],
)

cc_library(
    name = "pybind11",
    hdrs = glob(["pybind11_include/**/*.h"]),
    includes = ["pybind11_include"],
    deps = [":python_headers"],
)

filegroup(
    name = "pjrt_c_api_header",
    srcs = ["include/xla/pjrt/c/pjrt_c_api.h"],
)

filegroup(
    name = "pjrt_c_api_headers",
    srcs = glob(["include/xla/pjrt/c/*.h"]),
)

# Everything :pjrt_c_api compiles with (the c headers and the profiler header the profiler
# extension includes), for tools that compile against the set themselves (tools/pjrt_headers).
filegroup(
    name = "pjrt_c_api_include",
    srcs = glob(["include/xla/pjrt/c/*.h", "include/xla/backends/profiler/plugin/*.h"]),
)

filegroup(
    name = "pjrt_c_api_0_81_header",
    srcs = ["include_0_81/xla/pjrt/c/pjrt_c_api.h"],
)

filegroup(
    name = "xla_cpu_plugin",
    srcs = ["xla_cpu_pjrt.so"],
)

# torch-mlir's libTorchMLIRAggregateCAPI.so: the MLIR + StableHLO C API library that
# //xla_plugin/stablehlo dlopens (tests name it in `data`).
filegroup(
    name = "stablehlo_library",
    srcs = ["stablehlo/libTorchMLIRAggregateCAPI.so"],
)

py_runtime(
    name = "python3_runtime",
    interpreter_path = "{python}",
    python_version = "PY3",
    stub_shebang = "#!{python}",
)

py_runtime_pair(
    name = "runtime_pair",
    py3_runtime = ":python3_runtime",
)

toolchain(
    name = "python_toolchain",
    toolchain = ":runtime_pair",
    toolchain_type = "@bazel_tools//tools/python:toolchain_type",
)
"""

def _venv_impl(rctx):
    root = rctx.path(Label("@//:WORKSPACE")).dirname
    venv = root.get_child(".venv")
    python = venv.get_child("bin").get_child("python")
    if not python.exists:
        fail("pjrtkit: %s is missing; run tools/setup.sh first (README command 1 or 2 does)." % python)
    result = rctx.execute([str(python), "-c", "\n".join([
        "import sysconfig, pybind11, jaxlib, os, xla_plugins.xla_cpu_pjrt as x",
        "print(sysconfig.get_paths()['include'])",
        "print(pybind11.get_include())",
        "print(os.path.join(os.path.dirname(jaxlib.__file__), 'include'))",
        "print(os.path.dirname(x.__file__))",
        # torch_mlir is a namespace package: its folder comes from the spec's search locations.
        "import importlib.util",
        "s = importlib.util.find_spec('torch_mlir')",
        "print(list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else '')",
    ])])
    if result.return_code != 0:
        fail("pjrtkit: the venv lacks a build dependency:\n" + result.stderr)
    lines = result.stdout.split("\n")
    py_include, pybind_include, jaxlib_include, xla_cpu_dir, torch_mlir_dir = lines[:5]
    stablehlo_library = torch_mlir_dir + "/_mlir_libs/libTorchMLIRAggregateCAPI.so"
    if not torch_mlir_dir or not rctx.path(stablehlo_library).exists:
        fail("pjrtkit: the venv lacks torch-mlir's libTorchMLIRAggregateCAPI.so (the StableHLO " +
             "library //xla_plugin/stablehlo loads); run tools/setup.sh (requirements.lock pins " +
             "torch-mlir).")
    headers = venv.get_child("pjrt_headers")
    if not headers.get_child("xla").get_child("pjrt").get_child("c").get_child("pjrt_c_api.h").exists:
        fail("pjrtkit: %s lacks the PJRT C API headers; run tools/setup.sh (it runs " % headers +
             "tools/pjrt_headers/fetch_headers.py --dest .venv/pjrt_headers).")
    rctx.symlink(str(headers) + "/xla/pjrt/c", "include/xla/pjrt/c")
    rctx.symlink(str(headers) + "/xla/backends", "include/xla/backends")
    rctx.symlink(xla_cpu_dir + "/include/pjrt_c_api.h", "include_0_81/xla/pjrt/c/pjrt_c_api.h")
    rctx.symlink(jaxlib_include + "/xla/ffi", "include/xla/ffi")
    rctx.symlink(py_include, "python_include")
    rctx.symlink(pybind_include, "pybind11_include")
    rctx.symlink(xla_cpu_dir + "/xla_cpu_pjrt.so", "xla_cpu_pjrt.so")
    rctx.symlink(stablehlo_library, "stablehlo/libTorchMLIRAggregateCAPI.so")
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD", _VENV_BUILD.replace("{python}", str(python)))

pjrtkit_venv = repository_rule(
    implementation = _venv_impl,
    local = True,
    doc = "Headers, the XLA:CPU and StableHLO libraries and a Python toolchain from the project venv.",
)

_GTEST_BUILD = """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "gtest",
    srcs = ["lib/libgtest.a"],
    hdrs = glob(["include/gtest/**/*.h"]),
    includes = ["include"],
    linkopts = ["-pthread"],
)

cc_library(
    name = "gtest_main",
    srcs = ["lib/libgtest_main.a"],
    deps = [":gtest"],
)
"""

def _system_gtest_impl(rctx):
    header = rctx.path("/usr/include/gtest/gtest.h")
    if not header.exists:
        fail("pjrtkit: googletest is missing; `apt-get install libgtest-dev` (tools/setup.sh does).")
    lib = None
    for candidate in ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"]:
        if rctx.path(candidate + "/libgtest.a").exists:
            lib = candidate
            break
    if lib == None:
        fail("pjrtkit: libgtest.a not found; `apt-get install libgtest-dev`.")
    rctx.symlink("/usr/include/gtest", "include/gtest")
    rctx.symlink(lib + "/libgtest.a", "lib/libgtest.a")
    rctx.symlink(lib + "/libgtest_main.a", "lib/libgtest_main.a")
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD", _GTEST_BUILD)

pjrtkit_system_gtest = repository_rule(
    implementation = _system_gtest_impl,
    local = True,
    doc = "Debian's googletest (libgtest-dev) as @gtest//:gtest and @gtest//:gtest_main.",
)

_OLDEST_BUILD = """
package(default_visibility = ["//visibility:public"])

# `python`: runs the oldest-JAX venv's interpreter (or explains how to make it).
exports_files(["python"])

filegroup(
    name = "interpreter",
    srcs = ["python"],
)
"""

# Checked when it runs, so a venv made after Bazel first saw this repository is found.
_OLDEST_PYTHON = """#!/bin/sh
if [ ! -x "{python}" ]; then
  echo "pjrtkit: {python} is missing; run 'bash tools/setup.sh --oldest-jax' (tools/test.sh does)." >&2
  exit 1
fi
exec "{python}" "$@"
"""

def _oldest_jax_venv_impl(rctx):
    root = rctx.path(Label("@//:WORKSPACE")).dirname
    python = root.get_child(".venv-jax-oldest").get_child("bin").get_child("python")
    rctx.file("python", _OLDEST_PYTHON.replace("{python}", str(python)), executable = True)
    rctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % rctx.name)
    rctx.file("BUILD", _OLDEST_BUILD)

pjrtkit_oldest_jax_venv = repository_rule(
    implementation = _oldest_jax_venv_impl,
    local = True,
    doc = "The interpreter of .venv-jax-oldest (requirements-jax-oldest.lock) as @venv_oldest_jax//:python.",
)
