"""Generates the golden tables of the dot_general and convolution tests from JAX on the CPU.

Every case is one stablehlo.dot_general or stablehlo.convolution that jax.lax emits with exactly
the params written to the table (the script lowers each case and asserts the op's attributes and
types), run by XLA:CPU. Convolutions from gradients (jax.grad of a convolution) are taken from the
lowered gradient program: their params and operand shapes are read from the module, and the case
runs that convolution on random operands.

Tolerances per case: results accumulated in f32 (or f64) may differ from XLA:CPU's by the error
bound of recursive summation on either side, |error| <= 2 * K * u * sum|a*b| (u = 2^-24, 2^-53;
K = the number of products), so abs_tol = 4 * K * u * max(sum|a*b|) over the result; results
rounded to bf16/f16 may then differ by one unit in the last place: rel_tol = 2^-7 / 2^-10. Integer,
pred and integer-valued cases compare exactly (tolerances 0).

Regenerate (from the repository root):
  JAX_PLATFORMS=cpu .venv/bin/python \
      xla_plugin/devices/sim/kernels/testing/contraction_goldens.py \
      xla_plugin/devices/sim/kernels/testing
"""

import sys

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jaxlib.mlir.dialects import stablehlo as sh  # noqa: E402

RNG = np.random.RandomState(20261204)

CPP_TYPE = {
    "bool": "kPred", "int8": "kS8", "int16": "kS16", "int32": "kS32", "int64": "kS64",
    "uint8": "kU8", "uint16": "kU16", "uint32": "kU32", "uint64": "kU64",
    "float16": "kF16", "bfloat16": "kBF16", "float32": "kF32", "float64": "kF64",
    "complex64": "kC64", "complex128": "kC128",
    "float8_e4m3fn": "kF8E4M3FN", "float8_e5m2": "kF8E5M2",
}
ACC_U = {"float32": 2.0**-24, "float64": 2.0**-53}
RESULT_REL = {"bfloat16": 2.0**-7, "float16": 2.0**-10}


