// Matrix products of one activation by several weights merged into one product.
//
// A transformer layer multiplies one layer-norm output by three weights (query, key and value;
// Llama's gate and up projections by two), each an nn.Linear of its own: three matrix products
// of the same rows. One product by the weights side by side computes the same sums, with one
// launch instead of three, and cuBLASLt runs a product three times as wide nearer the tensor
// cores' peak (on an H200, [3072 x 1024] x [1024 x 1024] takes about 15 us and the three-wide
// one about 32, not 45). Each original result is then a slice of the merged one, which the
// fused kernels reading it take as they take any slice.
//
// Merged: top-level stablehlo.dot_general ops of the same lhs value and the same attributes
// (dimension numbers, precision, algorithm) and result element type, with no batch dims and one
// free dim in the rhs, whose rhs shapes differ in that dim alone, and whose rhs are weights:
// computed from function arguments or constants by transposes, reshapes and conversions only.
// The CUDA backend computes the concatenated weights once per bind (a hoisted step), so merging
// moves no bytes per run where the weights are bound. The rhs chains of the later products move
// up to the first one; the merged product's result is sliced back for each.
//
// Only products too small to fill the device gain (measured on an H200: BERT-base at one
// sequence of 128 tokens 1.37 -> 1.20 ms, a 1.1B Llama at 512 tokens 2.17 -> 2.02 ms, while
// BERT-large at 8 x 384 tokens, whose products each fill the GPU, went 5.49 -> 5.52 ms), and
// the side-by-side copy of the weights costs memory where the originals stay bound: products
// whose result has more than `maxResultElements` elements are left as written.
//
// Each sum is over the same products: only an algorithm's choice of summation order for the
// wider shape can change its last bits, as any change of shape may.
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// Merges the products of `function`'s body described above; returns how many products are gone
// (two of three, for each merged query, key and value). On error the function may be partly
// rewritten (the CUDA backend rewrites a copy).
struct MergeProductsOptions {
  // Products with larger results are left alone. The default, 2^21 elements, is 128 output tiles
  // of 128 x 128: less than one wave on the 132 SMs of an H100 or H200.
  int64_t maxResultElements = int64_t{1} << 21;
};

Expected<int> mergeSiblingProducts(Operation& function, const MergeProductsOptions& options = {});

}  // namespace wf
