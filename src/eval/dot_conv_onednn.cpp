// f32 convolutions and batched matrix products on oneDNN's primitives (the library PyTorch runs
// its CPU convolutions on).
//
// convolution.cpp calls convOneDnnF32 first for f32 convolutions; it describes the operands to
// oneDNN with their own strides (NCHW, NHWC, HWIO, ... need no copy), lets oneDNN pick its
// blocked layouts (format_tag::any), reorders into them, runs the direct convolution and
// reorders the result back. Primitive descriptors and primitives are cached per shape, so a
// model's convolutions pay oneDNN's JIT cost once. Anything oneDNN cannot express (lhs
// dilation, window reversal, negative padding, batch groups, empty dims) returns false and the
// im2col path runs instead.
//
// dot.cpp calls batchedGemmOneDnnF32 for a batch of f32 GEMMs (attention's products): one matmul
// primitive over the whole batch, each operand read in place through its strides.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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
template <typename Entry>
using Cache = std::map<std::vector<int64_t>, std::shared_ptr<Entry>>;

Cache<CachedConv>& cache() {
  static Cache<CachedConv> c;
  return c;
}

// The cached entry of `key`, built by `build()` (outside the lock: it runs oneDNN's JIT) the first
// time; the caller has called useLibraryThreads().
template <typename Entry, typename Build>
std::shared_ptr<Entry> cachedOrBuilt(Cache<Entry>& entries, const std::vector<int64_t>& key, const Build& build) {
  {
    std::lock_guard<std::mutex> lock(gCacheMutex);
    if (auto it = entries.find(key); it != entries.end()) return it->second;
  }
  std::shared_ptr<Entry> e = build();
  std::lock_guard<std::mutex> lock(gCacheMutex);
  return entries.emplace(key, std::move(e)).first->second;
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
    useLibraryThreads();
    std::shared_ptr<CachedConv> e = cachedOrBuilt(cache(), key, [&] { return build(c); });
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

namespace {

// A batch of GEMMs as one matmul primitive, or no primitive where oneDNN has only its sgemm for
// it (then the caller's per-GEMM path is as fast).
struct CachedMatmul {
  std::optional<dnnl::matmul> prim;
  dnnl::memory::desc a, b, c;
};

Cache<CachedMatmul>& matmulCache() {
  static Cache<CachedMatmul> c;
  return c;
}

std::shared_ptr<CachedMatmul> buildMatmul(const BatchedGemm& g) {
  using dnnl::memory;
  auto e = std::make_shared<CachedMatmul>();
  auto shape = [&](int64_t rows, int64_t cols) {
    std::vector<int64_t> dims = g.batch;
    dims.push_back(rows);
    dims.push_back(cols);
    return dims;
  };
  e->a = memory::desc(toDims(shape(g.m, g.k)), memory::data_type::f32, toDims(g.aStrides));
  e->b = memory::desc(toDims(shape(g.k, g.n)), memory::data_type::f32, toDims(g.bStrides));
  e->c = memory::desc(toDims(shape(g.m, g.n)), memory::data_type::f32, toDims(rowMajorStrides(shape(g.m, g.n))));
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e->a, e->b, e->c), oneDnnCpuEngine());
  // Its blocked-GEMM kernels ("brg", AVX-512 and newer, batch-major operands) pay; its sgemm
  // kernel ("gemm:jit") pays only where it saves the caller a copy.
  if (g.inPlaceOnly || std::string(pd.impl_info_str()).rfind("brg", 0) == 0) e->prim = dnnl::matmul(pd);
  return e;
}

}  // namespace

bool batchedGemmOneDnnF32(const BatchedGemm& g, const float* a, const float* b, float* c) {
  if (!haveOneDnn() || g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch.size() + 2 > DNNL_MAX_NDIMS) return false;
  for (int64_t b : g.batch)
    if (b <= 0) return false;
  std::vector<int64_t> key = g.batch;
  key.insert(key.end(), {-1, g.m, g.n, g.k, g.inPlaceOnly});
  key.insert(key.end(), g.aStrides.begin(), g.aStrides.end());
  key.insert(key.end(), g.bStrides.begin(), g.bStrides.end());
  try {
    useLibraryThreads();
    std::shared_ptr<CachedMatmul> e = cachedOrBuilt(matmulCache(), key, [&] { return buildMatmul(g); });
    if (!e->prim) return false;
    dnnl::engine& eng = oneDnnCpuEngine();
    dnnl::stream stream(eng);
    dnnl::memory am(e->a, eng, const_cast<float*>(a)), bm(e->b, eng, const_cast<float*>(b)), cm(e->c, eng, c);
    e->prim->execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

#else

bool convOneDnnF32(const OneDnnConv&, const float*, const float*, float*) { return false; }
bool batchedGemmOneDnnF32(const BatchedGemm&, const float*, const float*, float*) { return false; }

#endif

}  // namespace wf::dotconv
