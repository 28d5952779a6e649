#include "stats/util/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <system_error>

namespace iotail::stats {

namespace {

std::string Named(const std::string& path, std::string_view option) {
  return option.empty() ? fmt::format("'{}'", path) : fmt::format("{}: '{}'", option, path);
}

[[noreturn]] void Fail(int err, const std::string& what) {
  throw std::system_error(err, std::generic_category(), what);
}

// Refuses an existing entry at `path` that is not a regular file (a symlink included).
void CheckDestination(const std::string& path, std::string_view option) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    Fail(errno, fmt::format("{}: cannot check it", Named(path, option)));
  }
  if (S_ISLNK(st.st_mode)) {
    Fail(ELOOP, fmt::format("{} is a symbolic link; iotail does not write through links",
                            Named(path, option)));
  }
  if (!S_ISREG(st.st_mode)) {
    Fail(EINVAL, fmt::format("{} exists and is not a regular file (a device, directory or FIFO); "
                             "iotail writes only regular files",
                             Named(path, option)));
  }
}

// Opens `path` for writing; errors name `shown` (the destination, for a temporary beside it).
std::FILE* OpenFd(const std::string& path, const std::string& shown, std::string_view option,
                  int flags) {
  const int fd = open(path.c_str(), flags | O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) Fail(errno, fmt::format("{}: cannot create it", Named(shown, option)));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    Fail(EINVAL, fmt::format("{} is not a regular file", Named(path, option)));
  }
  std::FILE* f = fdopen(fd, "w");
  if (f == nullptr) {
    const int err = errno;
    close(fd);
    Fail(err, fmt::format("{}: fdopen", Named(path, option)));
  }
  return f;
}

// The temporaries that exist now (their paths, owned by their OutputFile), for
// RemoveOutputTemporaries in a signal handler: a fixed table of atomic pointers, no allocation.
std::array<std::atomic<const char*>, 64> g_temporaries{};

void Register(const char* temp) {
  for (auto& slot : g_temporaries) {
    const char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, temp)) return;
  }
  // Full (64 outputs at once): this one is still removed on every way out but a signal.
}

void Unregister(const char* temp) {
  for (auto& slot : g_temporaries) {
    const char* mine = temp;
    if (slot.compare_exchange_strong(mine, nullptr)) return;
  }
}

// The directory `path` is in must exist and be one (so a wrong path is found before a run).
void CheckDirectory(const std::string& path, std::string_view option) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    Fail(errno, fmt::format("{}: its directory '{}' cannot be used", Named(path, option), dir));
  }
  if (!S_ISDIR(st.st_mode)) {
    Fail(ENOTDIR, fmt::format("{}: '{}' is not a directory", Named(path, option), dir));
  }
}

}  // namespace

void RemoveOutputTemporaries() noexcept {
  for (auto& slot : g_temporaries) {
    if (const char* temp = slot.load(); temp != nullptr) unlink(temp);
  }
}

std::FILE* OpenRegularForWriting(const std::string& path, std::string_view option) {
  CheckDestination(path, option);
  return OpenFd(path, path, option, O_TRUNC);
}

std::FILE* OpenRegularForAppending(const std::string& path, std::string_view option) {
  CheckDestination(path, option);
  return OpenFd(path, path, option, O_APPEND);
}

OutputFile::OutputFile(std::string path, std::string_view option)
    : path_(std::move(path)), option_(option) {
  CheckDestination(path_, option_);
  CheckDirectory(path_, option_);
  temp_ = fmt::format("{}.tmp.{}", path_, getpid());
  // Whether a file can be made there (a read-only or pseudo file system such as /proc says no
  // only at create): tried now, so the run does not find out at its end; removed at once.
  const int probe = open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (probe < 0) {
    Fail(errno, fmt::format("{}: no file can be created beside it", Named(path_, option_)));
  }
  close(probe);
  unlink(temp_.c_str());
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    unlink(temp_.c_str());
    Unregister(temp_.c_str());
  }
}

std::FILE* OutputFile::file() {
  if (file_ == nullptr && !committed_) {
    file_ = OpenFd(temp_, path_, option_, O_EXCL);
    Register(temp_.c_str());
  }
  return file_;
}

void OutputFile::Write(std::string_view text) {
  file();
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    Fail(errno, fmt::format("{}: write", Named(path_, option_)));
  }
}

void OutputFile::Commit() {
  std::FILE* f = file();
  file_ = nullptr;
  committed_ = true;
  const bool ok = std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    unlink(temp_.c_str());
    Unregister(temp_.c_str());
    Fail(ok ? errno : err, fmt::format("{}: write", Named(path_, option_)));
  }
  CheckDestination(path_, option_);  // nothing may have replaced it with a link meanwhile
  if (rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    unlink(temp_.c_str());
    Unregister(temp_.c_str());
    Fail(e, fmt::format("{}: rename into place", Named(path_, option_)));
  }
  Unregister(temp_.c_str());
}

}  // namespace iotail::stats
