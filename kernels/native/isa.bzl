"""`isa_variants`: one kernel source compiled per instruction set (see simd.h); `native_kernel`:
an op's variants and its XLA FFI handlers, for //kernels/native:pjrtkit_kernels.so."""

# Per variant: float lanes, and the define that makes simd.h switch the instruction set on with
# `#pragma GCC target` after the standard headers. Not TU-wide -m flags: with those, the standard
# library's templates the variants share (std::vector's fill, ...) were compiled with AVX-512 in
# the avx512 object, and the linker keeps one copy of each for all three variants, so the avx2
# path ran AVX-512 instructions and died with SIGILL on a CPU without them (an AMD EPYC with
# AVX2 only, twelfth session). isa_test checks the built library for it.
_VARIANTS = {
    "avx512": (16, ["PJRTKIT_ISA_AVX512"]),
    "avx2": (8, ["PJRTKIT_ISA_AVX2"]),
    "generic": (4, []),
}

def isa_variants(name, srcs, hdrs, deps = []):
    """Declares `name`: `srcs` compiled as namespaces avx512, avx2 and generic.

    Args:
      name: the cc_library collecting the three variants.
      srcs: the kernel sources (compiled once per variant).
      hdrs: their header (declaring every variant's functions).
      deps: what the sources need.
    """
    variants = []
    for isa, (lanes, isa_defines) in _VARIANTS.items():
        native.cc_library(
            name = name + "_" + isa,
            srcs = srcs,
            hdrs = hdrs,
            copts = ["-fPIC", "-O3", "-Wno-psabi"],
            defines = [],
            local_defines = ["PJRTKIT_ISA=" + isa, "PJRTKIT_VEC_WIDTH=%d" % lanes] + isa_defines,
            deps = deps,
        )
        variants.append(":" + name + "_" + isa)
    native.cc_library(name = name, hdrs = hdrs, deps = variants)

def native_kernel(name, kernel_srcs, kernel_hdrs, ffi_srcs, ffi_deps = []):
    """Declares `name`_kernel (isa_variants) and `name`_ffi, the handlers calling it.

    The kernel sources get the library's bfloat16, parallel_for, scratch and simd; the handlers
    pick the variant with CpuFeatures::Pick and check buffers with ffi_checks. `name`_ffi is
    alwayslink: only its exported handler symbols hold it in the shared library.

    Args:
      name: the op's stem (ragged_dot, layer_norm, attention).
      kernel_srcs: the kernel sources, compiled once per instruction set.
      kernel_hdrs: their header, declaring every variant's functions.
      ffi_srcs: the XLA FFI handlers' sources.
      ffi_deps: more libraries the handlers use (their argument checks, say).
    """
    isa_variants(
        name = name + "_kernel",
        srcs = kernel_srcs,
        hdrs = kernel_hdrs,
        deps = [
            "//kernels/native:bfloat16",
            "//kernels/native:parallel_for",
            "//kernels/native:scratch",
            "//kernels/native:simd",
        ],
    )
    native.cc_library(
        name = name + "_ffi",
        srcs = ffi_srcs,
        copts = ["-fPIC"],
        deps = [
            ":" + name + "_kernel",
            "//kernels/native:cpu_features",
            "//kernels/native:ffi_checks",
            "@venv//:xla_ffi_api",
        ] + ffi_deps,
        alwayslink = True,
    )