def random_array(shape, dtype, kind="real"):
    """Random values of `dtype`: uniform in [-1, 1) for floats, small or full-range ints."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.randint(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if kind == "full":
            return RNG.randint(info.min, info.max, size=shape, dtype=np.int64).astype(dtype) \
                if info.max < 2**62 else \
                RNG.randint(-2**62, 2**62, size=shape, dtype=np.int64).astype(dtype)
        low = 0 if info.min == 0 else -5
        return RNG.randint(low, 6, size=shape).astype(dtype)
    if kind == "int":
        values = RNG.randint(-4, 5, size=shape).astype(np.float64)
    else:
        values = RNG.uniform(-1, 1, size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        imag = RNG.randint(-4, 5, size=shape) if kind == "int" else RNG.uniform(-1, 1, size=shape)
        values = values + 1j * imag
    return values.astype(dtype)


def cpp_array(x):
    x = np.asarray(x)
    dims = ", ".join(str(d) for d in x.shape)
    return "{ElementType::%s, {%s}, \"%s\"}" % (CPP_TYPE[x.dtype.name], dims,
                                                x.tobytes().hex())


def cpp_list(values):
    return "{" + ", ".join(str(int(v)) for v in values) + "}"


def tolerances(result, magnitude, k, exact):
    """(abs_tol, rel_tol) for a result whose accumulator summed k products of magnitude."""
    if exact:
        return 0.0, 0.0
    name = np.dtype(result.dtype).name
    acc = "float64" if name in ("float64", "complex128") else "float32"
    abs_tol = 4.0 * max(k, 1) * ACC_U[acc] * float(np.max(magnitude, initial=0.0))
    return abs_tol, RESULT_REL.get(name, 0.0)


def magnitude_of(fn, lhs, rhs):
    """fn(|lhs|, |rhs|) in f64: sum of |a*b| per result element."""
    a = np.abs(np.asarray(lhs).astype(np.complex128)).astype(np.float64)
    b = np.abs(np.asarray(rhs).astype(np.complex128)).astype(np.float64)
    return np.asarray(fn(jnp.asarray(a), jnp.asarray(b), None))


def find_ops(module, name):
    found = []

    def walk(op):
        for region in op.regions:
            for block in region:
                for inner in block.operations:
                    if inner.operation.name == name:
                        found.append(inner.operation)
                    walk(inner.operation)

    walk(module.operation)
    return found


# ---------------------------------------------------------------------------------------------
# dot_general

def dot_case(name, lhs, rhs, lhs_batch, rhs_batch, lhs_contract, rhs_contract,
             preferred=None, exact=False):
    dims = ((tuple(lhs_contract), tuple(rhs_contract)), (tuple(lhs_batch), tuple(rhs_batch)))

    def fn(a, b, pref):
        return lax.dot_general(a, b, dims, preferred_element_type=pref)

    jitted = jax.jit(lambda a, b: fn(a, b, preferred))
    module = jitted.lower(lhs, rhs).compiler_ir("stablehlo")
    (op,) = find_ops(module, "stablehlo.dot_general")
    assert not find_ops(module, "stablehlo.convert"), name
    dn = sh.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
    assert list(dn.lhs_batching_dimensions) == list(lhs_batch), name
    assert list(dn.rhs_batching_dimensions) == list(rhs_batch), name
    assert list(dn.lhs_contracting_dimensions) == list(lhs_contract), name
    assert list(dn.rhs_contracting_dimensions) == list(rhs_contract), name
    result = np.asarray(jitted(lhs, rhs))
    k = int(np.prod([np.shape(lhs)[d] for d in lhs_contract], dtype=np.int64))
    abs_tol, rel_tol = tolerances(result, magnitude_of(fn, lhs, rhs) if not exact else 0, k,
                                  exact)
    return ("  {\"%s\", %s, %s, %s, %s,\n   %s,\n   %s,\n   %s,\n   %.9g, %.9g},\n" % (
        name, cpp_list(lhs_batch), cpp_list(rhs_batch), cpp_list(lhs_contract),
        cpp_list(rhs_contract), cpp_array(lhs), cpp_array(rhs), cpp_array(result), abs_tol,
        rel_tol))


def dot_cases():
    f32, bf16, f16 = np.float32, ml_dtypes.bfloat16, np.float16
    r = random_array
    yield dot_case("matmul_f32", r((4, 5), f32), r((5, 3), f32), [], [], [1], [0])
    yield dot_case("matmul_f32_packed", r((24, 64), f32), r((64, 40), f32), [], [], [1], [0])
    yield dot_case("matmul_f32_integers_exact", r((14, 260), f32, "int"),
                   r((260, 10), f32, "int"), [], [], [1], [0], exact=True)
    yield dot_case("matmul_rhs_transposed", r((8, 16), f32), r((10, 16), f32), [], [], [1], [1])
    yield dot_case("matmul_lhs_transposed", r((16, 8), f32), r((16, 10), f32), [], [], [0], [0])
    yield dot_case("batch_matmul", r((2, 3, 4), f32), r((2, 4, 5), f32), [0], [0], [2], [1])
    yield dot_case("batch_dims_reordered", r((2, 3, 4, 5), f32), r((5, 3, 2, 6), f32),
                   [0, 1], [2, 1], [3], [0])
    yield dot_case("batch_in_middle", r((4, 3, 5), f32), r((6, 3, 4), f32), [1], [1], [0], [2])
    yield dot_case("contracting_dims_reordered", r((3, 4, 5), f32), r((5, 6, 4), f32),
                   [], [], [1, 2], [2, 0])
    yield dot_case("contracting_and_batch_mixed", r((2, 3, 4, 5, 6), f32),
                   r((6, 4, 7, 2), f32), [0, 2], [3, 1], [4], [0])
    yield dot_case("batch_only_no_free", r((4, 7), f32), r((4, 7), f32), [0], [0], [1], [1])
    yield dot_case("vector_dot_rank0", r((5,), f32), r((5,), f32), [], [], [0], [0])
    yield dot_case("outer_product", r((3,), f32), r((4,), f32), [], [], [], [])
    yield dot_case("matvec", r((10, 300), f32), r((300,), f32), [], [], [1], [0])
    yield dot_case("vecmat", r((300,), f32), r((300, 10), f32), [], [], [0], [0])
    yield dot_case("empty_m", r((0, 5), f32), r((5, 3), f32), [], [], [1], [0], exact=True)
    yield dot_case("empty_k_zeros", r((3, 0), f32), r((0, 4), f32), [], [], [1], [0],
                   exact=True)
    yield dot_case("empty_batch", r((0, 2, 3), f32), r((0, 3, 2), f32), [0], [0], [2], [1],
                   exact=True)
    yield dot_case("bf16_to_f32", r((6, 40), bf16), r((40, 5), bf16), [], [], [1], [0],
                   preferred=np.float32)
    yield dot_case("bf16_to_bf16", r((6, 40), bf16), r((40, 5), bf16), [], [], [1], [0])
    yield dot_case("f16_to_f16", r((2, 5, 30), f16), r((2, 30, 3), f16), [0], [0], [2], [1])
    yield dot_case("f16_to_f32", r((5, 30), f16), r((30, 3), f16), [], [], [1], [0],
                   preferred=np.float32)
    yield dot_case("f8e4m3fn_to_f32", r((4, 24), ml_dtypes.float8_e4m3fn),
                   r((24, 3), ml_dtypes.float8_e4m3fn), [], [], [1], [0], preferred=np.float32)
    yield dot_case("f8e5m2_to_f32", r((4, 24), ml_dtypes.float8_e5m2),
                   r((24, 3), ml_dtypes.float8_e5m2), [], [], [1], [0], preferred=np.float32)
    yield dot_case("f64", r((7, 9), np.float64), r((9, 4), np.float64), [], [], [1], [0])
    yield dot_case("c64", r((3, 8), np.complex64), r((8, 2), np.complex64), [], [], [1], [0])
    yield dot_case("c64_integers_exact", r((3, 8), np.complex64, "int"),
                   r((8, 2), np.complex64, "int"), [], [], [1], [0], exact=True)
    yield dot_case("c128_batch", r((2, 3, 4), np.complex128), r((2, 4, 2), np.complex128),
                   [0], [0], [2], [1])
    yield dot_case("s8_to_s32", r((5, 64), np.int8, "full"), r((64, 3), np.int8, "full"),
                   [], [], [1], [0], preferred=np.int32, exact=True)
    yield dot_case("s8_to_s8_wraps", r((4, 9), np.int8, "full"), r((9, 3), np.int8, "full"),
                   [], [], [1], [0], exact=True)
    yield dot_case("s16_to_s16_wraps", r((4, 9), np.int16, "full"), r((9, 3), np.int16, "full"),
                   [], [], [1], [0], exact=True)
    yield dot_case("s32_wraps", r((4, 9), np.int32, "full"), r((9, 3), np.int32, "full"),
                   [], [], [1], [0], exact=True)
    yield dot_case("s64_wraps", r((3, 5), np.int64, "full"), r((5, 2), np.int64, "full"),
                   [], [], [1], [0], exact=True)
    yield dot_case("u8_to_u32", r((4, 40), np.uint8, "full"), r((40, 3), np.uint8, "full"),
                   [], [], [1], [0], preferred=np.uint32, exact=True)
    yield dot_case("u32_wraps", r((4, 9), np.uint32, "full"), r((9, 3), np.uint32, "full"),
                   [], [], [1], [0], exact=True)
    yield dot_case("u64_wraps", r((3, 5), np.uint64, "full"), r((5, 2), np.uint64, "full"),
                   [], [], [1], [0], exact=True)
    yield dot_case("s8_to_f32", r((4, 20), np.int8), r((20, 3), np.int8), [], [], [1], [0],
                   preferred=np.float32, exact=True)
    yield dot_case("pred", r((5, 7), np.bool_), r((7, 4), np.bool_), [], [], [1], [0],
                   exact=True)
    yield dot_case("pred_batch", r((2, 3, 4), np.bool_), r((2, 4, 3), np.bool_), [0], [0],
                   [2], [1], exact=True)


# ---------------------------------------------------------------------------------------------
# convolution

class Conv:
    """A convolution's params in StableHLO terms (the C++ ConvolutionParams fields)."""

    def __init__(self, lhs_spec, rhs_spec, out_spec, strides, padding, lhs_dilation,
                 rhs_dilation, reversal, feature_group_count=1, batch_group_count=1):
        self.lhs_spec, self.rhs_spec, self.out_spec = lhs_spec, rhs_spec, out_spec
        self.strides, self.padding = list(strides), [tuple(p) for p in padding]
        self.lhs_dilation, self.rhs_dilation = list(lhs_dilation), list(rhs_dilation)
        self.reversal = list(reversal)
        self.feature_group_count, self.batch_group_count = feature_group_count, batch_group_count

    @staticmethod
    def from_strings(lhs, rhs, out, lhs_shape, rhs_shape, **kw):
        dn = lax.conv_dimension_numbers(lhs_shape, rhs_shape, (lhs, rhs, out))
        s = len(lhs_shape) - 2
        kw.setdefault("strides", [1] * s)
        kw.setdefault("padding", [(0, 0)] * s)
        kw.setdefault("lhs_dilation", [1] * s)
        kw.setdefault("rhs_dilation", [1] * s)
        kw.setdefault("reversal", [False] * s)
        return Conv(tuple(dn.lhs_spec), tuple(dn.rhs_spec), tuple(dn.out_spec), **kw)

    @staticmethod
    def from_op(op):
        a = op.attributes
        dn = sh.ConvDimensionNumbers(a["dimension_numbers"])
        s = len(list(dn.input_spatial_dimensions))
        padding = np.array(list(map(int, a["padding"]))).reshape(s, 2) if s else []
        return Conv(
            (dn.input_batch_dimension, dn.input_feature_dimension,
             *dn.input_spatial_dimensions),
            (dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
             *dn.kernel_spatial_dimensions),
            (dn.output_batch_dimension, dn.output_feature_dimension,
             *dn.output_spatial_dimensions),
            list(a["window_strides"]), padding, list(a["lhs_dilation"]),
            list(a["rhs_dilation"]), list(a["window_reversal"]),
            int(str(a["feature_group_count"]).split(":")[0]),
            int(str(a["batch_group_count"]).split(":")[0]))

    def run(self, lhs, rhs, preferred=None):
        """The convolution through jax.lax (window reversal: the spec's reversed kernel)."""
        rev = [self.rhs_spec[2 + j] for j, r in enumerate(self.reversal) if r]
        if rev:
            rhs = jnp.flip(rhs, axis=rev)
        return lax.conv_general_dilated(
            lhs, rhs, self.strides, self.padding, self.lhs_dilation, self.rhs_dilation,
            lax.ConvDimensionNumbers(self.lhs_spec, self.rhs_spec, self.out_spec),
            feature_group_count=self.feature_group_count,
            batch_group_count=self.batch_group_count, preferred_element_type=preferred)

    def check_lowering(self, lhs, rhs, preferred, name):
        module = jax.jit(lambda a, b: self.run(a, b, preferred)).lower(lhs, rhs)
        module = module.compiler_ir("stablehlo")
        (op,) = find_ops(module, "stablehlo.convolution")
        assert not find_ops(module, "stablehlo.convert"), name
        seen = Conv.from_op(op)
        expected = dict(vars(self), reversal=[False] * len(self.reversal))
        got = dict(vars(seen))
        got["padding"] = [tuple(int(v) for v in p) for p in got["padding"]]
        assert got == expected, (name, got, expected)

    def cpp(self):
        pads = "{" + ", ".join("{%d, %d}" % (int(lo), int(hi)) for lo, hi in self.padding) + "}"
        rev = "{" + ", ".join("true" if r else "false" for r in self.reversal) + "}"
        return ("{%s, %s, %s, %s, %s,\n    %d, %d, %s, %d, %d, %s, %d, %d, %s, %d, %d}" % (
            cpp_list(self.strides), pads, cpp_list(self.lhs_dilation),
            cpp_list(self.rhs_dilation), rev,
            self.lhs_spec[0], self.lhs_spec[1], cpp_list(self.lhs_spec[2:]),
            self.rhs_spec[1], self.rhs_spec[0], cpp_list(self.rhs_spec[2:]),
            self.out_spec[0], self.out_spec[1], cpp_list(self.out_spec[2:]),
            self.feature_group_count, self.batch_group_count))


