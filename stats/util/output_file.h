// Safe outputs: files iotail writes never follow a symlink and are never devices, directories or
// FIFOs, and a result file appears whole or not at all.
//
// OpenRegularForWriting() creates or truncates a regular file (O_NOFOLLOW; an existing entry that
// is not a regular file is refused before anything is truncated) and returns it as a fully
// buffered stdio stream owned by the caller. OutputFile checks its destination when constructed
// (so a missing directory or a device is found before a run, not after it), creates a temporary
// file beside it only when first written (so a run killed before its end leaves none), and
// Commit() renames that over the destination; destroyed without Commit() it removes the temporary
// and leaves the destination untouched. RemoveOutputTemporaries() removes the temporaries that
// exist at that moment; it is async-signal-safe, for a SIGINT/SIGTERM handler (cli/main.cc). Errors
// are std::system_error whose message names the path and, when given, the option. Not thread-safe.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace iotail::stats {

std::FILE* OpenRegularForWriting(const std::string& path, std::string_view option = {});
// The same checks, for appending to a regular file (created if missing, as fio's fopen "a").
std::FILE* OpenRegularForAppending(const std::string& path, std::string_view option = {});

class OutputFile {
 public:
  OutputFile(std::string path, std::string_view option);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // The temporary file's stream, created at the first call.
  std::FILE* file();
  // Writes `text` (throws on a write failure).
  void Write(std::string_view text);
  // Flushes, fsyncs and renames the temporary file over the destination.
  void Commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string option_;
  std::string temp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

void RemoveOutputTemporaries() noexcept;

}  // namespace iotail::stats
