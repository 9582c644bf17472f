#include "runtime/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace wf {

Expected<std::string> readFileBytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return invalidArgument(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound(path + ": cannot open file: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return invalidArgument(path + ": read error");
  return ss.str();
}

Status writeFileAtomically(const std::string& path, std::string_view bytes) {
  namespace fs = std::filesystem;
  fs::path target(path);
  // A random suffix keeps concurrent writers of the same directory apart.
  std::random_device rd;
  fs::path tmp = target;
  tmp += ".tmp" + std::to_string(rd() % 1000000);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return invalidArgument(path + ": cannot create file: " + std::strerror(errno));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      return invalidArgument(path + ": write error");
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return invalidArgument(path + ": cannot rename temporary file: " + ec.message());
  }
  return Status::ok();
}

}  // namespace wf
