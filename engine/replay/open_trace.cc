#include "engine/replay/open_trace.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

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
  auto byte = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
  if (head.size() >= 2 && byte(0) == 0x1f && byte(1) == 0x8b) return TraceFormat::kGzip;
  if (head.size() >= 4 && byte(0) == 0x28 && byte(1) == 0xb5 && byte(2) == 0x2f &&
      byte(3) == 0xfd) {
    return TraceFormat::kZstd;
  }
  if (LooksLikeIolog(head)) return TraceFormat::kIolog;
  // blktrace's struct blk_io_trace begins with magic 0x65617400 | version (blktrace_api.h), in
  // the byte order of the machine that recorded it.
  if (head.size() >= 4) {
    const uint32_t le =
        byte(0) | byte(1) << 8 | byte(2) << 16 | static_cast<uint32_t>(byte(3)) << 24;
    const uint32_t be =
        byte(3) | byte(2) << 8 | byte(1) << 16 | static_cast<uint32_t>(byte(0)) << 24;
    if ((le & 0xffffff00u) == 0x65617400u || (be & 0xffffff00u) == 0x65617400u) {
      return TraceFormat::kBlktrace;
    }
  }
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
    // Plug-in points: the compressed sources (engine/replay/compressed_source.h) wrap `rest` and
    // call OpenTraceFrom again; the blktrace reader (engine/replay/blktrace_reader.h) takes it.
    case TraceFormat::kGzip:
    case TraceFormat::kZstd:
    case TraceFormat::kBlktrace:
      throw TraceFormatError(fmt::format(
          "{}: a {} trace, which this iotail cannot read yet (fio iologs of version 2 and 3 can "
          "be replayed)",
          name, TraceFormatName(format)));
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
