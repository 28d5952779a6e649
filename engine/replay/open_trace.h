// OpenTrace: a trace file opened for replay, its format told from its first bytes, read through
// the one TraceReader that format has.
//
// The single place where formats plug in (OpenTraceFrom): a gzip or zstd stream (by its magic
// number) is wrapped in a decompressing ByteSource and told again; a blktrace binary dump (its
// first record's magic, either byte order) goes to the blktrace reader; a stream beginning with
// fio's "fio version 2|3 iolog" line goes to IologReader. A stream that is none of these is refused
// with a TraceFormatError naming the file; a compression this build or machine lacks is refused by
// the decompressor (compressed_source.h), naming the package.
// The format is told from the first bytes through a PeekableSource, which serves them again to the
// reader (compressed_source.h, with the plain file's FileByteSource). Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/replay/compressed_source.h"
#include "engine/replay/trace_event.h"

namespace iotail::engine::replay {

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
