#include "engine/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "engine/nettle_loader.h"
#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

constexpr uint32_t kMagic = 0x766f7469;  // "itov"
constexpr size_t kSumAt = 32;            // the checksum field: from byte 32 to the header's end
constexpr size_t kMaxSum = 64;           // its largest size (SHA-512, SHA3-512)

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

// A reflected CRC's table for polynomial `poly` (reversed form) of width 16, 32 or 64.
template <class T>
constexpr std::array<T, 256> ReflectedTable(T poly) {
  std::array<T, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    T c = static_cast<T>(i);
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? static_cast<T>((c >> 1) ^ poly) : static_cast<T>(c >> 1);
    t[i] = c;
  }
  return t;
}
constexpr auto kCrc64Table = ReflectedTable<uint64_t>(0xC96C5795D7870F42ull);
constexpr auto kCrc32Table = ReflectedTable<uint32_t>(0xEDB88320u);
constexpr auto kCrc16Table = ReflectedTable<uint16_t>(0xA001u);

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

// A CRC of the block with the checksum field read as zeros (three runs of Crc), stored at sum.
template <class T, T (*Crc)(const void*, size_t, T)>
void StoreCrc(const char* buf, uint32_t len, uint8_t* sum) {
  static const char kZero[16] = {};
  T c = Crc(buf, kSumAt, T{0});
  c = Crc(kZero, 16, c);
  c = Crc(buf + kSumAt + 16, len - kSumAt - 16, c);
  std::memcpy(sum, &c, sizeof c);
}

// A SHA over the block with the checksum field (`field` bytes) read as zeros.
void StoreSha(VerifyKind kind, const char* buf, uint32_t len, uint32_t field, uint8_t* sum) {
  static const uint8_t kZero[kMaxSum] = {};
  const HashFunctions* h = NettleHash(kind);
  alignas(16) unsigned char ctx[kMaxHashContext];
  const auto* p = reinterpret_cast<const uint8_t*>(buf);
  h->init(ctx);
  h->update(ctx, kSumAt, p);
  h->update(ctx, field, kZero);
  h->update(ctx, len - kSumAt - field, p + kSumAt + field);
  h->digest(ctx, h->digest_size, sum);
}

