// f32 convolution on oneDNN's primitives (the library PyTorch runs its CPU convolutions on).
//
// convolution.cpp calls convOneDnnF32 first for f32 convolutions; it describes the operands to
// oneDNN with their own strides (NCHW, NHWC, HWIO, ... need no copy), lets oneDNN pick its
// blocked layouts (format_tag::any), reorders into them, runs the direct convolution and
// reorders the result back. Primitive descriptors and primitives are cached per shape, so a
// model's convolutions pay oneDNN's JIT cost once. Anything oneDNN cannot express (lhs
// dilation, window reversal, negative padding, batch groups, empty dims) returns false and the
// im2col path runs instead.
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "eval/dot_conv_util.h"

#if WF_HAVE_DNNL
#include <dnnl.hpp>
#endif

namespace wf::dotconv {

#if WF_HAVE_DNNL
dnnl::engine& oneDnnCpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

namespace {

// One cached convolution: the primitive and the descriptors of the layouts it wants.
struct CachedConv {
  dnnl::convolution_forward prim;
  dnnl::memory::desc src, wei, dst;          // oneDNN's chosen layouts
  dnnl::memory::desc userSrc, userWei, userDst;  // the operands' own layouts
  dnnl::reorder srcReorder, weiReorder, dstReorder;  // empty when the layouts agree
  bool reorderSrc = false, reorderWei = false, reorderDst = false;
};

std::mutex gCacheMutex;
std::map<std::vector<int64_t>, std::shared_ptr<CachedConv>>& cache() {
  static std::map<std::vector<int64_t>, std::shared_ptr<CachedConv>> c;
  return c;
}

dnnl::memory::dims toDims(const std::vector<int64_t>& v) { return dnnl::memory::dims(v.begin(), v.end()); }

std::shared_ptr<CachedConv> build(const OneDnnConv& c) {
  using namespace dnnl;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  size_t r = c.in.size();
  memory::dims src{c.n, c.c}, dst{c.n, c.o}, wei;
  memory::dims strides, dil, padL, padR;
  for (size_t d = 0; d < r; ++d) {
    src.push_back(c.in[d]);
    dst.push_back(c.out[d]);
    strides.push_back(c.strides[d]);
    dil.push_back(c.rhsDil[d] - 1);
    padL.push_back(c.padLo[d]);
    padR.push_back(c.padHi[d]);
  }
  // The kernel's strides in canonical [O, I, spatial...] order; grouped kernels are seen as
  // [G, O/G, I, spatial...] (same memory: O = G * O/G, group-major).
  memory::dims weiStrides;
  if (c.groups > 1) {
    wei = {c.groups, c.o / c.groups, c.c / c.groups};
    weiStrides = {c.weiStrides[0] * (c.o / c.groups), c.weiStrides[0], c.weiStrides[1]};
  } else {
    wei = {c.o, c.c};
    weiStrides = {c.weiStrides[0], c.weiStrides[1]};
  }
  for (size_t d = 0; d < r; ++d) {
    wei.push_back(c.k[d]);
    weiStrides.push_back(c.weiStrides[2 + d]);
  }
  auto e = std::make_shared<CachedConv>();
  e->userSrc = memory::desc(src, dt::f32, toDims(c.srcStrides));
  e->userWei = memory::desc(wei, dt::f32, weiStrides);
  e->userDst = memory::desc(dst, dt::f32, toDims(c.dstStrides));
  convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct,
                              memory::desc(src, dt::f32, tag::any), memory::desc(wei, dt::f32, tag::any),
                              memory::desc(dst, dt::f32, tag::any), strides, dil, padL, padR);
  convolution_forward::primitive_desc pd(d, oneDnnCpuEngine());
  e->prim = convolution_forward(pd);
  e->src = pd.src_desc();
  e->wei = pd.weights_desc();
  e->dst = pd.dst_desc();
  e->reorderSrc = e->src != e->userSrc;
  e->reorderWei = e->wei != e->userWei;
  e->reorderDst = e->dst != e->userDst;
  if (e->reorderSrc) e->srcReorder = reorder(reorder::primitive_desc(oneDnnCpuEngine(), e->userSrc, oneDnnCpuEngine(), e->src));
  if (e->reorderWei) e->weiReorder = reorder(reorder::primitive_desc(oneDnnCpuEngine(), e->userWei, oneDnnCpuEngine(), e->wei));
  if (e->reorderDst) e->dstReorder = reorder(reorder::primitive_desc(oneDnnCpuEngine(), e->dst, oneDnnCpuEngine(), e->userDst));
  return e;
}

}  // namespace

bool convOneDnnF32(const OneDnnConv& c, const float* in, const float* w, float* out) {
  size_t r = c.in.size();
  if (!haveOneDnn()) return false;
  if (r < 1 || r > 3 || c.groups < 1 || c.c % c.groups != 0 || c.o % c.groups != 0) return false;
  if (c.n <= 0 || c.c <= 0 || c.o <= 0) return false;
  for (size_t d = 0; d < r; ++d)
    if (c.in[d] <= 0 || c.k[d] <= 0 || c.out[d] <= 0 || c.padLo[d] < 0 || c.padHi[d] < 0 || c.strides[d] <= 0 ||
        c.rhsDil[d] <= 0)
      return false;
  // The cache key: every number that defines the primitive.
  std::vector<int64_t> key{c.n, c.c, c.o, c.groups, static_cast<int64_t>(r)};
  for (const auto* v : {&c.in, &c.k, &c.out, &c.strides, &c.padLo, &c.padHi, &c.rhsDil, &c.srcStrides,
                        &c.weiStrides, &c.dstStrides})
    key.insert(key.end(), v->begin(), v->end());
  try {
    std::shared_ptr<CachedConv> e;
    {
      std::lock_guard<std::mutex> lock(gCacheMutex);
      auto it = cache().find(key);
      if (it != cache().end()) e = it->second;
    }
    useLibraryThreads();
    if (!e) {
      e = build(c);
      std::lock_guard<std::mutex> lock(gCacheMutex);
      cache().emplace(key, e);
    }
    using dnnl::memory;
    dnnl::engine& eng = oneDnnCpuEngine();
    dnnl::stream stream(eng);
    memory userSrc(e->userSrc, eng, const_cast<float*>(in));
    memory userWei(e->userWei, eng, const_cast<float*>(w));
    memory userDst(e->userDst, eng, out);
    memory src = userSrc, wei = userWei, dst = userDst;
    if (e->reorderSrc) {
      src = memory(e->src, eng);
      e->srcReorder.execute(stream, userSrc, src);
    }
    if (e->reorderWei) {
      wei = memory(e->wei, eng);
      e->weiReorder.execute(stream, userWei, wei);
    }
    if (e->reorderDst) dst = memory(e->dst, eng);
    e->prim.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    if (e->reorderDst) e->dstReorder.execute(stream, dst, userDst);
    stream.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

#else

bool convOneDnnF32(const OneDnnConv&, const float*, const float*, float*) { return false; }

#endif

}  // namespace wf::dotconv
