"""`isa_variants`: one kernel source compiled per instruction set (see simd.h)."""

_VARIANTS = {
    "avx512": (16, ["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx2", "-mfma"]),
    "avx2": (8, ["-mavx2", "-mfma"]),
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
    for isa, (lanes, flags) in _VARIANTS.items():
        native.cc_library(
            name = name + "_" + isa,
            srcs = srcs,
            hdrs = hdrs,
            copts = ["-fPIC", "-O3", "-Wno-psabi"] + flags,
            defines = [],
            local_defines = ["PJRTKIT_ISA=" + isa, "PJRTKIT_VEC_WIDTH=%d" % lanes],
            deps = deps,
        )
        variants.append(":" + name + "_" + isa)
    native.cc_library(name = name, hdrs = hdrs, deps = variants)
