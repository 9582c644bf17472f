#include "backends/cuda/kernel.h"

namespace wf::cuda {

const CudaKernelRegistry& CudaKernelRegistry::instance() {
  static const CudaKernelRegistry registry = [] {
    CudaKernelRegistry r;
    registerElementwiseLowerings(r);
    registerDataMovementLowerings(r);
    registerReduceLowerings(r);
    registerIndexingLowerings(r);
    registerDotLowerings(r);
    registerRaggedDotLowerings(r);
    registerConvolutionLowerings(r);
    registerSortLowerings(r);
    registerScatterLowerings(r);
    registerRngLowerings(r);
    registerLinalgLowerings(r);
    registerRegionLowerings(r);
    registerAttentionLowerings(r);
    return r;
  }();
  return registry;
}

void CudaKernelRegistry::add(OpCode code, Lowering lowering) {
  lowerings_[static_cast<size_t>(code)] = std::move(lowering);
}

const Lowering* CudaKernelRegistry::find(OpCode code) const {
  const auto i = static_cast<size_t>(code);
  if (i >= lowerings_.size() || !lowerings_[i]) return nullptr;
  return &lowerings_[i];
}

void CudaKernelRegistry::addComposite(std::string name, Lowering lowering) {
  composites_[std::move(name)] = std::move(lowering);
}

const Lowering* CudaKernelRegistry::findComposite(std::string_view name) const {
  auto it = composites_.find(name);
  return it == composites_.end() ? nullptr : &it->second;
}

std::string_view compositeName(const Operation& op) {
  if (op.code() != OpCode::Composite) return {};
  const Attribute* name = op.attr("name");
  return name && name->kind() == Attribute::Kind::kString ? std::string_view(name->stringValue()) : std::string_view();
}

Status unsupportedOnCuda(const Operation& op, const std::string& why) {
  return unimplemented(op.describe() + ": " + why + " (unimplemented on cuda)");
}

Expected<std::vector<int64_t>> staticShape(const Operation& op, const Type& type) {
  if (!type.isTensor()) return unsupportedOnCuda(op, "value of type " + type.toString() + " is not a tensor");
  if (!type.hasStaticShape()) return unsupportedOnCuda(op, "dynamic shape " + type.toString());
  return type.shape();
}

bool isGpuComputeType(ElementType t) {
  switch (t) {
    case ElementType::kI1:
    case ElementType::kSI8:
    case ElementType::kSI16:
    case ElementType::kSI32:
    case ElementType::kSI64:
    case ElementType::kUI8:
    case ElementType::kUI16:
    case ElementType::kUI32:
    case ElementType::kUI64:
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
      return true;
    default:
      return false;
  }
}

int64_t numElementsOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> rowMajorStridesOf(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

bool broadcastStrides(const std::vector<int64_t>& in, const std::vector<int64_t>& out, int64_t* strides) {
  const size_t rank = out.size();
  if (rank > static_cast<size_t>(kMaxRank) || in.size() > rank) return false;
  for (int d = 0; d < kMaxRank; ++d) strides[d] = 0;
  if (numElementsOf(in) == 1) return true;
  const size_t lead = rank - in.size();
  int64_t stride = 1;
  for (size_t i = in.size(); i-- > 0;) {
    const size_t d = lead + i;
    if (in[i] == out[d]) {
      strides[d] = in[i] == 1 ? 0 : stride;
    } else if (in[i] == 1) {
      strides[d] = 0;
    } else {
      return false;
    }
    stride *= in[i];
  }
  return true;
}

}  // namespace wf::cuda
