// Verified blocks (fio's verify kinds iotail computes): the checksums against their published test
// vectors, and a block that is corrupt, torn or misplaced caught with the reason; meta and null.
#include "engine/verify.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stats/core/errors.h"

namespace iotail::engine {
namespace verify_test {

std::string Hex(const uint8_t* d, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    static const char* k = "0123456789abcdef";
    out += k[d[i] >> 4];
    out += k[d[i] & 15];
  }
  return out;
}

TEST(VerifyTest, ChecksumsMatchTheirTestVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);  // RFC 3720's check value
  uint8_t d[16];
  Md5("", 0, d);
  EXPECT_EQ(Hex(d, 16), "d41d8cd98f00b204e9800998ecf8427e");
  Md5("abc", 3, d);
  EXPECT_EQ(Hex(d, 16), "900150983cd24fb0d6963f7d28e17f72");
  const std::string long_text =
      "12345678901234567890123456789012345678901234567890123456789012345678901234567890";
  Md5(long_text.data(), long_text.size(), d);  // RFC 1321's last test: two blocks plus padding
  EXPECT_EQ(Hex(d, 16), "57edf4a22be3c955ac49da2e2107b67a");
  // The catalogue's check values (CRC-64/XZ, CRC-32/ISO-HDLC, CRC-16/ARC, CRC-7/MMC) and XXH32's.
  EXPECT_EQ(Crc64("123456789", 9), 0x995DC9BBDF1939FAull);
  EXPECT_EQ(Crc32("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(Crc16("123456789", 9), 0xBB3Du);
  EXPECT_EQ(Crc7("123456789", 9), 0x75u);
  EXPECT_EQ(Xxh32("", 0), 0x02CC5D05u);
  EXPECT_EQ(Xxh32("abc", 3), 0x32D153FFu);
  const std::string text = "Nobody inspects the spammish repetition";  // 39 bytes: all paths
  EXPECT_EQ(Xxh32(text.data(), text.size()), 0xE2293B2Fu);
}

TEST(VerifyTest, BlocksRoundTripAndCorruptionIsCaught) {
  for (VerifyKind kind :
       {VerifyKind::kCrc32c, VerifyKind::kMd5, VerifyKind::kCrc64, VerifyKind::kCrc32,
        VerifyKind::kCrc16, VerifyKind::kCrc7, VerifyKind::kXxhash}) {
    SCOPED_TRACE(VerifyKindName(kind));
    for (uint32_t len : {48u, 512u, 4096u, 65536u}) {
      std::vector<char> block(len);
      FillVerifiedBlock(block.data(), len, 8192, 1, 42, kind);
      char why[80];
      EXPECT_TRUE(CheckVerifiedBlock(block.data(), len, 8192, 1, kind, why)) << why;
      // Misplaced: another offset or file.
      EXPECT_FALSE(CheckVerifiedBlock(block.data(), len, 4096, 1, kind, why));
      EXPECT_FALSE(CheckVerifiedBlock(block.data(), len, 8192, 0, kind, why));
      // One flipped bit anywhere after the header, or in the header's seed.
      block[len - 1] ^= 1;
      EXPECT_FALSE(CheckVerifiedBlock(block.data(), len, 8192, 1, kind, why));
      EXPECT_NE(std::string(why).find("mismatch"), std::string::npos) << why;
      block[len - 1] ^= 1;
      block[24] ^= 0x10;
      EXPECT_FALSE(CheckVerifiedBlock(block.data(), len, 8192, 1, kind, why));
      // Not a verified block at all.
      std::memset(block.data(), 0, len);
      EXPECT_FALSE(CheckVerifiedBlock(block.data(), len, 8192, 1, kind, why));
      EXPECT_NE(std::string(why).find("magic"), std::string::npos);
    }
  }
}

// fio's verify=meta checks the header (where the block belongs) but not the data; verify=null only
// pretends.
TEST(VerifyTest, MetaChecksTheHeaderAloneAndNullNothing) {
  std::vector<char> block(4096);
  char why[80];
  FillVerifiedBlock(block.data(), 4096, 8192, 1, 42, VerifyKind::kMeta);
  block[4000] ^= 1;
  EXPECT_TRUE(CheckVerifiedBlock(block.data(), 4096, 8192, 1, VerifyKind::kMeta, why)) << why;
  EXPECT_FALSE(CheckVerifiedBlock(block.data(), 4096, 4096, 1, VerifyKind::kMeta, why));
  std::memset(block.data(), 0, block.size());
  EXPECT_TRUE(CheckVerifiedBlock(block.data(), 4096, 8192, 1, VerifyKind::kNull, why));
  EXPECT_EQ(ParseVerifyKind("crc32c-intel"), VerifyKind::kCrc32c);
  EXPECT_EQ(ParseVerifyKind("xxhash"), VerifyKind::kXxhash);
  EXPECT_THROW(ParseVerifyKind("sha224"), stats::UsageError);  // not one of fio's
}

TEST(VerifyTest, TheStoredChecksumIsThatOfTheBlockWithItsFieldZeroed) {
  // The header's last 16 bytes hold the checksum (documented layout: 48 bytes, checksum last).
  constexpr size_t kField = kVerifyHeaderBytes - 16;
  for (uint32_t len : {48u, 100u, 4096u}) {
    std::vector<char> block(len);
    FillVerifiedBlock(block.data(), len, 0, 0, 7, VerifyKind::kMd5);
    std::vector<char> zeroed = block;
    std::memset(zeroed.data() + kField, 0, 16);
    uint8_t expected[16];
    Md5(zeroed.data(), zeroed.size(), expected);
    EXPECT_EQ(std::memcmp(block.data() + kField, expected, 16), 0) << len;
    FillVerifiedBlock(block.data(), len, 0, 0, 7, VerifyKind::kCrc32c);
    zeroed = block;
    std::memset(zeroed.data() + kField, 0, 16);
    const uint32_t crc = Crc32c(zeroed.data(), zeroed.size());
    EXPECT_EQ(std::memcmp(block.data() + kField, &crc, 4), 0) << len;
  }
}

// fio's SHA kinds, through GNU Nettle: FIPS 180/202's "abc" digests (as Python's hashlib gives
// them), each header's size, and blocks written and checked as the other kinds'.
TEST(VerifyShaTest, DigestsHeadersAndBlocks) {
  struct Sha {
    const char* name;
    uint32_t header;
    const char* abc;
  };
  const Sha kShas[] = {
      {"sha1", 56, "a9993e364706816aba3e25717850c26c9cd0d89d"},
      {"sha256", 64, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"sha512", 96,
       "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3f"
       "e"
       "ebbd454d4423643ce80e2a9ac94fa54ca49f"},
      {"sha3-224", 64, "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf"},
      {"sha3-256", 64, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"},
      {"sha3-384", 80,
       "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf2283"
       "7"
       "6d25"},
      {"sha3-512", 96,
       "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e"
       "3"
       "934057340b4cf408d5a56592f8274eec53f0"},
  };
  for (const Sha& sha : kShas) {
    SCOPED_TRACE(sha.name);
    const VerifyKind kind = ParseVerifyKind(sha.name);  // loads it
    EXPECT_STREQ(VerifyKindName(kind), sha.name);
    const size_t digest = std::string(sha.abc).size() / 2;
    uint8_t d[64];
    ShaDigest(kind, "abc", 3, d);
    EXPECT_EQ(Hex(d, digest), sha.abc);
    ASSERT_EQ(VerifyHeaderBytes(kind), sha.header);
    for (uint32_t len : {sha.header, 512u, 65536u}) {
      std::vector<char> block(len);
      FillVerifiedBlock(block.data(), len, 8192, 1, 42, kind);
      char why[80];
      EXPECT_TRUE(CheckVerifiedBlock(block.data(), len, 8192, 1, kind, why)) << why;
      // The stored digest is that of the block with its field (from byte 32) zeroed.
      std::vector<char> zeroed = block;
      std::memset(zeroed.data() + 32, 0, sha.header - 32);
      ShaDigest(kind, zeroed.data(), zeroed.size(), d);
      EXPECT_EQ(std::memcmp(block.data() + 32, d, digest), 0) << len;
      block[len - 1] ^= 1;
      EXPECT_FALSE(CheckVerifiedBlock(block.data(), len, 8192, 1, kind, why));
      EXPECT_EQ(std::string(why), std::string(sha.name) + " mismatch");
    }
  }
}

std::string PatternHex(const VerifyPattern& p) { return Hex(p.bytes.data(), p.size); }

// fio 3.33's lib/pattern.c examples, as that syntax reads them.
TEST(VerifyPatternTest, ParsesFiosSyntax) {
  EXPECT_EQ(PatternHex(ParseVerifyPattern("\"abcd\"")), "61626364");
  EXPECT_EQ(PatternHex(ParseVerifyPattern("-1024")), "00fcffff");
  EXPECT_EQ(PatternHex(ParseVerifyPattern("66")), "42");
  EXPECT_EQ(PatternHex(ParseVerifyPattern("0")), "00");
  EXPECT_EQ(PatternHex(ParseVerifyPattern("0xFF0X1")), "ff01");
  EXPECT_EQ(PatternHex(ParseVerifyPattern("0xfff")), "0fff");  // an odd digit stands alone
  EXPECT_EQ(PatternHex(ParseVerifyPattern("0xaa555aa5")), "aa555aa5");
  EXPECT_EQ(PatternHex(ParseVerifyPattern("\"123\"0xFFeeCC")), "313233ffeecc");
  const VerifyPattern mixed = ParseVerifyPattern("-100xab\"1\"%o\"2\"");
  EXPECT_EQ(PatternHex(mixed), "f6ffffffab31000000000000000032");
  ASSERT_EQ(mixed.offsets, 1u);
  EXPECT_EQ(mixed.offset_at[0], 6u);
  const VerifyPattern two = ParseVerifyPattern("%o0xdeadbeef%o");
  EXPECT_EQ(two.size, 20u);
  EXPECT_EQ(two.offsets, 2u);
  EXPECT_EQ(two.offset_at[1], 12u);
  EXPECT_EQ(ParseVerifyPattern(std::string(2 + 2 * 512, 'f').replace(0, 2, "0x")).size, 512u);
  for (const char* bad :
       {"", "zz", "\"open", "\"\"", "%d", "0x", "4294967296", "'/nonexistent/iotail'"}) {
    EXPECT_THROW(ParseVerifyPattern(bad), stats::UsageError) << bad;
  }
  EXPECT_THROW(ParseVerifyPattern(std::string(2 + 2 * 513, 'f').replace(0, 2, "0x")),
               stats::UsageError);
}

// The pattern over a block from its first byte, the offset pasted little-endian at %o; with a
// header kind, a header at each verify interval over it; a changed pattern byte is found at its
// interval's offset.
TEST(VerifyPatternTest, BlocksCarryThePatternAndIntervalsOfHeaders) {
  const VerifyPattern p = ParseVerifyPattern("0xaa%o");
  std::vector<char> block(4096);
  VerifyFormat pattern_only(VerifyKind::kPattern);
  pattern_only.pattern = &p;
  FillVerifiedBlock(block.data(), 4096, 0x10203, 0, 7, pattern_only);
  for (size_t at = 0; at + 9 <= 4096; at += 9) {
    EXPECT_EQ(static_cast<uint8_t>(block[at]), 0xaa);
    EXPECT_EQ(Hex(reinterpret_cast<const uint8_t*>(block.data()) + at + 1, 8), "0302010000000000");
  }
  EXPECT_TRUE(VerifyBlock(block.data(), 4096, 0x10203, 0, pattern_only).ok);
  EXPECT_FALSE(VerifyBlock(block.data(), 4096, 0x10204, 0, pattern_only).ok);  // %o differs
  block[1000] ^= 0x0f;
  VerifyCheck bad = VerifyBlock(block.data(), 4096, 0x10203, 0, pattern_only);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.offset, 0x10203u);
  EXPECT_NE(std::string(bad.why).find("at byte 1000 (4 bad bits)"), std::string::npos) << bad.why;

  VerifyFormat meta(VerifyKind::kMeta);
  meta.pattern = &p;
  meta.interval = 512;
  FillVerifiedBlock(block.data(), 4096, 65536, 0, 7, meta);
  EXPECT_TRUE(VerifyBlock(block.data(), 4096, 65536, 0, meta).ok);
  // Past each header the bytes are the pattern at its place in the block.
  std::vector<char> plain(4096);
  FillPattern(plain.data(), 4096, 65536, p);
  for (uint32_t at = 0; at < 4096; at += 512) {
    EXPECT_EQ(std::memcmp(block.data() + at + kVerifyHeaderBytes,
                          plain.data() + at + kVerifyHeaderBytes, 512 - kVerifyHeaderBytes),
              0);
  }
  block[3 * 512 + 100] ^= 1;
  bad = VerifyBlock(block.data(), 4096, 65536, 0, meta);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.offset, 65536u + 3 * 512);
  EXPECT_NE(std::string(bad.why).find("pattern:"), std::string::npos) << bad.why;
  // A checksum kind over pattern data checks its sum, per interval.
  VerifyFormat crc(VerifyKind::kCrc32c);
  crc.pattern = &p;
  crc.interval = 1024;
  FillVerifiedBlock(block.data(), 4096, 8192, 0, 7, crc);
  EXPECT_TRUE(VerifyBlock(block.data(), 4096, 8192, 0, crc).ok);
  block[2 * 1024 + 600] ^= 1;
  bad = VerifyBlock(block.data(), 4096, 8192, 0, crc);
  EXPECT_EQ(bad.offset, 8192u + 2048);
  EXPECT_NE(std::string(bad.why).find("crc32c mismatch"), std::string::npos) << bad.why;
}

}  // namespace verify_test
}  // namespace iotail::engine
