#include "ir/fill.h"

#include <algorithm>
#include <cstring>

namespace wf {

void fillElements(std::byte* dst, int64_t count, const std::byte* value, int elemBytes) {
  if (count <= 0) return;
  const auto e = static_cast<size_t>(elemBytes);
  bool allSame = true;
  for (size_t i = 1; i < e; ++i) allSame = allSame && value[i] == value[0];
  if (allSame) {
    std::memset(dst, static_cast<int>(value[0]), static_cast<size_t>(count) * e);
    return;
  }
  // Doubling copies: log2(count) memcpy calls.
  std::memcpy(dst, value, e);
  auto done = static_cast<size_t>(1);
  const auto total = static_cast<size_t>(count);
  while (done < total) {
    size_t n = std::min(done, total - done);
    std::memcpy(dst + done * e, dst, n * e);
    done += n;
  }
}

}  // namespace wf
