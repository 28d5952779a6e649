// Tests of LargeBuffer: zero-filled anonymous memory, writable, moved without a copy.
#include "stats/util/large_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace iotail::stats {
namespace large_buffer_test {

TEST(LargeBufferTest, StartsZeroIsWritableAndMoves) {
  constexpr size_t kDoubles = size_t{3} << 20;  // 24 MiB: huge pages where the kernel gives them
  LargeBuffer buffer(kDoubles);
  ASSERT_NE(buffer.get(), nullptr);
  EXPECT_EQ(buffer.size(), kDoubles);
  for (size_t i = 0; i < kDoubles; i += 4096) EXPECT_EQ(buffer.get()[i], 0.0) << i;
  buffer.get()[kDoubles - 1] = 2.5;
  double* data = buffer.get();
  LargeBuffer moved(std::move(buffer));
  EXPECT_EQ(buffer.get(), nullptr);
  EXPECT_EQ(moved.get(), data);
  EXPECT_EQ(moved.get()[kDoubles - 1], 2.5);
  LargeBuffer assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.get(), data);
  EXPECT_EQ(LargeBuffer(0).get(), nullptr);
}

TEST(LargeBufferTest, BytesFromSixtyFourKibAreWholeHugePages) {
  // A read buffer: rounded up to whole 2 MiB pages from 64 KiB on (one fault instead of 16 or
  // more), to whole 4 KiB pages below; writable to its last byte either way.
  for (const auto& [asked, got] : {std::pair<size_t, size_t>{4096, 4096},
                                   {5000, 8192},
                                   {size_t{64} << 10, size_t{2} << 20},
                                   {(size_t{2} << 20) + 1, size_t{4} << 20}}) {
    LargeBuffer buffer = LargeBuffer::Bytes(asked);
    ASSERT_NE(buffer.bytes(), nullptr) << asked;
    EXPECT_EQ(buffer.size_bytes(), got) << asked;
    buffer.bytes()[got - 1] = 'x';
    EXPECT_EQ(buffer.bytes()[0], 0) << asked;
    if (got >= (size_t{2} << 20)) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.bytes()) % (size_t{2} << 20), 0u) << asked;
    }
  }
}

}  // namespace large_buffer_test
}  // namespace iotail::stats
