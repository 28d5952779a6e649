#include "stats/util/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

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

}  // namespace

std::FILE* OpenRegularForWriting(const std::string& path, std::string_view option) {
  CheckDestination(path, option);
  return OpenFd(path, path, option, O_TRUNC);
}

OutputFile::OutputFile(std::string path, std::string_view option)
    : path_(std::move(path)), option_(option) {
  CheckDestination(path_, option_);
  temp_ = fmt::format("{}.tmp.{}", path_, getpid());
  file_ = OpenFd(temp_, path_, option_, O_EXCL);
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    unlink(temp_.c_str());
  }
}

void OutputFile::Write(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    Fail(errno, fmt::format("{}: write", Named(path_, option_)));
  }
}

void OutputFile::Commit() {
  std::FILE* f = file_;
  file_ = nullptr;
  const bool ok = std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    unlink(temp_.c_str());
    Fail(ok ? errno : err, fmt::format("{}: write", Named(path_, option_)));
  }
  CheckDestination(path_, option_);  // nothing may have replaced it with a link meanwhile
  if (rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    unlink(temp_.c_str());
    Fail(e, fmt::format("{}: rename into place", Named(path_, option_)));
  }
}

}  // namespace iotail::stats