def conv_case(name, conv, lhs, rhs, preferred=None, exact=False):
    if np.iscomplexobj(lhs):
        # jax.lax lowers a complex convolution to three real ones (Gauss's trick), so there is no
        # single op to check: the golden is that computation in complex128, rounded to the type.
        wide = jax.jit(lambda a, b: conv.run(a, b, None))(lhs.astype(np.complex128),
                                                          rhs.astype(np.complex128))
        result = np.asarray(wide).astype(lhs.dtype)
    else:
        conv.check_lowering(lhs, rhs, preferred, name)
        result = np.asarray(jax.jit(lambda a, b: conv.run(a, b, preferred))(lhs, rhs))
    k = np.shape(rhs)[conv.rhs_spec[1]] * int(np.prod([np.shape(rhs)[d]
                                                         for d in conv.rhs_spec[2:]]))
    magnitude = 0 if exact else magnitude_of(lambda a, b, _: conv.run(a, b, None), lhs, rhs)
    abs_tol, rel_tol = tolerances(result, magnitude, k, exact)
    return "  {\"%s\",\n   %s,\n   %s,\n   %s,\n   %s,\n   %.9g, %.9g},\n" % (
        name, conv.cpp(), cpp_array(lhs), cpp_array(rhs), cpp_array(result), abs_tol, rel_tol)


