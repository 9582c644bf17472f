#include "backends/cuda/codegen/kernel_cache.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "support/env_switch.h"

namespace wf::cuda {
namespace fs = std::filesystem;

namespace {

// SHA-256 through OpenSSL's EVP interface, fed piece by piece.
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) {
    ok_ = ctx_ && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1;
  }
  void update(std::string_view bytes) {
    ok_ = ok_ && EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) == 1;
  }
  // The field's length first, so that ("ab", "c") and ("a", "bc") hash differently.
  void field(std::string_view bytes) {
    const uint64_t n = bytes.size();
    update(std::string_view(reinterpret_cast<const char*>(&n), sizeof n));
    update(bytes);
  }
  // Empty only where OpenSSL failed: it could not allocate, or its configuration (FIPS without
  // SHA-256) refused the algorithm.
  std::optional<std::array<unsigned char, 32>> digest() {
    std::array<unsigned char, 32> out{};
    unsigned int size = 0;
    ok_ = ok_ && EVP_DigestFinal_ex(ctx_.get(), out.data(), &size) == 1 && size == out.size();
    if (!ok_) return std::nullopt;
    return out;
  }

 private:
  struct Deleter {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Deleter> ctx_;
  bool ok_ = false;
};

std::optional<std::array<unsigned char, 32>> sha256(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.digest();
}

std::string hex(const std::array<unsigned char, 32>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// The entry header: magic, payload size (host byte order: a cache serves one machine's
// architecture anyway), key (hex), SHA-256 of the payload. The magic's last character is the
// format's version.
constexpr char kMagic[8] = {'W', 'F', 'C', 'U', 'B', 'I', 'N', '1'};
constexpr size_t kKeySize = 64;
constexpr size_t kHeaderSize = sizeof kMagic + sizeof(uint64_t) + kKeySize + 32;

void warn(const std::string& message) { std::fprintf(stderr, "warpforge: kernel cache: %s\n", message.c_str()); }

// Folders a store failed in: each warned about once, then left alone for the process.
std::mutex& unwritableMutex() {
  static std::mutex mu;
  return mu;
}
std::set<std::string>& unwritable() {
  static auto* s = new std::set<std::string>();
  return *s;
}

}  // namespace

Expected<std::string> kernelCacheKey(const KernelCacheKeyParts& parts) {
  Sha256 h;
  h.field("warpforge kernel cache key 1");
  h.field(parts.source);
  h.field(std::to_string(parts.headers.size()));
  for (const auto& [name, text] : parts.headers) {
    h.field(name);
    h.field(text);
  }
  h.field(parts.arch);
  h.field(std::to_string(parts.nvrtcMajor) + "." + std::to_string(parts.nvrtcMinor));
  h.field(std::to_string(parts.options.size()));
  for (const std::string& o : parts.options) h.field(o);
  h.field(std::to_string(parts.driverVersion));
  const auto digest = h.digest();
  if (!digest) return internalError("kernel cache: OpenSSL's SHA-256 failed");
  return hex(*digest);
}

Expected<std::optional<fs::path>> kernelCacheRoot(bool enabled, const std::string& flagDir, const EnvLookup& env) {
  if (!enabled) return std::optional<fs::path>();
  if (!flagDir.empty()) return std::optional<fs::path>(fs::path(flagDir));
  auto get = [&](const char* name) -> std::string {
    const char* v = env(name);
    return v ? v : "";
  };
  const std::string setting = get("WARPFORGE_KERNEL_CACHE");
  const std::optional<bool> on = parseSwitch(setting);
  if (on == false) return std::optional<fs::path>();
  if (!setting.empty() && !on)
    return invalidArgument("WARPFORGE_KERNEL_CACHE=" + get("WARPFORGE_KERNEL_CACHE") +
                           ": expected 0, off, false or no (no kernel cache), or 1, on, true or yes");
  if (std::string dir = get("WARPFORGE_CACHE_DIR"); !dir.empty()) return std::optional<fs::path>(fs::path(dir));
  if (std::string xdg = get("XDG_CACHE_HOME"); !xdg.empty() && fs::path(xdg).is_absolute())
    return std::optional<fs::path>(fs::path(xdg) / "warpforge");
  if (std::string home = get("HOME"); !home.empty())
    return std::optional<fs::path>(fs::path(home) / ".cache" / "warpforge");
  return std::optional<fs::path>();
}

