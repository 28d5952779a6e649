#include "engine/replay/compressed_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <system_error>
#include <vector>

#if IOTAIL_HAVE_ZLIB
#include <zlib.h>
#endif
#if IOTAIL_HAVE_ZSTD
#include <zstd.h>
#endif

#include "engine/shared_library.h"

namespace iotail::engine::replay {
namespace {

#if IOTAIL_HAVE_ZLIB
constexpr bool kHaveZlib = true;
#else
constexpr bool kHaveZlib = false;
#endif
#if IOTAIL_HAVE_ZSTD
constexpr bool kHaveZstd = true;
#else
constexpr bool kHaveZstd = false;
#endif

constexpr size_t kInputBufferBytes = 64 * 1024;

// zlib and libzstd are looked up with dlopen the first time a trace needs one and kept loaded
// (engine/shared_library.h: linked, every iotail command would load them; preloading both made
// `iotail --version` 0.1 to 1.6 ms slower in 4 runs of 1000 on a busy 2-core VM; few runs replay
// a compressed trace). Built with their headers only.
#if IOTAIL_HAVE_ZLIB
struct Zlib {
  decltype(&::inflateInit2_) init;
  decltype(&::inflate) inflate;
  decltype(&::inflateReset) reset;
  decltype(&::inflateEnd) end;
};
// zlib's functions, loaded for the file at `path` (named if it fails); throws TraceFormatError.
const Zlib& LoadZlib(const std::string& path) {
  static Zlib zlib;
  static std::once_flag once;  // not set if loading throws: the next trace tries again
  std::call_once(once, [&] {
    const SharedLibrary<TraceFormatError> library({"libz.so.1", "zlib1g", "zlib"},
                                                  path + ": reading gzip-compressed data");
    library.Bind(zlib.init, "inflateInit2_");
    library.Bind(zlib.inflate, "inflate");
    library.Bind(zlib.reset, "inflateReset");
    library.Bind(zlib.end, "inflateEnd");
  });
  return zlib;
}
#endif

#if IOTAIL_HAVE_ZSTD
struct Zstd {
  decltype(&::ZSTD_createDCtx) create;
  decltype(&::ZSTD_freeDCtx) free;
  decltype(&::ZSTD_decompressStream) decompress;
  decltype(&::ZSTD_isError) is_error;
  decltype(&::ZSTD_getErrorName) error_name;
};
const Zstd& LoadZstd(const std::string& path) {
  static Zstd zstd;
  static std::once_flag once;
  std::call_once(once, [&] {
    const SharedLibrary<TraceFormatError> library({"libzstd.so.1", "libzstd1", "libzstd"},
                                                  path + ": reading zstd-compressed data");
    library.Bind(zstd.create, "ZSTD_createDCtx");
    library.Bind(zstd.free, "ZSTD_freeDCtx");
    library.Bind(zstd.decompress, "ZSTD_decompressStream");
    library.Bind(zstd.is_error, "ZSTD_isError");
    library.Bind(zstd.error_name, "ZSTD_getErrorName");
  });
  return zstd;
}
#endif

// What the decompressors share: the compressed file under them, its input buffer and the count of
// compressed bytes taken from it (for the offset an error names).
class Decompressor : public ByteSource {
 public:
  explicit Decompressor(std::unique_ptr<ByteSource> file)
      : file_(std::move(file)), in_(kInputBufferBytes) {}
  const std::string& name() const override { return file_->name(); }

 protected:
  // Refills the input buffer once it is used up, until the end of the file.
  void FillIfEmpty() {
    if (in_pos_ < in_len_ || eof_) return;
    in_len_ = file_->Read(in_.data(), in_.size());
    in_pos_ = 0;
    eof_ = in_len_ == 0;
  }
  // After a step that produced nothing: at the end of the file with all input taken, the stream
  // ends here, cleanly between members/frames or truncated inside one.
  void EndIfStuck(const char* format) {
    if (!eof_ || in_pos_ < in_len_) return;
    if (!at_boundary_) Truncated(format);
    done_ = true;
  }
  [[noreturn]] void Damaged(const char* format, const std::string& what) const {
    throw TraceFormatError(fmt::format("{}: damaged {} stream at compressed byte {}: {}", name(),
                                       format, consumed_, what));
  }
  [[noreturn]] void Truncated(const char* format) const {
    throw TraceFormatError(
        fmt::format("{}: {} stream ends early, after {} compressed bytes (a truncated file?)",
                    name(), format, consumed_));
  }

  std::unique_ptr<ByteSource> file_;
  std::vector<char> in_;
  size_t in_len_ = 0;
  size_t in_pos_ = 0;
  uint64_t consumed_ = 0;    // compressed bytes the library has taken
  bool at_boundary_ = true;  // between members/frames: the end of the file is a clean end
  bool eof_ = false;
  bool done_ = false;
};

#if IOTAIL_HAVE_ZLIB
class GzipSource : public Decompressor {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> file)
      : Decompressor(std::move(file)), z_(LoadZlib(name())) {
    // 16 + 15: a gzip wrapper and the largest window (zlib's inflateInit2 macro, spelled out).
    if (z_.init(&zs_, 16 + MAX_WBITS, ZLIB_VERSION, static_cast<int>(sizeof(z_stream))) != Z_OK) {
      throw std::runtime_error(name() + ": zlib's inflateInit2 failed");
    }
  }
  ~GzipSource() override { z_.end(&zs_); }