def grad_convs(fn, lhs_shape, rhs_shape, dtype=np.float32):
    """The convolutions of jax.grad(sum(fn(x, w)), (x, w)): (Conv, lhs shape, rhs shape)."""
    x = jnp.zeros(lhs_shape, dtype)
    w = jnp.zeros(rhs_shape, dtype)
    grad = jax.grad(lambda a, b: fn(a, b).sum(), argnums=(0, 1))
    ops = find_ops(jax.jit(grad).lower(x, w).compiler_ir("stablehlo"), "stablehlo.convolution")
    out = []
    for op in ops:
        shapes = [tuple(v.type.shape) for v in op.operands]
        out.append((Conv.from_op(op), shapes[0], shapes[1]))
    return out


def conv_cases():
    f32 = np.float32
    r = random_array
    C = Conv.from_strings

    def simple(name, lhs_shape, rhs_shape, specs=("NHWC", "HWIO", "NHWC"), dtype=f32,
               kind="real", preferred=None, exact=False, **kw):
        conv = C(*specs, lhs_shape, rhs_shape, **kw)
        return conv_case(name, conv, r(lhs_shape, dtype, kind), r(rhs_shape, dtype, kind),
                         preferred, exact)

    yield simple("nhwc_3x3", (2, 6, 5, 3), (3, 3, 3, 4))
    yield simple("nhwc_3x3_integers_exact", (2, 6, 5, 3), (3, 3, 3, 4), kind="int", exact=True)
    yield simple("nchw_oihw", (2, 3, 7, 6), (5, 3, 3, 2), specs=("NCHW", "OIHW", "NCHW"))
    yield simple("mixed_layouts", (5, 2, 3, 6), (4, 3, 2, 3), specs=("HNCW", "OHWI", "WCNH"))
    yield simple("stride_and_padding", (1, 9, 8, 2), (3, 3, 2, 3), strides=[2, 3],
                 padding=[(1, 2), (0, 1)])
    yield simple("negative_padding", (1, 9, 8, 2), (2, 2, 2, 3), padding=[(-2, 1), (1, -3)])
    yield simple("rhs_dilation_atrous", (2, 10, 9, 2), (3, 2, 2, 3), rhs_dilation=[2, 3],
                 padding=[(2, 2), (1, 0)])
    yield simple("lhs_dilation_transposed", (1, 4, 3, 2), (3, 3, 2, 2), lhs_dilation=[2, 3],
                 padding=[(2, 2), (1, 2)])
    yield simple("everything", (2, 7, 6, 4), (3, 2, 2, 6), strides=[2, 1],
                 padding=[(2, -1), (0, 3)], lhs_dilation=[2, 1], rhs_dilation=[1, 2],
                 feature_group_count=2)
    yield simple("window_reversal", (1, 5, 6, 2), (3, 2, 2, 2), reversal=[True, False],
                 padding=[(1, 1), (0, 1)])
    yield simple("window_reversal_both", (2, 4, 4, 1), (2, 3, 1, 3), reversal=[True, True])
    yield simple("feature_groups", (2, 5, 5, 6), (3, 3, 2, 9), feature_group_count=3)
    yield simple("depthwise", (2, 6, 6, 4), (3, 3, 1, 8), feature_group_count=4,
                 padding=[(1, 1), (1, 1)])
    yield simple("batch_groups", (6, 5, 4, 3), (2, 2, 3, 4), batch_group_count=2)
    yield simple("batch_groups_of_one", (4, 3, 3, 2), (2, 2, 2, 4), batch_group_count=4)
    yield simple("conv1d_nwc", (3, 17, 4), (5, 4, 6), specs=("NWC", "WIO", "NWC"),
                 strides=[2], padding=[(2, 2)])
    yield simple("conv1d_ncw", (2, 3, 11), (4, 3, 3), specs=("NCW", "OIW", "NCW"),
                 rhs_dilation=[2])
    yield simple("conv3d", (1, 4, 5, 4, 2), (2, 3, 2, 2, 3), specs=("NDHWC", "DHWIO", "NDHWC"),
                 strides=[1, 2, 1], padding=[(1, 0), (1, 1), (0, 1)])
    yield simple("conv0d_is_matmul", (5, 7), (7, 3), specs=("NC", "IO", "NC"))
    yield simple("one_by_one", (2, 4, 4, 16), (1, 1, 16, 8))
    yield simple("larger_im2col", (2, 12, 12, 16), (3, 3, 16, 24), padding=[(1, 1), (1, 1)])
    yield simple("empty_batch", (0, 5, 5, 2), (3, 3, 2, 2), exact=True)
    yield simple("empty_output_window_too_big", (1, 2, 2, 2), (3, 3, 2, 2), exact=True)
    yield simple("empty_input_spatial_padded", (1, 0, 3, 2), (1, 1, 2, 2),
                 padding=[(1, 1), (0, 0)], exact=True)
    yield simple("empty_features_zeros", (1, 3, 3, 0), (2, 2, 0, 2), exact=True)
    yield simple("bf16_to_f32", (1, 5, 5, 3), (3, 3, 3, 2), dtype=ml_dtypes.bfloat16,
                 preferred=np.float32)
    yield simple("bf16", (1, 5, 5, 3), (3, 3, 3, 2), dtype=ml_dtypes.bfloat16)
    yield simple("f16", (1, 5, 5, 3), (3, 3, 3, 2), dtype=np.float16)
    yield simple("f8e4m3fn_to_f32", (1, 5, 5, 3), (3, 3, 3, 2), dtype=ml_dtypes.float8_e4m3fn,
                 preferred=np.float32)
    yield simple("f64", (1, 5, 5, 3), (3, 3, 3, 2), dtype=np.float64)
    yield simple("c64", (1, 4, 4, 2), (2, 2, 2, 2), dtype=np.complex64)
    yield simple("c128_nchw", (1, 2, 4, 4), (2, 2, 2, 2), specs=("NCHW", "OIHW", "NCHW"),
                 dtype=np.complex128)
    yield simple("s32", (1, 4, 4, 2), (2, 2, 2, 3), dtype=np.int32, exact=True)
    yield simple("s8_to_s32", (1, 4, 4, 2), (2, 2, 2, 3), dtype=np.int8, kind="full",
                 preferred=np.int32, exact=True)
    yield simple("s8_wraps", (1, 4, 4, 2), (2, 2, 2, 3), dtype=np.int8, kind="full",
                 exact=True)
    yield simple("u16", (1, 4, 4, 2), (2, 2, 2, 3), dtype=np.uint16, exact=True)
    yield simple("s64", (1, 4, 4, 2), (2, 2, 2, 3), dtype=np.int64, kind="full", exact=True)
    yield simple("pred", (1, 4, 4, 2), (2, 2, 2, 3), dtype=np.bool_, exact=True)

    def conv2d(strides, padding, rhs_dilation=(1, 1), groups=1):
        return lambda x, w: lax.conv_general_dilated(
            x, w, strides, padding, rhs_dilation=rhs_dilation,
            dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=groups)

    grads = [
        ("grad_stride2_same", conv2d((2, 2), "SAME"), (2, 7, 7, 3), (3, 3, 3, 4)),
        ("grad_stride2_valid", conv2d((2, 2), "VALID"), (2, 8, 7, 3), (3, 3, 3, 4)),
        ("grad_dilated", conv2d((1, 1), "SAME", (2, 2)), (1, 7, 6, 2), (3, 3, 2, 3)),
        ("grad_grouped", conv2d((1, 1), "SAME", (1, 1), 2), (2, 5, 5, 4), (3, 3, 2, 6)),
        ("grad_depthwise", conv2d((2, 1), "SAME", (1, 1), 3), (2, 6, 5, 3), (3, 3, 1, 3)),
        ("grad_conv1d_nchw", lambda x, w: lax.conv_general_dilated(
            x, w, (3,), [(1, 2)], dimension_numbers=("NCH", "OIH", "NCH")),
         (2, 3, 13), (4, 3, 4)),
        ("grad_conv3d", lambda x, w: lax.conv_general_dilated(
            x, w, (2, 1, 2), "SAME", dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
         (1, 5, 4, 5, 2), (3, 2, 3, 2, 2)),
    ]
    for name, fn, xs, ws in grads:
        for i, (conv, lhs_shape, rhs_shape) in enumerate(grad_convs(fn, xs, ws)):
            yield conv_case("%s_%d" % (name, i), conv, r(lhs_shape, f32), r(rhs_shape, f32))


HEADER = """// GENERATED by contraction_goldens.py from JAX %s on the CPU: do not edit.
// Regenerate with this command (one line) from the repository root:
//   JAX_PLATFORMS=cpu .venv/bin/python
//       xla_plugin/devices/sim/kernels/testing/contraction_goldens.py
//       xla_plugin/devices/sim/kernels/testing
"""


def main(out_dir):
    with open(out_dir + "/dot_general_goldens.inc", "w") as f:
        f.write(HEADER % jax.__version__)
        f.write("// {name, lhs_batch, rhs_batch, lhs_contracting, rhs_contracting, lhs, rhs, "
                "result, abs_tol, rel_tol}\n")
        for case in dot_cases():
            f.write(case)
    with open(out_dir + "/convolution_goldens.inc", "w") as f:
        f.write(HEADER % jax.__version__)
        f.write("// {name, ConvolutionParams (field order), lhs, rhs, result, abs_tol, "
                "rel_tol}\n")
        for case in conv_cases():
            f.write(case)


if __name__ == "__main__":
    main(sys.argv[1])
