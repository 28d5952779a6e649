// Verified blocks, for fio's verify (crc32c, md5, crc64, crc32, crc16, crc7, xxhash, sha1, sha256,
// sha512, sha3-224/256/384/512, meta, pattern, null): a written block is cut into verify intervals
// (fio's verify_interval; one by default), each carrying a header (a magic number, the checksum
// kind, its length, its byte offset and file index, and the checksum: 48 bytes, or 32 and the SHA
// digest rounded up to 8 bytes) followed by pseudo-random bytes derived from the offset and a seed,
// or by fio's verify_pattern laid over the whole block from its start (the headers over it); the
// checksum covers the interval with the checksum field zeroed. Reading it back checks the magic,
// the offset, the length and the checksum (meta: with a pattern, the pattern after the header;
// pattern: no header, only the pattern), so a block that is corrupt, torn, or written where another
// belongs is found. The headers are iotail's own, not fio's; the pattern bytes are fio's, byte for
// byte. Pure functions over caller-owned buffers (no allocation): safe on the I/O path;
// thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace iotail::engine {

// The checksums of fio's verify that iotail computes (each over its own block format, not fio's
// on-disk header): meta checks the header alone (fio's deprecated verify=meta) and the pattern
// after it when there is one, pattern checks only verify_pattern (no header: fio's verify=pattern),
// null checks nothing (fio's "only pretend"). The SHA kinds come from GNU Nettle, loaded when
// ParseVerifyKind first names one (engine/nettle_loader.h).
enum class VerifyKind : uint8_t {
  kNone = 0,
  kCrc32c = 1,
  kMd5 = 2,
  kCrc64 = 3,
  kCrc32 = 4,
  kCrc16 = 5,
  kCrc7 = 6,
  kXxhash = 7,
  kMeta = 8,
  kNull = 9,
  kPattern = 10,
  kSha1 = 11,
  kSha256 = 12,
  kSha512 = 13,
  kSha3_224 = 14,
  kSha3_256 = 15,
  kSha3_384 = 16,
  kSha3_512 = 17,
};

// The header of the checksummed kinds but the SHAs (their digests are longer).
inline constexpr uint32_t kVerifyHeaderBytes = 48;
// The header of `kind`'s intervals: 32 bytes, then the checksum field (16 bytes, or the SHA digest
// rounded up to 8 bytes: 24, 32, 48 or 64).
uint32_t VerifyHeaderBytes(VerifyKind kind);

// UsageError naming --verify; a SHA kind is loaded (LoadNettleHash) before it returns.
VerifyKind ParseVerifyKind(const std::string& text);
const char* VerifyKindName(VerifyKind kind);

// fio's verify_pattern: up to 512 bytes (fio's MAX_PATTERN_SIZE) repeated over the block from its
// start, with the block's byte offset (8 bytes, little-endian) pasted where each %o stands.
struct VerifyPattern {
  std::array<uint8_t, 512> bytes{};
  uint32_t size = 0;                    // 0: no pattern
  std::array<uint32_t, 8> offset_at{};  // where each %o's 8 bytes start
  uint32_t offsets = 0;
  bool operator==(const VerifyPattern&) const = default;
};
// fio 3.33's syntax, pieces one after another: 0x hex bytes (any number, in the order written),
// a decimal integer in [INT_MIN, INT_MAX] (its significant bytes, least significant first),
// "quoted text" (no escapes), '<file>' (its first bytes) and %o. UsageError naming
// --verify_pattern when the text is none of that or passes 512 bytes.
VerifyPattern ParseVerifyPattern(std::string_view text);
// The pattern laid over buf[0, len) as fio lays it over a block at `offset`: from its first byte,
// with the offset pasted at each %o.
void FillPattern(char* buf, uint32_t len, uint64_t offset, const VerifyPattern& pattern);
// The index in buf[0, len) of the first byte that differs from that pattern (buf being the block's
// bytes from `phase` on), with what it holds and what it should; len when none does.
struct PatternMismatch {
  uint32_t at;
  uint8_t got, wanted;
};
PatternMismatch FindPatternMismatch(const char* buf, uint32_t len, uint32_t phase, uint64_t offset,
                                    const VerifyPattern& pattern);