// The block's checksum (the field itself read as zeros) into sum[field]; zeros for meta and null.
void Sum(const char* buf, uint32_t len, VerifyKind kind, uint32_t field, uint8_t* sum) {
  std::memset(sum, 0, field);
  if (IsShaKind(kind)) return StoreSha(kind, buf, len, field, sum);
  switch (kind) {
    case VerifyKind::kCrc32c:
      return StoreCrc<uint32_t, Crc32c>(buf, len, sum);
    case VerifyKind::kCrc64:
      return StoreCrc<uint64_t, Crc64>(buf, len, sum);
    case VerifyKind::kCrc32:
      return StoreCrc<uint32_t, Crc32>(buf, len, sum);
    case VerifyKind::kCrc16:
      return StoreCrc<uint16_t, Crc16>(buf, len, sum);
    case VerifyKind::kCrc7:
      return StoreCrc<uint8_t, Crc7>(buf, len, sum);
    case VerifyKind::kXxhash: {
      // XXH32 has no running form here: hash the three parts and combine them.
      static const char kZero[16] = {};
      const uint32_t parts[3] = {Xxh32(buf, kSumAt), Xxh32(kZero, 16),
                                 Xxh32(buf + kSumAt + 16, len - kSumAt - 16)};
      const uint32_t c = Xxh32(parts, sizeof parts);
      std::memcpy(sum, &c, 4);
      return;
    }
    case VerifyKind::kMd5:
      // MD5 over the block with the field zeroed.
      Md5Zeroed(reinterpret_cast<const uint8_t*>(buf), len, kSumAt, 16, sum);
      return;
    default:  // meta, pattern, null, none (the SHAs above)
      return;
  }
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

namespace {
struct KindName {
  const char* name;
  VerifyKind kind;
};
constexpr KindName kKindNames[] = {
    {"crc32c", VerifyKind::kCrc32c},     {"md5", VerifyKind::kMd5},
    {"crc64", VerifyKind::kCrc64},       {"crc32", VerifyKind::kCrc32},
    {"crc16", VerifyKind::kCrc16},       {"crc7", VerifyKind::kCrc7},
    {"xxhash", VerifyKind::kXxhash},     {"meta", VerifyKind::kMeta},
    {"null", VerifyKind::kNull},         {"pattern", VerifyKind::kPattern},
    {"sha1", VerifyKind::kSha1},         {"sha256", VerifyKind::kSha256},
    {"sha512", VerifyKind::kSha512},     {"sha3-224", VerifyKind::kSha3_224},
    {"sha3-256", VerifyKind::kSha3_256}, {"sha3-384", VerifyKind::kSha3_384},
    {"sha3-512", VerifyKind::kSha3_512},
};
}  // namespace

VerifyKind ParseVerifyKind(const std::string& text) {
  if (text == "0" || text == "none") return VerifyKind::kNone;
  if (text == "crc32c-intel") return VerifyKind::kCrc32c;
  for (const KindName& k : kKindNames) {
    if (text != k.name) continue;
    LoadNettleHash(k.kind);
    return k.kind;
  }
  throw stats::UsageError(fmt::format(
      "--verify: expected crc32c, md5, crc64, crc32, crc16, crc7, xxhash, sha1, sha256, sha512, "
      "sha3-224, sha3-256, sha3-384, sha3-512, meta, pattern, null or 0 (iotail does not do '{}')",
      text));
}

uint32_t VerifyHeaderBytes(VerifyKind kind) {
  const HashFunctions* h = IsShaKind(kind) ? NettleHash(kind) : nullptr;
  if (h == nullptr) return kVerifyHeaderBytes;
  return static_cast<uint32_t>(kSumAt + (h->digest_size + 7) / 8 * 8);
}

void ShaDigest(VerifyKind kind, const void* data, size_t len, uint8_t* out) {
  const HashFunctions* h = NettleHash(kind);
  alignas(16) unsigned char ctx[kMaxHashContext];
  h->init(ctx);
  h->update(ctx, len, static_cast<const uint8_t*>(data));
  h->digest(ctx, h->digest_size, out);
}

const char* VerifyKindName(VerifyKind kind) {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "none";
}

uint64_t Crc64(const void* data, size_t len, uint64_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < len; ++i) crc = kCrc64Table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t Crc32(const void* data, size_t len, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < len; ++i) crc = kCrc32Table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint16_t Crc16(const void* data, size_t len, uint16_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < len; ++i) {
    crc = static_cast<uint16_t>(kCrc16Table[(crc ^ p[i]) & 0xff] ^ (crc >> 8));
  }
  return crc;
}

uint8_t Crc7(const void* data, size_t len, uint8_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < len; ++i) {
    uint8_t byte = p[i];
    for (int b = 0; b < 8; ++b) {
      const bool top = ((crc >> 6) ^ (byte >> 7)) & 1;
      crc = static_cast<uint8_t>((crc << 1) & 0x7f);
      if (top) crc ^= 0x09;
      byte = static_cast<uint8_t>(byte << 1);
    }
  }
  return crc;
}

