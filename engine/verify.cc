#include "engine/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

constexpr uint32_t kMagic = 0x766f7469;  // "itov"
constexpr size_t kSumAt = 32;            // the checksum field: 16 bytes at 32..47

constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

uint32_t Rotl(uint32_t x, int c) { return (x << c) | (x >> (32 - c)); }

void Md5Block(uint32_t state[4], const uint8_t block[64]) {
  static constexpr uint32_t kK[64] = {
      0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
      0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
      0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
      0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
      0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
      0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
      0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
      0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
      0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
      0xeb86d391};
  static constexpr int kS[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
  uint32_t m[16];
  for (int i = 0; i < 16; ++i) {
    m[i] = uint32_t{block[4 * i]} | uint32_t{block[4 * i + 1]} << 8 |
           uint32_t{block[4 * i + 2]} << 16 | uint32_t{block[4 * i + 3]} << 24;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  for (int i = 0; i < 64; ++i) {
    uint32_t f;
    int g;
    if (i < 16) {
      f = (b & c) | (~b & d);
      g = i;
    } else if (i < 32) {
      f = (d & b) | (~d & c);
      g = (5 * i + 1) % 16;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) % 16;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) % 16;
    }
    const uint32_t t = d;
    d = c;
    c = b;
    b = b + Rotl(a + f + kK[i] + m[g], kS[i]);
    a = t;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
}

uint64_t Mix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// MD5 (RFC 1321) of p[0, len) read with bytes [zero_at, zero_at + zero_len) as zeros, into
// digest[16]: 64-byte blocks straight from p, those that overlap the zeroed bytes copied first.
void Md5Zeroed(const uint8_t* p, size_t len, size_t zero_at, size_t zero_len, uint8_t digest[16]) {
  uint32_t state[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  // Copies p[from, from + n) to out, zeroing what overlaps the field.
  auto copy = [&](size_t from, size_t n, uint8_t* out) {
    std::memcpy(out, p + from, n);
    const size_t lo = std::max(from, zero_at), hi = std::min(from + n, zero_at + zero_len);
    if (lo < hi) std::memset(out + (lo - from), 0, hi - lo);
  };
  size_t done = 0;
  uint8_t chunk[64];
  for (; done + 64 <= len; done += 64) {
    if (done + 64 <= zero_at || done >= zero_at + zero_len) {
      Md5Block(state, p + done);
    } else {
      copy(done, 64, chunk);
      Md5Block(state, chunk);
    }
  }
  // Padding: 0x80, zeros, the bit length (the rest of the data is under 64 bytes).
  uint8_t tail[128] = {};
  const size_t rest = len - done;
  copy(done, rest, tail);
  tail[rest] = 0x80;
  const size_t total = rest + 9 <= 64 ? 64 : 128;
  const uint64_t bits = uint64_t{len} * 8;
  for (int i = 0; i < 8; ++i) tail[total - 8 + i] = static_cast<uint8_t>(bits >> (8 * i));
  Md5Block(state, tail);
  if (total == 128) Md5Block(state, tail + 64);
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 4; ++k) digest[4 * i + k] = static_cast<uint8_t>(state[i] >> (8 * k));
  }
}

// The block's checksum (the field itself read as zeros) into sum[16].
void Sum(const char* buf, uint32_t len, VerifyKind kind, uint8_t sum[16]) {
  std::memset(sum, 0, 16);
  static const char kZero[16] = {};
  if (kind == VerifyKind::kCrc32c) {
    uint32_t crc = Crc32c(buf, kSumAt);
    crc = Crc32c(kZero, 16, crc);
    crc = Crc32c(buf + kSumAt + 16, len - kSumAt - 16, crc);
    std::memcpy(sum, &crc, 4);
    return;
  }
  // MD5 over the block with the field zeroed.
  Md5Zeroed(reinterpret_cast<const uint8_t*>(buf), len, kSumAt, 16, sum);
}

struct Header {
  uint32_t magic;
  uint8_t kind;
  uint8_t pad[3];
  uint32_t len;
  uint32_t file;
  uint64_t offset;
  uint64_t seed;
};
static_assert(sizeof(Header) == 32);

}  // namespace

VerifyKind ParseVerifyKind(const std::string& text) {
  if (text == "0" || text == "none") return VerifyKind::kNone;
  if (text == "crc32c" || text == "crc32c-intel") return VerifyKind::kCrc32c;
  if (text == "md5") return VerifyKind::kMd5;
  throw stats::UsageError(
      fmt::format("--verify: expected crc32c, md5 or 0 (iotail does not do '{}')", text));
}

const char* VerifyKindName(VerifyKind kind) {
  return kind == VerifyKind::kCrc32c ? "crc32c" : kind == VerifyKind::kMd5 ? "md5" : "none";
}

uint32_t Crc32c(const void* data, size_t len, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < len; ++i) crc = kCrcTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

void Md5(const void* data, size_t len, uint8_t digest[16]) {
  Md5Zeroed(static_cast<const uint8_t*>(data), len, 0, 0, digest);
}

void FillVerifiedBlock(char* buf, uint32_t len, uint64_t offset, uint32_t file, uint64_t seed,
                       VerifyKind kind) {
  Header h{kMagic, static_cast<uint8_t>(kind), {}, len, file, offset, seed};
  std::memcpy(buf, &h, sizeof h);
  uint64_t x = seed ^ offset ^ (uint64_t{file} << 48);
  for (uint32_t at = kVerifyHeaderBytes; at < len; at += 8) {
    const uint64_t v = Mix(x);
    std::memcpy(buf + at, &v, std::min<uint32_t>(8, len - at));
  }
  uint8_t sum[16];
  Sum(buf, len, kind, sum);
  std::memcpy(buf + kSumAt, sum, 16);
}

bool CheckVerifiedBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file,
                        VerifyKind kind, char* why) {
  Header h;
  std::memcpy(&h, buf, sizeof h);
  if (h.magic != kMagic) {
    std::snprintf(why, 64, "no verify header (bad magic)");
    return false;
  }
  if (h.offset != offset || h.file != file || h.len != len) {
    std::snprintf(why, 64, "header for offset %llu, len %u",
                  static_cast<unsigned long long>(h.offset), h.len);
    return false;
  }
  uint8_t sum[16];
  Sum(buf, len, kind, sum);
  if (std::memcmp(sum, buf + kSumAt, 16) != 0) {
    std::snprintf(why, 64, "%s mismatch", VerifyKindName(kind));
    return false;
  }
  return true;
}

}  // namespace iotail::engine
