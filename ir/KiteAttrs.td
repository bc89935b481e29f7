//===- KiteAttrs.td - kite attributes ---------------------*- tablegen -*-===//
//
// Layouts: where a tile's elements live on the hardware.
//
//===----------------------------------------------------------------------===//

#ifndef KITE_ATTRS_TD
#define KITE_ATTRS_TD

include "KiteBase.td"

class Kite_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Kite_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Kite_BlockedLayoutAttr : Kite_Attr<"BlockedLayout", "blocked"> {
  let summary = "a tile spread over the threads in runs of contiguous elements";
  let description = [{
    A thread arrangement over a power-of-two `shape` (the *context*): along
    context dim d, `threads[d]` threads each hold runs of `vec[d]`
    contiguous elements, `shape[d] / threads[d]` in all; threads are
    numbered over the dims from the innermost out (thread-index stride 1 on
    the last dim), and the program's threads past the product of `threads`
    hold replicas. A thread's elements of context dim d: its k-th is at
    `(k / vec) * threads * vec + t_d * vec + k % vec`.

    The tile's dim i runs along context dim `dims[i]`, or is a unit dim
    (`-1`), the same element on every thread of the context dims no tile dim
    runs along (a reduction's result, a broadcast operand). So tiles of one
    context with different `dims` (a row and the row's sum) line up element
    for element without moving data. As a linear layout (ir/Layout.h) it is
    `LinearLayout::blocked` of the context with the dims not in `dims`
    sliced away.

    ```mlir
    // A [16, 256] tile; its row sums in the same context.
    !kite.tile<16x256xf32, #kite.blocked<shape = [16, 256], vec = [1, 4], threads = [2, 64], dims = [0, 1]>>
    !kite.tile<16xf32, #kite.blocked<shape = [16, 256], vec = [1, 4], threads = [2, 64], dims = [0]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        ArrayRefParameter<"int64_t">:$vec,
                        ArrayRefParameter<"int64_t">:$threads,
                        ArrayRefParameter<"int64_t">:$dims);
  let assemblyFormat = [{
    `<` `shape` `=` `[` $shape `]` `,` `vec` `=` `[` $vec `]` `,`
        `threads` `=` `[` $threads `]` `,` `dims` `=` `[` $dims `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Threads the context uses (the product of `threads`).
    int64_t usedThreads() const;
    /// The thread-index stride of context dim `d`.
    int64_t threadStride(int64_t d) const;
    /// The padded shape of the tiles in this layout.
    ::llvm::SmallVector<int64_t> tileShape() const;
    /// The same context with tile dims `dims`.
    BlockedLayoutAttr withDims(::llvm::ArrayRef<int64_t> dims) const;
    /// True if a tile in this layout can be read, register for register,
    /// at the elements of a tile in layout `user` whose dim `j + offset` is
    /// this tile's dim `j`: it is replicated on every thread (all its dims
    /// unit), or each of its non-unit dims is distributed exactly like the
    /// user's dim there (same size, runs, threads and thread stride), in
    /// whichever context. Unit dims broadcast.
    bool readableAt(BlockedLayoutAttr user, int64_t offset) const;
    /// The layout as a linear layout over the tile's padded shape, in a
    /// program of `numThreads` threads (a power of two).
    ::kite::layout::LinearLayout toLinearLayout(int64_t numThreads) const;
  }];
}

#endif // KITE_ATTRS_TD
