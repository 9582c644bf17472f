// Window arithmetic and the window attribute reader (window.h).
#include "ir/window.h"

#include <algorithm>

#include "ir/attr_reader.h"

namespace wf {

std::vector<int64_t> windowAttributeOr(const Operation& op, const char* name, size_t n, int64_t fill) {
  if (const Attribute* a = op.attr(name))
    if (auto v = a->asIntList()) return *v;
  return std::vector<int64_t>(n, fill);
}

int64_t windowOutputSize(int64_t input, int64_t window, int64_t stride, int64_t padLow, int64_t padHigh,
                         int64_t baseDilation, int64_t windowDilation) {
  if (input == kDynamic || window == kDynamic) return kDynamic;
  int64_t padded = padLow + dilatedSize(input, baseDilation) + padHigh;
  int64_t dilatedWindow = dilatedSize(window, windowDilation);
  bool empty = padded <= 0 || dilatedWindow > padded;
  return empty ? 0 : (padded - dilatedWindow) / stride + 1;
}

std::vector<int64_t> Window::outputShape(const std::vector<int64_t>& input) const {
  std::vector<int64_t> out;
  for (size_t d = 0; d < rank(); ++d) out.push_back(outputSize(d, input[d]));
  return out;
}

namespace {
std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
bool allPositive(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x > 0; });
}
}  // namespace

Expected<Window> readWindow(const Operation& op, int64_t rank) {
  const bool dilations = op.code() == OpCode::ReduceWindow;
  const size_t r = static_cast<size_t>(rank);
  const std::string entries = std::to_string(rank) + " entries";
  auto fail = [&](std::string_view c, const std::string& m) { return constraintError(op, c, m); };
  AttrReader attrs(op);
  Window w;
  WF_ASSIGN_OR_RETURN(w.size, attrs.ints("window_dimensions"));
  WF_ASSIGN_OR_RETURN(w.strides, attrs.ints("window_strides", std::vector<int64_t>(r, 1)));
  WF_ASSIGN_OR_RETURN(w.baseDilation, attrs.ints("base_dilations", std::vector<int64_t>(r, 1)));
  WF_ASSIGN_OR_RETURN(w.windowDilation, attrs.ints("window_dilations", std::vector<int64_t>(r, 1)));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> padding, attrs.ints("padding", std::vector<int64_t>(2 * r, 0)));
  if (w.size.size() != r) return fail("C4", "window_dimensions " + list(w.size) + " must have " + entries);
  if (!allPositive(w.size)) return fail("C5", "window_dimensions " + list(w.size) + " must be positive");
  if (w.strides.size() != r) return fail("C6", "window_strides " + list(w.strides) + " must have " + entries);
  if (!allPositive(w.strides)) return fail("C7", "window_strides " + list(w.strides) + " must be positive");
  if (dilations) {
    if (w.baseDilation.size() != r) return fail("C8", "base_dilations must have " + entries);
    if (!allPositive(w.baseDilation)) return fail("C9", "base_dilations must be positive");
    if (w.windowDilation.size() != r) return fail("C10", "window_dilations must have " + entries);
    if (!allPositive(w.windowDilation)) return fail("C11", "window_dilations must be positive");
  }
  if (padding.size() != 2 * r)
    return fail(dilations ? "C12" : "C8", "padding " + list(padding) + " must have shape [" + std::to_string(rank) + ", 2]");
  for (size_t d = 0; d < r; ++d) {
    w.padLow.push_back(padding[2 * d]);
    w.padHigh.push_back(padding[2 * d + 1]);
  }
  return w;
}

}  // namespace wf