// How a job's blocks are written and checked: the kind, the verify interval (a divisor of the
// block size; 0: the whole block) and the pattern (null or empty: random data).
struct VerifyFormat {
  VerifyFormat(VerifyKind k = VerifyKind::kNone) : kind(k) {}  // NOLINT: a kind alone is a format
  VerifyKind kind;
  uint32_t interval = 0;
  const VerifyPattern* pattern = nullptr;
  // A job that writes checks that each block it reads back is its own: the header's seed must be
  // `writer_seed` (fio's header rand_seed check, which fails a block another clone wrote over).
  bool check_writer = false;
  uint64_t writer_seed = 0;
};

// A job's verify options (JobSpec::verify), fio's names.
struct VerifyOptions {
  VerifyKind kind = VerifyKind::kNone;  // --verify: checksummed blocks
  bool do_verify = true;                // --do_verify: read the written blocks back after
  bool dump = false;  // --verify_dump: a bad block as read and as written, to files
  // --verify_backlog: once N written blocks wait, read back and check the oldest backlog_batch
  // (--verify_backlog_batch; 0: all) of them; at the end, what is left (each block once). Only
  // with do_verify, as fio.
  uint64_t backlog = 0;
  uint64_t backlog_batch = 0;
  // --verify_interval: a header every N bytes of a block (0: fio's default, the block size; one
  // that does not divide the block size is the block size too, as fio), and --verify_pattern: the
  // blocks' data (empty: random).
  uint32_t interval = 0;
  VerifyPattern pattern;
  // --verify_async: fio's verification threads (accepted, the blocks are checked inline: see
  // cli/run_options_files.cc); kept for the summary.
  uint32_t async = 0;
  // The blocks' format (refers to pattern: valid as long as these options).
  VerifyFormat Layout() const {
    VerifyFormat f(kind);
    f.interval = interval;
    f.pattern = &pattern;
    return f;
  }
};

// A read-back's verdict: the offset of the interval that failed (as fio reports it) and why.
struct VerifyCheck {
  bool ok = true;
  uint64_t offset = 0;
  char why[80] = {};
};

// Castagnoli CRC-32 (as iSCSI, ext4 and fio's crc32c) and MD5 (RFC 1321), for tests too; CRC-64
// (ECMA-182, reflected, as xz's), CRC-32 (zlib's), CRC-16 (ARC, as Linux's crc16), CRC-7 (MMC's,
// polynomial 0x09) and XXH32 (seed 0), each for a whole buffer.
uint32_t Crc32c(const void* data, size_t len, uint32_t crc = 0);
void Md5(const void* data, size_t len, uint8_t digest[16]);
uint64_t Crc64(const void* data, size_t len, uint64_t crc = 0);
uint32_t Crc32(const void* data, size_t len, uint32_t crc = 0);
uint16_t Crc16(const void* data, size_t len, uint16_t crc = 0);
uint8_t Crc7(const void* data, size_t len, uint8_t crc = 0);
uint32_t Xxh32(const void* data, size_t len);
// A SHA kind's digest of a whole buffer into out (its digest size); the kind must be loaded.
void ShaDigest(VerifyKind kind, const void* data, size_t len, uint8_t* out);

// Fills buf (each interval at least VerifyHeaderBytes(kind) bytes but with kind pattern) as the
// block at `offset` of file `file`.
void FillVerifiedBlock(char* buf, uint32_t len, uint64_t offset, uint32_t file, uint64_t seed,
                       const VerifyFormat& format);
// Checks a block read back from `offset` of file `file`, interval by interval: the first one that
// is not what was written there, with a short reason.
VerifyCheck VerifyBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file,
                        const VerifyFormat& format);
// The same, false with the reason in *why (a buffer of at least 80 bytes).
bool CheckVerifiedBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file,
                        const VerifyFormat& format, char* why);

}  // namespace iotail::engine
