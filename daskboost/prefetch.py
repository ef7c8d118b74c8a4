"""``prefetch(array, index)``: ask the CPU to bring the cache line of ``array[index]``
(a 1-d array: a row's codes are ``codes[row]``) towards its caches, for compiled
kernels (LLVM's ``llvm.prefetch``: a read, kept in every cache level).  A hint: it
changes no value and never faults.

The row kernels of ``row_partition`` read a node's rows through its run of row
indices: in a sparse run (a small node deep in the tree) each row's codes are a cache
line no hardware prefetcher predicts, and the kernel waits on it; asking for the line
of the row a few places ahead hides that wait.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, array, index):
    """Prefetch the cache line of ``array[index]`` (``array`` 1-d; ``index`` an integer
    in range: it is not checked)."""
    if (not isinstance(array, types.Array) or array.ndim != 1
            or not isinstance(index, types.Integer)):
        return None
    signature = types.void(array, index)

    def codegen(context, builder, sig, args):
        array_type = sig.args[0]
        values = context.make_array(array_type)(context, builder, args[0])
        place = context.cast(builder, args[1], sig.args[1], types.intp)
        pointer = cgutils.get_item_pointer(context, builder, array_type, values, [place],
                                           wraparound=False)
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        # (read, locality 3: keep in all cache levels, data cache)
        builder.call(function, [builder.bitcast(pointer, byte_pointer), ir.Constant(i32, 0),
                                ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return signature, codegen
