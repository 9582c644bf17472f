#include "runtime/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
  // A regular file is read in one go into a string of its size (a stream copy of a gigabyte file
  // would grow and copy its buffer several times); pipes and the like are read as a stream.
  std::error_code sizeError;
  const auto size = std::filesystem::file_size(path, sizeError);
  if (!sizeError && size > 0) {
    std::string bytes(static_cast<size_t>(size), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    if (in.gcount() != static_cast<std::streamsize>(size)) return invalidArgument(path + ": read error (file shrank?)");
    return bytes;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return invalidArgument(path + ": read error");
  return ss.str();
}

Expected<MappedFile> MappedFile::open(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return invalidArgument(path + ": is a directory");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return notFound(path + ": cannot open file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return invalidArgument(path + ": cannot stat file: " + std::strerror(err));
  }
  MappedFile m;
  m.size_ = static_cast<size_t>(st.st_size);
  if (m.size_ > 0) {
    void* addr = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (addr == MAP_FAILED) return invalidArgument(path + ": cannot map file: " + std::strerror(err));
    m.addr_ = addr;
    ::madvise(addr, m.size_, MADV_SEQUENTIAL);  // read once, front to back
  } else {
    ::close(fd);
  }
  return m;
}

MappedFile::MappedFile(MappedFile&& other) noexcept : addr_(other.addr_), size_(other.size_) {
  other.addr_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (addr_) ::munmap(addr_, size_);
    addr_ = other.addr_;
    size_ = other.size_;
    other.addr_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (addr_) ::munmap(addr_, size_);
}

Status writeFileAtomically(const std::string& path, std::string_view bytes) {
  namespace fs = std::filesystem;
  fs::path target(path);
  // A random suffix keeps concurrent writers of the same directory apart.
  std::random_device rd;
  fs::path tmp = target;
  tmp += ".tmp" + std::to_string(rd() % 1000000);
  auto fail = [&](const std::string& what) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return invalidArgument(path + ": " + what);
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return invalidArgument(path + ": cannot create file: " + std::strerror(errno));
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      return fail("write error: " + why);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // The data reaches the disk before the rename publishes it: after a crash the file is either
  // the old one or the whole new one (checkpoints depend on this).
  if (::fsync(fd) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return fail("fsync failed: " + why);
  }
  if (::close(fd) != 0) return fail(std::string("close failed: ") + std::strerror(errno));
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) return fail("cannot rename temporary file: " + ec.message());
  // And the rename itself reaches the disk.
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

}  // namespace wf
