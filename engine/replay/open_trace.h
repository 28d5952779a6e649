// OpenTrace: a trace file opened for replay, its format told from its first bytes, read through
// the one TraceReader that format has.
//
// The single place where formats plug in (OpenTraceFrom): a gzip or zstd stream (by its magic
// number) is wrapped in a decompressing ByteSource and told again; a blktrace binary dump (its
// first record's magic, either byte order) goes to the blktrace reader; a stream beginning with
// fio's "fio version 2|3 iolog" line goes to IologReader. A stream that is none of these is refused
// with a TraceFormatError naming the file; a compression this build or machine lacks is refused by
// the decompressor (compressed_source.h), naming the package.
//
// FileByteSource is the plain file's ByteSource (read(2) in the caller's chunks); PrefixedSource
// gives back the bytes read to tell the format before the rest of its source. Neither is
// thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/replay/trace_event.h"

namespace iotail::engine::replay {

class FileByteSource : public ByteSource {
 public:
  // Opens `path` for reading; throws std::system_error naming it. A symlink is followed (the
  // trace is only read).
  explicit FileByteSource(std::string path);
  ~FileByteSource() override;
  FileByteSource(const FileByteSource&) = delete;
  FileByteSource& operator=(const FileByteSource&) = delete;
  size_t Read(char* buf, size_t n) override;
  const std::string& name() const override { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

class PrefixedSource : public ByteSource {
 public:
  PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> rest)
      : prefix_(std::move(prefix)), rest_(std::move(rest)) {}
  size_t Read(char* buf, size_t n) override;
  const std::string& name() const override { return rest_->name(); }

 private:
  std::string prefix_;
  size_t at_ = 0;
  std::unique_ptr<ByteSource> rest_;
};

// The formats a trace's first bytes can announce.
enum class TraceFormat { kIolog, kBlktrace, kGzip, kZstd, kUnknown };
TraceFormat DetectTraceFormat(std::string_view head);
std::string_view TraceFormatName(TraceFormat f);

// Opens the trace at `path` (see above). Throws std::system_error (cannot open or read) or
// TraceFormatError (a format not recognised or not built in).
std::unique_ptr<TraceReader> OpenTrace(const std::string& path);
// The same from any byte stream (the tests', or a decompressed one).
std::unique_ptr<TraceReader> OpenTraceFrom(std::unique_ptr<ByteSource> source);

}  // namespace iotail::engine::replay
