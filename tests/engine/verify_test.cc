// Verified blocks (fio's verify=crc32c|md5): the checksums against their published test vectors,
// and a block that is corrupt, torn or misplaced caught with the reason.
#include "engine/verify.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace iotail::engine {
namespace {

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
}

TEST(VerifyTest, BlocksRoundTripAndCorruptionIsCaught) {
  for (VerifyKind kind : {VerifyKind::kCrc32c, VerifyKind::kMd5}) {
    SCOPED_TRACE(VerifyKindName(kind));
    for (uint32_t len : {48u, 512u, 4096u, 65536u}) {
      std::vector<char> block(len);
      FillVerifiedBlock(block.data(), len, 8192, 1, 42, kind);
      char why[64];
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

}  // namespace
}  // namespace iotail::engine
