// The on-disk cache of generated kernels' machine code (the NVRTC output of nvrtc.h), shared by
// processes and runs, so that a process compiling a model it (or another process, such as the
// other ranks of a job) compiled before loads the cubin instead of running NVRTC again.
//
// An entry is one file, `<key>.cubin`, in a folder per architecture, NVRTC and driver version:
// a small header (magic, payload size, key, SHA-256 of the payload), then the cubin. The key is
// the SHA-256 of everything the machine code depends on (the program's source and headers, the
// architecture, NVRTC's version, the compile options, the driver's version), so a changed
// compiler or driver never loads a stale cubin. Writes go to a temporary file in the same folder
// that is then renamed over the entry: a reader sees the old entry, the new one or none, never
// half of one. An entry that fails its checks is ignored (one warning line on stderr) and
// replaced by the next store; a folder that cannot be written gives one warning per process and
// the run goes on compiling without the cache. No GPU is needed for any of this.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/status.h"

namespace wf::cuda {

// Everything a cubin depends on. Headers are the named headers handed to NVRTC (their text is
// part of the program's source).
struct KernelCacheKeyParts {
  std::string_view source;
  std::vector<std::pair<std::string_view, std::string_view>> headers;  // (include name, text)
  std::string_view arch;                                              // "sm_90"
  int nvrtcMajor = 0, nvrtcMinor = 0;                                 // nvrtcVersion
  std::vector<std::string> options;                                   // NVRTC's command line
  int driverVersion = 0;                                              // cudaDriverGetVersion
};

// The SHA-256 (OpenSSL) of the parts, each length-prefixed so that no two different sets of
// parts hash the same text: 64 lowercase hex digits (an error only where OpenSSL fails).
Expected<std::string> kernelCacheKey(const KernelCacheKeyParts& parts);

// The environment lookup kernelCacheRoot reads (std::getenv; tests pass their own).
using EnvLookup = std::function<const char*(const char*)>;

// The folder of the kernel cache, or nullopt when it is off. In order:
//   enabled false (`--no-kernel-cache`, CompileOptions::kernelCache)    -> off
//   flagDir not empty (`--kernel-cache DIR`, CompileOptions::kernelCacheDir) -> flagDir
//   WARPFORGE_KERNEL_CACHE=0|off|false|no                               -> off
//   WARPFORGE_CACHE_DIR (not empty)                                     -> it
//   XDG_CACHE_HOME (an absolute path, as the XDG spec asks)             -> $XDG_CACHE_HOME/warpforge
//   HOME                                                                -> $HOME/.cache/warpforge
//   none of them                                                        -> off
// WARPFORGE_KERNEL_CACHE=1|on|true|yes (or empty) leaves the cache on; another value is an error
// naming the variable.
Expected<std::optional<std::filesystem::path>> kernelCacheRoot(bool enabled, const std::string& flagDir,
                                                               const EnvLookup& env = std::getenv);

// The folder under the root for one architecture, NVRTC and driver: "kernels/sm_90-nvrtc13.0-driver13000".
// (The key covers them too; the folders keep entries of old drivers apart, for removal.)
std::filesystem::path kernelCacheFolder(const std::filesystem::path& root, std::string_view arch, int nvrtcMajor,
                                        int nvrtcMinor, int driverVersion);

class KernelCache {
 public:
  // Entries in `folder` (created on the first store).
  explicit KernelCache(std::filesystem::path folder) : folder_(std::move(folder)) {}

  const std::filesystem::path& folder() const { return folder_; }
  std::filesystem::path entryPath(const std::string& key) const;

  struct Lookup {
    enum class Outcome { kHit, kMissing, kCorrupt };
    Outcome outcome = Outcome::kMissing;
    std::string cubin;    // kHit: the payload
    std::string problem;  // kCorrupt: what was wrong with the entry
  };
  // The entry for `key`. A corrupt one (bad magic, size, key or checksum) prints one warning line
  // on stderr and is left for the next store to replace.
  Lookup load(const std::string& key) const;
  // Writes the entry for `key` atomically (temporary file + rename), replacing what was there.
  // False when the folder cannot be written: one warning line per folder per process, and no
  // further attempt on that folder in this process.
  bool store(const std::string& key, std::string_view cubin) const;

 private:
  std::filesystem::path folder_;
};

}  // namespace wf::cuda
