"""numba, where installed (the `fast` extra), for the few cpu lowerings that gain from a compiled loop.

Imported lazily: `import numba` costs ~0.3 s, which a program that never reaches such a lowering should not pay.
"""
import importlib
import importlib.util


def available():
    """Whether numba is installed."""
    return importlib.util.find_spec("numba") is not None


def njit(fn, cache=True, **options):
    """fn compiled by numba.njit (None without numba). error_model="numpy": 1/0 is inf, as the ufuncs give, never
    an exception. The on-disk cache (next to the module, or numba's user-wide directory on a read-only install)
    saves the compile in later processes; where no directory is writable, it compiles per process. cache=False
    for a function with no source file (jit's generated kernels)."""
    if not available():
        return None
    numba = importlib.import_module("numba")
    if cache:
        try:
            return numba.njit(error_model="numpy", cache=True, **options)(fn)
        except RuntimeError:
            pass
    return numba.njit(error_model="numpy", cache=False, **options)(fn)


def reshape_errors():
    """What a compiled function that reshapes its arrays raises, before it writes anything, for a
    non-contiguous one: numba's typing error, or the reshape's own at run time."""
    return importlib.import_module("numba.core.errors").TypingError, NotImplementedError


def fma(a, b, c):
    """a * b + c: what `intrinsics()`'s fmuladd computes, for a kernel's module to hold until it is compiled."""
    return a * b + c


def exp2i(k):
    """2.0 ** k: what `intrinsics()`'s exp2i computes, for a kernel's module to hold until it is compiled."""
    return 2.0 ** k


_intrinsics = None


def intrinsics():
    """(fmuladd, exp2i): two numba intrinsics for compiled float64 arithmetic (built on first call).
    fmuladd(a, b, c) is a * b + c as LLVM's llvm.fmuladd: one fused instruction where the cpu has FMA (a
    polynomial's Horner steps in half the instructions, one rounding each), a multiply and an add elsewhere.
    exp2i(k) is 2.0 ** k for an int64 k in [-1022, 1023], made from the exponent bits: no table lookup, which
    would be a gather in a vectorized loop."""
    global _intrinsics
    if _intrinsics is None:
        from llvmlite import ir
        from numba import types
        from numba.extending import intrinsic
        f64 = ir.DoubleType()

        @intrinsic
        def fmuladd(typingctx, a, b, c):
            def codegen(context, builder, sig, args):
                fn = builder.module.declare_intrinsic("llvm.fmuladd", [f64], ir.FunctionType(f64, [f64] * 3))
                return builder.call(fn, args)
            return types.float64(types.float64, types.float64, types.float64), codegen

        @intrinsic
        def exp2i(typingctx, k):
            def codegen(context, builder, sig, args):
                i64 = ir.IntType(64)
                bits = builder.shl(builder.add(args[0], ir.Constant(i64, 1023)), ir.Constant(i64, 52))
                return builder.bitcast(bits, f64)
            return types.float64(types.int64), codegen

        _intrinsics = fmuladd, exp2i
    return _intrinsics
