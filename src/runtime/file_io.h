// Whole-file reads and atomic writes, shared by the .npy and .safetensors code and the CLI.
#pragma once

#include <string>
#include <string_view>

#include "support/status.h"

namespace wf {

Expected<std::string> readFileBytes(const std::string& path);
// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so that
// a failure never leaves a partial file behind.
Status writeFileAtomically(const std::string& path, std::string_view bytes);

}  // namespace wf
