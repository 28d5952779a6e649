// The ByteSource a trace is read from: a plain file, or a gzip (zlib) or zstd (libzstd) file
// decompressed on the fly, told apart by the file's first bytes, never by its name.
//
// Contract:
// - `OpenByteSource(path)` opens the file, reads its first four bytes and returns the source for
//   what they say: gzip (1f 8b), zstd (28 b5 2f fd) or plain. The bytes read to tell are served
//   first, so pipes and FIFOs work as well as files. A file that cannot be opened or read throws
//   std::system_error naming it. `PeekableSource` over the result shows a format detector the
//   decompressed trace's first bytes.
// - Memory is bounded whatever the file's length: a 64 KiB input buffer, zlib's 32 KiB window, and
//   zstd's window (at most 128 MiB, zstd's default limit; a frame that needs more is refused).
// - Concatenated gzip members and zstd frames are read one after the other, as `gzip -d` and
//   `zstd -d` do.
// - A damaged or truncated compressed stream throws TraceFormatError naming the file, the
//   compressed byte offset where decoding stopped and what the library said.
// - zlib (libz.so.1) and libzstd (libzstd.so.1) are loaded with dlopen the first time a trace
//   needs one, so that iotail's other commands do not load them; the build needs only their
//   headers (zlib1g-dev, libzstd-dev, optional, found by pkg-config). A build without a header,
//   or a machine without the library, still detects the format and refuses the file with a
//   TraceFormatError naming the missing package.
// Not thread-safe: one source per reader.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "engine/replay/trace_event.h"

namespace iotail::engine::replay {

// A plain file read with read(2) in the caller's chunks. Opening follows a symlink (a trace is
// only read); throws std::system_error naming the file.
class FileByteSource : public ByteSource {
 public:
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

enum class Compression { kNone, kGzip, kZstd };

// What the first bytes of a file (`head`, at least four of them for zstd) say it is.
Compression DetectCompression(std::string_view head);
// "plain", "gzip" or "zstd".
const char* CompressionName(Compression compression);
// Whether this build can decompress `compression` (kNone always).
bool CompressionBuiltIn(Compression compression);

// The file at `path`, decompressed if its first bytes say it is gzip or zstd.
std::unique_ptr<ByteSource> OpenByteSource(const std::string& path);

// `compressed` read through the decompressor of `compression` (itself for kNone): for a caller
// that has already read the first bytes to tell the format (and gives them back first). The
// source's name stays the file's.
std::unique_ptr<ByteSource> Decompress(Compression compression,
                                       std::unique_ptr<ByteSource> compressed);

// A source whose first bytes can be looked at before it is read (how a format is told: the
// decompressed bytes of a compressed trace), then served again by Read. Peek must come before the
// first Read; it reads at most `n` bytes (fewer at the end) and returns them.
class PeekableSource : public ByteSource {
 public:
  explicit PeekableSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {}
  std::string_view Peek(size_t n);
  size_t Read(char* buf, size_t n) override;
  const std::string& name() const override { return inner_->name(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string head_;
  size_t head_pos_ = 0;
};

}  // namespace iotail::engine::replay
