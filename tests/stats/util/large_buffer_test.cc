// Tests of LargeBuffer: zero-filled anonymous memory, writable, moved without a copy.
#include "stats/util/large_buffer.h"

#include <gtest/gtest.h>

#include <utility>

namespace iotail::stats {
namespace {

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

}  // namespace
}  // namespace iotail::stats