fs::path kernelCacheFolder(const fs::path& root, std::string_view arch, int nvrtcMajor, int nvrtcMinor,
                           int driverVersion) {
  return root / "kernels" /
         (std::string(arch) + "-nvrtc" + std::to_string(nvrtcMajor) + "." + std::to_string(nvrtcMinor) + "-driver" +
          std::to_string(driverVersion));
}

fs::path KernelCache::entryPath(const std::string& key) const { return folder_ / (key + ".cubin"); }

KernelCache::Lookup KernelCache::load(const std::string& key) const {
  Lookup result;
  const fs::path path = entryPath(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return result;  // not there (or unreadable, which a store then replaces)
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto corrupt = [&](const std::string& problem) {
    result.outcome = Lookup::Outcome::kCorrupt;
    result.problem = problem;
    warn("ignoring " + path.string() + " (" + problem + "); compiling it again");
    return result;
  };
  if (in.bad()) return corrupt("read error");
  if (bytes.size() < kHeaderSize) return corrupt("truncated: " + std::to_string(bytes.size()) + " bytes");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return corrupt("not a kernel cache entry (bad magic)");
  uint64_t size = 0;
  std::memcpy(&size, bytes.data() + sizeof kMagic, sizeof size);
  if (size != bytes.size() - kHeaderSize)
    return corrupt("payload of " + std::to_string(bytes.size() - kHeaderSize) + " bytes, header says " +
                   std::to_string(size));
  if (bytes.compare(sizeof kMagic + sizeof size, kKeySize, key) != 0) return corrupt("written for another key");
  const std::string_view payload = std::string_view(bytes).substr(kHeaderSize);
  const auto digest = sha256(payload);
  if (!digest) return corrupt("OpenSSL's SHA-256 failed");
  if (std::memcmp(digest->data(), bytes.data() + sizeof kMagic + sizeof size + kKeySize, digest->size()) != 0)
    return corrupt("checksum mismatch");
  result.outcome = Lookup::Outcome::kHit;
  result.cubin = std::string(payload);
  return result;
}

bool KernelCache::store(const std::string& key, std::string_view cubin) const {
  const std::string folderName = folder_.string();
  {
    std::lock_guard<std::mutex> lock(unwritableMutex());
    if (unwritable().count(folderName)) return false;
  }
  auto fail = [&](const std::string& why) {
    std::lock_guard<std::mutex> lock(unwritableMutex());
    if (unwritable().insert(folderName).second)
      warn("cannot write " + folderName + " (" + why + "); compiling without the cache");
    return false;
  };
  if (key.size() != kKeySize) return fail("bad key '" + key + "'");
  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (ec) return fail(ec.message());
  // A name no other writer uses: this process's id (read on each store: a forked child shares
  // the statics), a random number (processes of different containers sharing the folder may
  // have the same id) and a counter of the process's stores.
  static const uint64_t token = [] {
    std::random_device random;
    return (uint64_t{random()} << 32) | random();
  }();
  static std::atomic<uint64_t> counter{0};
  const fs::path final = entryPath(key);
  const fs::path temp = folder_ / (key + ".tmp." + std::to_string(::getpid()) + "-" + std::to_string(token) + "." +
                                   std::to_string(counter++));
  std::string header(kHeaderSize, '\0');
  const uint64_t size = cubin.size();
  const auto digest = sha256(cubin);
  if (!digest) return fail("OpenSSL's SHA-256 failed");
  std::memcpy(header.data(), kMagic, sizeof kMagic);
  std::memcpy(header.data() + sizeof kMagic, &size, sizeof size);
  std::memcpy(header.data() + sizeof kMagic + sizeof size, key.data(), kKeySize);
  std::memcpy(header.data() + sizeof kMagic + sizeof size + kKeySize, digest->data(), digest->size());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return fail("cannot create " + temp.filename().string());
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      return fail("writing " + temp.filename().string() + " failed");
    }
  }
  // rename(2) replaces the entry in one step: readers see the old file or the new one.
  fs::rename(temp, final, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return fail("renaming into " + final.filename().string() + ": " + ec.message());
  }
  return true;
}

}  // namespace wf::cuda
