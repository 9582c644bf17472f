// fft on the CPU through FFTW3: FFT, IFFT, RFFT and IRFFT over the innermost 1 to 3 dims.
//
// Every transform runs in double precision (complex<f32>/f32 operands are widened and the result
// rounded once), which keeps one code path and is more accurate than single-precision FFTW.
// IFFT and IRFFT are normalised by 1 / prod(fft_length) as the spec requires (FFTW does not).
#include <fftw3.h>

#include <mutex>

#include "eval/dot_conv_util.h"

namespace wf::dotconv {
namespace {

// FFTW's planner is not thread-safe; executing distinct plans is.
std::mutex& plannerMutex() {
  static std::mutex m;
  return m;
}

struct PlanGuard {
  fftw_plan plan = nullptr;
  ~PlanGuard() {
    if (plan) {
      std::lock_guard<std::mutex> lock(plannerMutex());
      fftw_destroy_plan(plan);
    }
  }
};

Expected<std::vector<Literal>> fftKernel(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  const Literal& in = operands[0];
  const Attribute* typeAttr = op.attr("fft_type");
  const Attribute* lenAttr = op.attr("fft_length");
  if (!typeAttr || !lenAttr) return invalidArgument(op.describe() + ": missing fft_type or fft_length");
  const std::string& kind = typeAttr->stringValue();
  std::vector<int64_t> lengths = lenAttr->asIntList().value_or(std::vector<int64_t>{});
  auto r = static_cast<int64_t>(lengths.size());
  int64_t rank = in.type().rank();
  if (r < 1 || r > 3 || r > rank) return invalidArgument(op.describe() + ": fft_length must have 1 to 3 entries");
  bool real2complex = kind == "RFFT", complex2real = kind == "IRFFT";
  if (!real2complex && !complex2real && kind != "FFT" && kind != "IFFT")
    return invalidArgument(op.describe() + ": unknown fft_type " + kind);
  if (real2complex ? !isFloat(in.elementType()) : !isComplex(in.elementType()))
    return invalidArgument(op.describe() + ": operand type " + in.type().toString() + " does not fit " + kind);

  // The complex side's innermost length is L/2+1 for the real transforms.
  std::vector<int64_t> complexLens = lengths;
  if (real2complex || complex2real) complexLens.back() = lengths.back() / 2 + 1;
  const std::vector<int64_t>& inLens = complex2real ? complexLens : lengths;
  for (int64_t d = 0; d < r; ++d)
    if (in.shape()[static_cast<size_t>(rank - r + d)] != inLens[static_cast<size_t>(d)])
      return invalidArgument(op.describe() + ": operand " + in.type().toString() +
                             " does not end in the dims fft_length implies");
  std::vector<int64_t> outShape = in.shape();
  const std::vector<int64_t>& outLens = real2complex ? complexLens : lengths;
  for (int64_t d = 0; d < r; ++d) outShape[static_cast<size_t>(rank - r + d)] = outLens[static_cast<size_t>(d)];
  ElementType outType = op.result(0)->type().elementType();
  Literal out = Literal::zeros(Type::tensor(outShape, outType));
  int64_t inPer = product(inLens), outPer = product(outLens);
  if (out.numElements() == 0 || inPer == 0) return std::vector<Literal>{std::move(out)};
  int64_t batch = in.numElements() / inPer;

  std::vector<int> n(lengths.begin(), lengths.end());
  int howmany = static_cast<int>(batch);
  double scale = 1.0 / static_cast<double>(product(lengths));
  PlanGuard guard;
  if (real2complex) {
    std::vector<double> src = convertTo<double>(in);
    std::vector<c128> dst(static_cast<size_t>(batch * outPer));
    {
      std::lock_guard<std::mutex> lock(plannerMutex());
      guard.plan = fftw_plan_many_dft_r2c(static_cast<int>(r), n.data(), howmany, src.data(), nullptr, 1,
                                          static_cast<int>(inPer), reinterpret_cast<fftw_complex*>(dst.data()),
                                          nullptr, 1, static_cast<int>(outPer), FFTW_ESTIMATE);
    }
    fftw_execute(guard.plan);
    storeFrom(dst.data(), out);
  } else if (complex2real) {
    std::vector<c128> src = convertTo<c128>(in);  // c2r overwrites its input: work on a copy
    std::vector<double> dst(static_cast<size_t>(batch * outPer));
    {
      std::lock_guard<std::mutex> lock(plannerMutex());
      guard.plan = fftw_plan_many_dft_c2r(static_cast<int>(r), n.data(), howmany,
                                          reinterpret_cast<fftw_complex*>(src.data()), nullptr, 1,
                                          static_cast<int>(inPer), dst.data(), nullptr, 1, static_cast<int>(outPer),
                                          FFTW_ESTIMATE);
    }
    fftw_execute(guard.plan);
    for (double& v : dst) v *= scale;
    storeFrom(dst.data(), out);
  } else {
    bool inverse = kind == "IFFT";
    std::vector<c128> src = convertTo<c128>(in);
    std::vector<c128> dst(src.size());
    {
      std::lock_guard<std::mutex> lock(plannerMutex());
      guard.plan = fftw_plan_many_dft(static_cast<int>(r), n.data(), howmany,
                                      reinterpret_cast<fftw_complex*>(src.data()), nullptr, 1, static_cast<int>(inPer),
                                      reinterpret_cast<fftw_complex*>(dst.data()), nullptr, 1, static_cast<int>(outPer),
                                      inverse ? FFTW_BACKWARD : FFTW_FORWARD, FFTW_ESTIMATE);
    }
    fftw_execute(guard.plan);
    if (inverse)
      for (c128& v : dst) v *= scale;
    storeFrom(dst.data(), out);
  }
  return std::vector<Literal>{std::move(out)};
}

}  // namespace

void registerFftKernels(KernelRegistry& registry) { registry.add(OpCode::Fft, fftKernel); }

}  // namespace wf::dotconv
