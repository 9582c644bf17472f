// On/off settings read from environment variables (WARPFORGE_KERNEL_CACHE, WARPFORGE_TUNING_LOG).
#pragma once

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

namespace wf {

// "1", "on", "true", "yes" (any case): true; "0", "off", "false", "no": false; anything else,
// the empty string included: nullopt (the caller's default, or an error naming the variable).
inline std::optional<bool> parseSwitch(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (value == "1" || value == "on" || value == "true" || value == "yes") return true;
  if (value == "0" || value == "off" || value == "false" || value == "no") return false;
  return std::nullopt;
}

}  // namespace wf