  size_t Read(char* buf, size_t n) override {
    if (done_ || n == 0) return 0;
    const size_t want = std::min<size_t>(n, 1u << 30);
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(want);
    while (zs_.avail_out == want && !done_) {
      FillIfEmpty();
      zs_.next_in = reinterpret_cast<Bytef*>(in_.data() + in_pos_);
      zs_.avail_in = static_cast<uInt>(in_len_ - in_pos_);
      const int rc = z_.inflate(&zs_, Z_NO_FLUSH);
      const size_t used = (in_len_ - in_pos_) - zs_.avail_in;
      in_pos_ += used;
      consumed_ += used;
      if (rc == Z_STREAM_END) {
        at_boundary_ = true;  // another member may follow
        z_.reset(&zs_);
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        Damaged("gzip", zs_.msg != nullptr ? zs_.msg : fmt::format("zlib error {}", rc));
      } else if (used > 0) {
        at_boundary_ = false;
      }
      if (zs_.avail_out == want) EndIfStuck("gzip");
    }
    return want - zs_.avail_out;
  }

 private:
  const Zlib& z_;
  z_stream zs_{};
};
#endif

#if IOTAIL_HAVE_ZSTD
class ZstdSource : public Decompressor {
 public:
  explicit ZstdSource(std::unique_ptr<ByteSource> file)
      : Decompressor(std::move(file)), z_(LoadZstd(name())), dctx_(z_.create()) {
    if (dctx_ == nullptr) throw std::runtime_error(name() + ": ZSTD_createDCtx failed");
  }
  ~ZstdSource() override { z_.free(dctx_); }

  size_t Read(char* buf, size_t n) override {
    if (done_ || n == 0) return 0;
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0 && !done_) {
      FillIfEmpty();
      ZSTD_inBuffer in{in_.data(), in_len_, in_pos_};
      const size_t rc = z_.decompress(dctx_, &out, &in);
      const size_t used = in.pos - in_pos_;
      consumed_ += used;
      in_pos_ = in.pos;
      if (z_.is_error(rc)) Damaged("zstd", z_.error_name(rc));
      // 0: a frame is decoded and flushed whole; another may follow.
      if (rc == 0) {
        at_boundary_ = true;
      } else if (used > 0) {
        at_boundary_ = false;
      }
      if (out.pos == 0) EndIfStuck("zstd");
    }
    return out.pos;
  }

 private:
  const Zstd& z_;
  ZSTD_DCtx* dctx_;
};
#endif

}  // namespace

Compression DetectCompression(std::string_view head) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
  if (head.size() >= 2 && byte(0) == 0x1f && byte(1) == 0x8b) return Compression::kGzip;
  if (head.size() >= 4 && byte(0) == 0x28 && byte(1) == 0xb5 && byte(2) == 0x2f &&
      byte(3) == 0xfd) {
    return Compression::kZstd;
  }
  return Compression::kNone;
}

const char* CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kGzip:
      return "gzip";
    case Compression::kZstd:
      return "zstd";
    case Compression::kNone:
      break;
  }
  return "plain";
}

bool CompressionBuiltIn(Compression compression) {
  switch (compression) {
    case Compression::kGzip:
      return kHaveZlib;
    case Compression::kZstd:
      return kHaveZstd;
    case Compression::kNone:
      break;
  }
  return true;
}

FileByteSource::FileByteSource(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "open trace '" + path_ + "'");
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
      throw std::system_error(errno, std::generic_category(), "read trace '" + path_ + "'");
    }
  }
}

std::string_view PeekableSource::Peek(size_t n) {
  if (n > head_.size()) {
    // Only before the first Read: the bytes peeked are all that is kept.
    size_t got = head_.size();
    head_.resize(n);
    while (got < n) {
      const size_t r = inner_->Read(head_.data() + got, n - got);
      if (r == 0) break;
      got += r;
    }
    head_.resize(got);
  }
  return std::string_view(head_).substr(0, n);
}

size_t PeekableSource::Read(char* buf, size_t n) {
  if (head_pos_ < head_.size()) {
    const size_t k = std::min(n, head_.size() - head_pos_);
    std::memcpy(buf, head_.data() + head_pos_, k);
    head_pos_ += k;
    return k;
  }
  return inner_->Read(buf, n);
}

std::unique_ptr<ByteSource> Decompress(Compression compression,
                                       std::unique_ptr<ByteSource> compressed) {
  switch (compression) {
    case Compression::kGzip:
#if IOTAIL_HAVE_ZLIB
      return std::make_unique<GzipSource>(std::move(compressed));
#else
      throw TraceFormatError(compressed->name() +
                             ": gzip-compressed, and this iotail was built without zlib's headers "
                             "(zlib1g-dev); decompress it first (gzip -d)");
#endif
    case Compression::kZstd:
#if IOTAIL_HAVE_ZSTD
      return std::make_unique<ZstdSource>(std::move(compressed));
#else
      throw TraceFormatError(compressed->name() +
                             ": zstd-compressed, and this iotail was built without libzstd's "
                             "headers (libzstd-dev); decompress it first (zstd -d)");
#endif
    case Compression::kNone:
      break;
  }
  return compressed;
}

std::unique_ptr<ByteSource> OpenByteSource(const std::string& path) {
  auto file = std::make_unique<PeekableSource>(std::make_unique<FileByteSource>(path));
  const Compression compression = DetectCompression(file->Peek(4));
  return Decompress(compression, std::move(file));
}

}  // namespace iotail::engine::replay
