// The erf GELU, x * 0.5 * (1 + erf(x / sqrt 2)), in f32, for a product epilogue that rounds it
// to bf16 or f16 (dot_gelu_sm90.cu): 16 PTX instructions an element where the formula with
// CUDA's erff takes about 30. The linear layer's epilogue is bound by its instructions
// (BERT-large's [3072 x 1024] x [1024 x 4096] spent 13-16 us of its 54 on it), so they are what
// it costs.
//
// With h(a) = Phi(-a) = erfc(a / sqrt 2) / 2 for a = |x|, the GELU is max(x, 0) - a * h(a)
// (x * (1 - h) for x > 0, x * h for x < 0), and h = 2^Q(a), Q a polynomial of degree 9 on
// [0, 6]: one exponential and no division. Q was fitted minimax with each error weighted by
// max(h, 3e-3), so that h's absolute error stays near f32's resolution at 1 and its relative
// error small in the tail. Against the GELU in f64, over every 64th f32 in [-8, 8]
// (gelu_erf_test.cpp): at most 9.7e-8 * max(|x|, 1) off, where the formula in f32 ops with a
// correctly rounded erf is 1.05e-7 off (its 1 + erf cancels to multiples of 6e-8 where x < 0);
// rounded to bf16 or f16, fewer results than the formula's land away from the exact GELU's.
// Beyond |x| = 6, a stays at 6 and h at 1e-9: the GELU is x, or -6e-9 where the formula gives 0
// or a multiple of 6e-8. NaN and -infinity give NaN, +infinity gives +infinity, as the formula
// does; -0 gives +0.
#pragma once

#include <cmath>

#ifndef WF_HOST_DEVICE  // as eval/element_math.h defines it
#if defined(__CUDACC__)
#define WF_HOST_DEVICE __host__ __device__
#else
#define WF_HOST_DEVICE
#endif
#endif

namespace wf::cuda {

WF_HOST_DEVICE inline float exp2Approx(float q) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(q));  // 2 ulp; q >= -46 here, no denormal result
  return r;
#else
  return std::exp2(q);
#endif
}

WF_HOST_DEVICE inline float geluErfF32(float x) {
  // Q(a) = log2(Phi(-a)), lowest degree first. Q(0) = -1 exactly (Phi(0) = 1/2), so that near 0
  // the GELU is x / 2 + x^2 / sqrt(2 pi) on the right side of x / 2, as the formula's.
  constexpr float kQ[10] = {-1.0f,
                            -1.151107907295227f,
                            -0.45917850732803345f,
                            -0.052599478513002396f,
                            0.007220881525427103f,
                            -0.0002538248081691563f,
                            -0.0001450193813070655f,
                            3.453065801295452e-05f,
                            -3.4179472550022183e-06f,
                            1.3273971433136467e-07f};
  const float a = fminf(fabsf(x), 6.0f);  // a NaN x gives 6 here, and NaN below
  float q = kQ[9];
  for (int i = 8; i >= 0; --i) q = fmaf(q, a, kQ[i]);
  // x / 2 + |x| / 2 rather than max(x, 0): NaN stays NaN, and -infinity gives NaN as x * 0 does.
  return fmaf(-a, exp2Approx(q), fmaf(0.5f, x, 0.5f * fabsf(x)));
}

}  // namespace wf::cuda
