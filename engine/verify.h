// Verified blocks, for fio's verify (crc32c, md5, crc64, crc32, crc16, crc7, xxhash, meta, null):
// a written block carries a 48-byte header (a magic number, the checksum kind, its length, its byte
// offset and file index, and the checksum) followed by pseudo-random bytes derived from the offset
// and a seed; the checksum covers the whole block with the checksum field zeroed. Reading it back
// checks the magic, the offset, the length and the checksum, so a block that is corrupt, torn, or
// written where another belongs is found. Pure functions over caller-owned buffers (no allocation):
// safe on the I/O path; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace iotail::engine {

// The checksums of fio's verify that iotail computes (each over its own block format, not fio's
// on-disk header): meta checks the header alone (fio's deprecated verify=meta), null checks
// nothing (fio's "only pretend"). fio's sha* and pattern are refused.
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
};

inline constexpr uint32_t kVerifyHeaderBytes = 48;

VerifyKind ParseVerifyKind(const std::string& text);  // UsageError naming --verify
const char* VerifyKindName(VerifyKind kind);

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

// Fills buf (len >= kVerifyHeaderBytes bytes) as the block at `offset` of file `file`.
void FillVerifiedBlock(char* buf, uint32_t len, uint64_t offset, uint32_t file, uint64_t seed,
                       VerifyKind kind);
// Checks a block read back from `offset` of file `file`; false (with a short reason in *why,
// which must point to a buffer of at least 64 bytes) when it is not what was written there.
bool CheckVerifiedBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file,
                        VerifyKind kind, char* why);

}  // namespace iotail::engine
