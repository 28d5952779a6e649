#include "engine/replay/open_trace.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "engine/replay/blktrace_reader.h"
#include "engine/replay/compressed_source.h"
#include "engine/replay/iolog_reader.h"

namespace iotail::engine::replay {

FileByteSource::FileByteSource(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), fmt::format("open trace '{}'", path_));
  }
}

FileByteSource::~FileByteSource() {
  if (fd_ >= 0) ::close(fd_);
}

size_t FileByteSource::Read(char* buf, size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd_, buf, n);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) {
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("read trace '{}'", path_));
    }
  }
}

size_t PrefixedSource::Read(char* buf, size_t n) {
  if (at_ < prefix_.size()) {
    const size_t k = std::min(n, prefix_.size() - at_);
    std::memcpy(buf, prefix_.data() + at_, k);
    at_ += k;
    return k;
  }
  return rest_->Read(buf, n);
}

TraceFormat DetectTraceFormat(std::string_view head) {
  switch (DetectCompression(head)) {
    case Compression::kGzip:
      return TraceFormat::kGzip;
    case Compression::kZstd:
      return TraceFormat::kZstd;
    case Compression::kNone:
      break;
  }
  if (LooksLikeIolog(head)) return TraceFormat::kIolog;
  if (LooksLikeBlktrace(head)) return TraceFormat::kBlktrace;
  return TraceFormat::kUnknown;
}

std::string_view TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kIolog:
      return "fio iolog";
    case TraceFormat::kBlktrace:
      return "blktrace binary dump";
    case TraceFormat::kGzip:
      return "gzip-compressed";
    case TraceFormat::kZstd:
      return "zstd-compressed";
    case TraceFormat::kUnknown:
      break;
  }
  return "unknown";
}

namespace {

// Reads up to n bytes (fewer only at the end).
std::string ReadHead(ByteSource& source, size_t n) {
  std::string head(n, '\0');
  size_t got = 0;
  while (got < n) {
    const size_t k = source.Read(head.data() + got, n - got);
    if (k == 0) break;
    got += k;
  }
  head.resize(got);
  return head;
}

}  // namespace

std::unique_ptr<TraceReader> OpenTraceFrom(std::unique_ptr<ByteSource> source) {
  std::string head = ReadHead(*source, 64);
  const TraceFormat format = DetectTraceFormat(head);
  const std::string name = source->name();
  auto rest = std::make_unique<PrefixedSource>(std::move(head), std::move(source));
  switch (format) {
    case TraceFormat::kIolog:
      return std::make_unique<IologReader>(std::move(rest));
    // The compressed sources decompress `rest` (its first bytes served again) and the result is
    // told again; the blktrace reader takes a dump.
    case TraceFormat::kGzip:
      return OpenTraceFrom(Decompress(Compression::kGzip, std::move(rest)));
    case TraceFormat::kZstd:
      return OpenTraceFrom(Decompress(Compression::kZstd, std::move(rest)));
    case TraceFormat::kBlktrace:
      return MakeBlktraceReader(std::move(rest));
    case TraceFormat::kUnknown:
      break;
  }
  throw TraceFormatError(fmt::format(
      "{}: not a trace iotail can replay (expected fio's \"fio version 2 iolog\" or \"fio version "
      "3 iolog\" first line, or a blktrace binary dump)",
      name));
}

std::unique_ptr<TraceReader> OpenTrace(const std::string& path) {
  return OpenTraceFrom(std::make_unique<FileByteSource>(path));
}

}  // namespace iotail::engine::replay