uint32_t Xxh32(const void* data, size_t len) {
  constexpr uint32_t kP1 = 2654435761u, kP2 = 2246822519u, kP3 = 3266489917u, kP4 = 668265263u,
                     kP5 = 374761393u;
  const auto* p = static_cast<const uint8_t*>(data);
  const uint8_t* const end = p + len;
  auto read32 = [](const uint8_t* q) {
    uint32_t v;
    std::memcpy(&v, q, 4);
    return v;
  };
  auto round = [](uint32_t acc, uint32_t in) { return Rotl(acc + in * kP2, 13) * kP1; };
  uint32_t h;
  if (len >= 16) {
    uint32_t v1 = kP1 + kP2, v2 = kP2, v3 = 0, v4 = 0u - kP1;
    for (const uint8_t* limit = end - 16; p <= limit; p += 16) {
      v1 = round(v1, read32(p));
      v2 = round(v2, read32(p + 4));
      v3 = round(v3, read32(p + 8));
      v4 = round(v4, read32(p + 12));
    }
    h = Rotl(v1, 1) + Rotl(v2, 7) + Rotl(v3, 12) + Rotl(v4, 18);
  } else {
    h = kP5;
  }
  h += static_cast<uint32_t>(len);
  for (; p + 4 <= end; p += 4) h = Rotl(h + read32(p) * kP3, 17) * kP4;
  for (; p < end; ++p) h = Rotl(h + *p * kP5, 11) * kP1;
  h ^= h >> 15;
  h *= kP2;
  h ^= h >> 13;
  h *= kP3;
  h ^= h >> 16;
  return h;
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

namespace {

// fio's verify_interval as a step through the block: the interval when it divides the block,
// the whole block otherwise.
uint32_t IntervalStep(const VerifyFormat& f, uint32_t len) {
  return f.interval != 0 && f.interval < len && len % f.interval == 0 ? f.interval : len;
}

bool HasVerifyPattern(const VerifyFormat& f) {
  return f.pattern != nullptr && f.pattern->size != 0;
}

}  // namespace

void FillVerifiedBlock(char* buf, uint32_t len, uint64_t offset, uint32_t file, uint64_t seed,
                       const VerifyFormat& format) {
  const VerifyKind kind = format.kind;
  if (HasVerifyPattern(format)) FillPattern(buf, len, offset, *format.pattern);
  if (kind == VerifyKind::kPattern) return;  // fio's verify=pattern: no header
  const uint32_t step = IntervalStep(format, len);
  const uint32_t header = VerifyHeaderBytes(kind);
  const uint32_t field = header - kSumAt;
  for (uint32_t at = 0; at < len; at += step) {
    char* const p = buf + at;
    const uint64_t where = offset + at;
    Header h{kMagic, static_cast<uint8_t>(kind), {}, step, file, where, seed};
    std::memcpy(p, &h, sizeof h);
    std::memset(p + kSumAt, 0, field);
    if (!HasVerifyPattern(format)) {
      uint64_t x = seed ^ where ^ (uint64_t{file} << 48);
      for (uint32_t i = header; i < step; i += 8) {
        const uint64_t v = Mix(x);
        std::memcpy(p + i, &v, std::min<uint32_t>(8, step - i));
      }
    }
    uint8_t sum[kMaxSum];
    Sum(p, step, kind, field, sum);
    std::memcpy(p + kSumAt, sum, field);
  }
}

VerifyCheck VerifyBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file,
                        const VerifyFormat& format) {
  VerifyCheck r;
  const VerifyKind kind = format.kind;
  if (kind == VerifyKind::kNull) return r;  // fio's verify=null: only pretends
  const uint32_t step = IntervalStep(format, len);
  const uint32_t header = VerifyHeaderBytes(kind);
  const uint32_t field = header - kSumAt;
  for (uint32_t at = 0; at < len; at += step) {
    const char* const p = buf + at;
    r.offset = offset + at;
    const uint32_t data = kind == VerifyKind::kPattern ? 0 : header;
    if (kind != VerifyKind::kPattern) {
      Header h;
      std::memcpy(&h, p, sizeof h);
      if (h.magic != kMagic) {
        r.ok = false;
        std::snprintf(r.why, sizeof r.why, "no verify header (bad magic)");
        return r;
      }
      if (h.offset != r.offset || h.file != file || h.len != step) {
        r.ok = false;
        std::snprintf(r.why, sizeof r.why, "header for offset %llu, len %u",
                      static_cast<unsigned long long>(h.offset), h.len);
        return r;
      }
      if (format.check_writer && h.seed != format.writer_seed) {
        r.ok = false;
        std::snprintf(r.why, sizeof r.why, "written by another writer (header seed %llu)",
                      static_cast<unsigned long long>(h.seed));
        return r;
      }
    }
    if (HasVerifyPattern(format) && (kind == VerifyKind::kMeta || kind == VerifyKind::kPattern)) {
      // As fio: the pattern after the header, at its place in the block.
      const PatternMismatch m =
          FindPatternMismatch(p + data, step - data, at + data, offset, *format.pattern);
      if (m.at != step - data) {
        r.ok = false;
        // The byte's place in the interval (fio counts from the end of its own header).
        std::snprintf(r.why, sizeof r.why,
                      "pattern: got 0x%02x, wanted 0x%02x at byte %u (%d bad bits)", m.got,
                      m.wanted, m.at + data, __builtin_popcount(m.got ^ m.wanted));
        return r;
      }
      continue;
    }
    uint8_t sum[kMaxSum];
    Sum(p, step, kind, field, sum);
    if (std::memcmp(sum, p + kSumAt, field) != 0) {
      r.ok = false;
      std::snprintf(r.why, sizeof r.why, "%s mismatch", VerifyKindName(kind));
      return r;
    }
  }
  return r;
}

bool CheckVerifiedBlock(const char* buf, uint32_t len, uint64_t offset, uint32_t file,
                        const VerifyFormat& format, char* why) {
  const VerifyCheck r = VerifyBlock(buf, len, offset, file, format);
  if (!r.ok) std::memcpy(why, r.why, sizeof r.why);
  return r.ok;
}

}  // namespace iotail::engine
