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
// Which products merge:
// - Products too small to fill the device (measured on an H200: BERT-base at one sequence of 128
//   tokens 1.37 -> 1.20 ms, a 1.1B Llama at 512 tokens 2.17 -> 2.02 ms): results of at most
//   `maxResultElements` elements.
// - Products of many rows, at least as many as the weight has inputs (rhs elements <= result
//   elements), `mergeManyRows`. BERT-large's q, k and v products at 8 x 384 tokens fill the
//   device one by one, but in [3072 x 1024] x [1024 x 1024] cuBLASLt's tiles make 1.45 waves on
//   132 SMs: on an H200 three take 36.6 us with their bias epilogues, the merged one 29.9 us.
//   Where the weights are many times the rows (Llama's gate and up projections at 512 tokens:
//   2.9M-element results of 11.5M-element weights) merging gained nothing measurable.
// The side-by-side copy of the weights costs device memory where the originals stay bound (a
// bound argument that other bound arguments' hoisted work also reads is kept, so that a bind of
// either can redo that work): BERT-large's merged q, k and v weights are 144 MiB more (683 ->
// 832 MiB), the price of its faster products.
//
// mergeBiasAddsOfSlices then turns the bias adds of a merged product's slices into one add over
// the merged product, with the biases side by side, where each slice is widened, added to its
// bias and narrowed back (reshapes between): the form of cuBLASLt's bias epilogue
// (backends/cuda/kernels/dot.h), which then adds all three biases in the product's kernel.
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
  // Larger products merge too where the weight has no more elements than the result.
  bool mergeManyRows = true;
};

Expected<int> mergeSiblingProducts(Operation& function, const MergeProductsOptions& options = {});

// Where every reader of a product P (bf16 or f16) is a slice along its last dim, together covering
// it, and each slice s_i is read only by convert(s_i) to a wider float, that only by
// add(convert(s_i), broadcast_in_dim(b_i, [last dim])), that only by reshapes ending in a convert
// back to P's type n_i: computes N = convert(add(convert(P), broadcast_in_dim(concatenate(b_i))))
// once, and each n_i as the same reshapes of slice(N). Elementwise ops commute with slices, so the
// bits are the same. Returns how many bias adds are gone (two of three for q, k and v); on error
// the function may be partly rewritten.
Expected<int> mergeBiasAddsOfSlices(Operation& function);

}  // namespace wf
