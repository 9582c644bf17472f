// Whole-file reads and atomic writes, shared by the .npy and .safetensors code and the CLI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "support/status.h"

namespace wf {

Expected<std::string> readFileBytes(const std::string& path);

// A file mapped read-only into memory, unmapped on destruction: large files (weights, optimizer
// state) are decoded straight from the page cache into their tensors, with no whole-file copy.
class MappedFile {
 public:
  static Expected<MappedFile> open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(addr_), size_}; }

 private:
  MappedFile() = default;
  void* addr_ = nullptr;
  size_t size_ = 0;
};
// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so that
// a failure never leaves a partial file behind.
Status writeFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace wf
