#include "engine/replay/open_trace.h"

#include <fmt/format.h>

#include "engine/replay/blktrace_reader.h"
#include "engine/replay/compressed_source.h"
#include "engine/replay/iolog_reader.h"

namespace iotail::engine::replay {

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

std::unique_ptr<TraceReader> OpenTraceFrom(std::unique_ptr<ByteSource> source) {
  // The first bytes, told and then served again to the reader.
  auto rest = std::make_unique<PeekableSource>(std::move(source));
  const TraceFormat format = DetectTraceFormat(rest->Peek(64));
  const std::string name = rest->name();
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
