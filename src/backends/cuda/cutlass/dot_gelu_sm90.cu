// CUTLASS 3's warp-specialized persistent GEMM for Hopper with an epilogue visitor tree computing
// the linear layer's bias and erf GELU (dot_gelu_sm90.h). Built for sm_90a only (wgmma, TMA).
//
// Tile 128 x 256 x 64, clusters of 2 x 1, the cooperative schedule: on an H200, BERT-large's
// [3072 x 1024] x [1024 x 4096] bf16 product with the epilogue took 53.3 us against 61.6 us for
// cuBLASLt's best product and the generated bias + GELU kernel one after the other (the
// product alone 38.7 us); 128 x 128 tiles and the ping-pong schedule (64 x 256, 128 x 128) took
// 54.9-58.9 us. With the two consumer warp groups on one tile, nothing hides the epilogue, and
// it is bound by its instructions: the GELU is gelu_erf.h's (16 PTX instructions an element)
// rather than the formula with CUDA's erff (about 30), and as accurate as that in f32.
#include "backends/cuda/cutlass/dot_gelu_sm90.h"

#include "backends/cuda/cutlass/gelu_erf.h"

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

namespace wf::cuda::cutlass_sm90 {
namespace {

using namespace cute;
namespace fusion = cutlass::epilogue::fusion;

template <class T>
struct GeluErf;
template <int N>
struct GeluErf<cutlass::Array<float, N>> {
  CUTLASS_DEVICE cutlass::Array<float, N> operator()(cutlass::Array<float, N> const& x) const {
    cutlass::Array<float, N> y;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) y[i] = geluErfF32(x[i]);
    return y;
  }
};
template <class T>
struct AddRn;
template <int N>
struct AddRn<cutlass::Array<float, N>> {
  CUTLASS_DEVICE cutlass::Array<float, N> operator()(cutlass::Array<float, N> const& a,
                                                     cutlass::Array<float, N> const& b) const {
    cutlass::Array<float, N> y;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) y[i] = __fadd_rn(a[i], b[i]);
    return y;
  }
};

template <class T>
struct Kernel {
  using Tile = Shape<_128, _256, _64>;
  using Cluster = Shape<_2, _1, _1>;
  static constexpr auto kRound = cutlass::FloatRoundStyle::round_to_nearest;
  // acc (f32) -> T: the product's rounding; + bias (T, widened) in f32; GELU in f32 -> T.
  using Product = fusion::Sm90EVT<fusion::Sm90Compute<cutlass::epilogue::thread::Identity, T, float, kRound>,
                                  fusion::Sm90AccFetch>;
  using Bias = fusion::Sm90RowBroadcast<0, Tile, T, float, Stride<_0, _1, int64_t>, 8>;
  using Sum = fusion::Sm90EVT<fusion::Sm90Compute<AddRn, float, float, kRound>, Product, Bias>;
  using Tree = fusion::Sm90EVT<fusion::Sm90Compute<GeluErf, T, float, kRound>, Sum>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor, 8, T,
      cutlass::layout::RowMajor, 8, cutlass::epilogue::TmaWarpSpecializedCooperative, Tree>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, T, cutlass::layout::RowMajor, 8, T,
      cutlass::layout::RowMajor, 8, float, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<
      cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue>>;

  static typename Gemm::Arguments arguments(const DotBiasGeluProblem& p, const void* a, const void* b,
                                            const void* bias, void* d, int multiprocessors) {
    using K = typename Gemm::GemmKernel;
    const auto sa = cutlass::make_cute_packed_stride(typename K::StrideA{}, make_shape(p.m, p.k, 1));
    const auto sb = cutlass::make_cute_packed_stride(typename K::StrideB{}, make_shape(p.n, p.k, 1));
    const auto sd = cutlass::make_cute_packed_stride(typename K::StrideD{}, make_shape(p.m, p.n, 1));
    cutlass::KernelHardwareInfo hw;
    hw.sm_count = multiprocessors;
    typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                  {p.m, p.n, p.k, 1},
                                  {static_cast<const T*>(a), sa, static_cast<const T*>(b), sb},
                                  {{}, nullptr, sd, static_cast<T*>(d), sd},
                                  hw};
    // The tree's arguments, child by child: {{product {acc, round}, bias, add}, gelu}.
    args.epilogue.thread = {{{}, {static_cast<const T*>(bias), T(0), {}}, {}}, {}};
    return args;
  }
};

template <class T>
const char* declines(const DotBiasGeluProblem& p) {
  using G = typename Kernel<T>::Gemm;
  const auto args = Kernel<T>::arguments(p, nullptr, nullptr, nullptr, nullptr, 1);
  return G::can_implement(args) == cutlass::Status::kSuccess ? "" : "CUTLASS cannot implement this problem";
}

template <class T>
size_t workspaceBytes(const DotBiasGeluProblem& p, int multiprocessors) {
  return Kernel<T>::Gemm::get_workspace_size(Kernel<T>::arguments(p, nullptr, nullptr, nullptr, nullptr, multiprocessors));
}

template <class T>
const char* run(const DotBiasGeluProblem& p, const void* a, const void* b, const void* bias, void* d, void* workspace,
                int multiprocessors, cudaStream_t stream) {
  typename Kernel<T>::Gemm gemm;
  const auto args = Kernel<T>::arguments(p, a, b, bias, d, multiprocessors);
  if (gemm.initialize(args, workspace, stream) != cutlass::Status::kSuccess) return "CUTLASS could not set the kernel up";
  if (gemm.run(stream) != cutlass::Status::kSuccess) return "CUTLASS could not launch the kernel";
  return nullptr;
}

}  // namespace

const char* dotBiasGeluDeclines(const DotBiasGeluProblem& p) {
  return p.type == GeluType::kBF16 ? declines<cutlass::bfloat16_t>(p) : declines<cutlass::half_t>(p);
}

size_t dotBiasGeluWorkspaceBytes(const DotBiasGeluProblem& p, int multiprocessors) {
  return p.type == GeluType::kBF16 ? workspaceBytes<cutlass::bfloat16_t>(p, multiprocessors)
                                   : workspaceBytes<cutlass::half_t>(p, multiprocessors);
}

const char* runDotBiasGelu(const DotBiasGeluProblem& p, const void* a, const void* b, const void* bias, void* d,
                           void* workspace, int multiprocessors, cudaStream_t stream) {
  return p.type == GeluType::kBF16 ? run<cutlass::bfloat16_t>(p, a, b, bias, d, workspace, multiprocessors, stream)
                                   : run<cutlass::half_t>(p, a, b, bias, d, workspace, multiprocessors, stream);
}

}  // namespace wf::cuda::cutlass_sm90
