// RequestJoiner (engine/explain/request_join.h): which block request is an I/O's, and the stages
// its latency splits into.
#include "engine/explain/request_join.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace iotail::engine {
namespace {

constexpr dev_t kDisk = 0x700001;

IoTrailRecord Io(uint64_t start, uint64_t done, uint64_t offset = 8192, uint32_t len = 4096) {
  IoTrailRecord io;
  io.start_ns = start;
  io.issued_ns = start + 100;
  io.done_ns = done;
  io.offset = offset;
  io.length = len;
  io.dir = stats::Direction::kRead;
  return io;
}

BlockRequestEvent Request(uint64_t alloc, uint64_t issue, uint64_t complete, uint64_t sector = 16,
                          uint32_t sectors = 8) {
  BlockRequestEvent r;
  r.dev = kDisk;
  r.sector = sector;
  r.nr_sector = sectors;
  r.op = BlockOp::kRead;
  r.alloc_ns = alloc;
  r.issue_ns = issue;
  r.complete_ns = complete;
  return r;
}

uint64_t Sum(const std::array<uint64_t, stats::kStageCount>& stages) {
  return std::accumulate(stages.begin(), stages.end(), uint64_t{0});
}

TEST(RequestJoinerTest, JoinsTheRequestAtItsSectorAndSplitsItsLatency) {
  RequestJoiner joiner;
  joiner.AddRequest(Request(1'100, 1'300, 5'300));
  const JoinResult r = joiner.Join(Io(1'000, 6'000), DevicePlace{kDisk, 16});
  ASSERT_EQ(r.outcome, JoinOutcome::kJoined);
  EXPECT_EQ(r.stages, (std::array<uint64_t, 5>{0, 100, 200, 4'000, 700}));
  EXPECT_EQ(joiner.pending(), 0u);
}

TEST(RequestJoinerTest, OpenLoopLagIsTheScheduleStage) {
  RequestJoiner joiner;
  joiner.AddRequest(Request(2'100, 2'200, 3'000));
  IoTrailRecord io = Io(2'000, 3'500);
  io.intended_ns = 500;
  const JoinResult r = joiner.Join(io, DevicePlace{kDisk, 16});
  ASSERT_EQ(r.outcome, JoinOutcome::kJoined);
  EXPECT_EQ(r.stages[0], 1'500u);
  EXPECT_EQ(Sum(r.stages), LatencyOf(io));
}

TEST(RequestJoinerTest, ARequestOutsideTheIosStampsIsNotItsOwn) {
  RequestJoiner joiner;
  joiner.AddRequest(Request(900, 1'300, 5'300));  // entered before iotail's submit stamp
  EXPECT_EQ(joiner.Join(Io(1'000, 6'000), DevicePlace{kDisk, 16}).outcome, JoinOutcome::kNotJoined);
  joiner.AddRequest(Request(1'100, 1'300, 6'100));  // completed after iotail saw it done
  EXPECT_EQ(joiner.Join(Io(1'000, 6'000), DevicePlace{kDisk, 16}).outcome, JoinOutcome::kNotJoined);
  EXPECT_EQ(joiner.pending(), 2u);  // neither taken
}

TEST(RequestJoinerTest, AnotherSectorDiskOrDirectionIsNotJoined) {
  RequestJoiner joiner;
  joiner.AddRequest(Request(1'100, 1'300, 5'300, 24));
  BlockRequestEvent write = Request(1'100, 1'300, 5'300);
  write.op = BlockOp::kWrite;
  joiner.AddRequest(write);
  EXPECT_EQ(joiner.Join(Io(1'000, 6'000), DevicePlace{kDisk, 16}).outcome, JoinOutcome::kNotJoined);
  EXPECT_EQ(joiner.Join(Io(1'000, 6'000), DevicePlace{kDisk + 1, 24}).outcome,
            JoinOutcome::kNotJoined);
}

TEST(RequestJoinerTest, TwoCandidatesAreNeverGuessedBetween) {
  RequestJoiner joiner;
  joiner.AddRequest(Request(1'100, 1'300, 5'300));
  joiner.AddRequest(Request(1'200, 1'400, 5'500));
  EXPECT_EQ(joiner.Join(Io(1'000, 6'000), DevicePlace{kDisk, 16}).outcome, JoinOutcome::kNotJoined);
}

TEST(RequestJoinerTest, ARequestOfAnotherLengthIsCountedAsSplitNotJoined) {
  RequestJoiner joiner;
  joiner.AddRequest(Request(1'100, 1'300, 5'300, 16, 4));  // half of the I/O
  const JoinResult r = joiner.Join(Io(1'000, 6'000), DevicePlace{kDisk, 16});
  EXPECT_EQ(r.outcome, JoinOutcome::kSplit);
  EXPECT_EQ(Sum(r.stages), 0u);
}

TEST(RequestJoinerTest, UnseenTimesAndClockDisorderKeepTheStagesSummingToTheLatency) {
  // No allocation time (plain tracepoints) and no insert: entered at issue; a completion stamped
  // after iotail's done (another CPU's clock) is clamped to it.
  BlockRequestEvent r = Request(0, 1'300, 6'050);
  const IoTrailRecord io = Io(1'000, 6'000);
  const auto stages = StagesOf(io, r);
  EXPECT_EQ(Sum(stages), LatencyOf(io));
  EXPECT_EQ(stages[2], 0u);               // queue: entered at issue
  EXPECT_EQ(stages[4], 0u);               // delivery: clamped
  EXPECT_EQ(stages[3], 6'000u - 1'300u);  // device up to the I/O's end
}

TEST(RequestJoinerTest, ExpireForgetsAndCountsRequestsNoIoTook) {
  RequestJoiner joiner;
  joiner.AddRequest(Request(100, 200, 300));
  joiner.AddRequest(Request(100, 200, 900, 64));
  EXPECT_EQ(joiner.Expire(500), 1u);
  EXPECT_EQ(joiner.pending(), 1u);
  EXPECT_EQ(joiner.Expire(UINT64_MAX), 1u);
  EXPECT_EQ(joiner.pending(), 0u);
}

TEST(IoTrailTest, TakesInOrderAndCountsWhatAFullRingCannotHold) {
  IoTrail trail(64);
  for (uint64_t i = 0; i < 70; ++i) trail.Push(Io(i, i + 1));
  EXPECT_EQ(trail.dropped(), 6u);
  std::vector<IoTrailRecord> out;
  auto take = [&](const IoTrailRecord& io) { out.push_back(io); };
  ASSERT_EQ(trail.Consume(trail.Mark(), take), 64u);
  for (uint64_t i = 0; i < 64; ++i) EXPECT_EQ(out[i].start_ns, i);
  EXPECT_TRUE(trail.Push(Io(7, 8)));
  out.clear();
  EXPECT_EQ(trail.Consume(trail.Mark(), take), 1u);
  EXPECT_EQ(out[0].start_ns, 7u);
}

// Thousands waiting at once, joined in another order than they came: the table grows, its runs
// of colliding places shift back as entries leave, and every request is found exactly once.
TEST(RequestJoinerTest, ManyRequestsWaitingJoinEachInAnyOrder) {
  RequestJoiner joiner;
  constexpr uint64_t kCount = 5000;
  std::vector<uint64_t> sectors(kCount);
  for (uint64_t i = 0; i < kCount; ++i) sectors[i] = (i * 2654435761u) % 1'000'003 * 8;
  for (uint64_t s : sectors) joiner.AddRequest(Request(1'100, 1'300, 5'300, s));
  EXPECT_EQ(joiner.pending(), kCount);
  std::vector<uint64_t> order = sectors;
  for (size_t i = 0; i < order.size(); ++i) std::swap(order[i], order[(i * 7919) % order.size()]);
  for (uint64_t s : order) {
    const JoinResult r = joiner.Join(Io(1'000, 6'000, s * 512), DevicePlace{kDisk, s});
    ASSERT_EQ(r.outcome, JoinOutcome::kJoined) << "sector " << s;
  }
  EXPECT_EQ(joiner.pending(), 0u);
  EXPECT_EQ(joiner.Join(Io(1'000, 6'000), DevicePlace{kDisk, sectors[0]}).outcome,
            JoinOutcome::kNotJoined);
}

// A steady stream, as in a run: each request joined soon after it came, while a few no I/O takes
// stay waiting through every entry's leaving (their runs shifted back each time); they are still
// found, and a request at a waiting one's place is then a second candidate, never guessed between.
TEST(RequestJoinerTest, AStreamOfJoinsKeepsTheRequestsWaiting) {
  RequestJoiner joiner;
  constexpr uint64_t kWaiting = 40, kStream = 20'000;
  for (uint64_t w = 0; w < kWaiting; ++w) joiner.AddRequest(Request(1'100, 1'300, 5'300, w * 8));
  for (uint64_t i = 0; i < kStream; ++i) {
    const uint64_t sector = (1'000 + i % 3'000) * 8;
    joiner.AddRequest(Request(1'100, 1'300, 5'300, sector));
    ASSERT_EQ(joiner.Join(Io(1'000, 6'000, sector * 512), DevicePlace{kDisk, sector}).outcome,
              JoinOutcome::kJoined)
        << "request " << i;
    ASSERT_EQ(joiner.pending(), kWaiting);
  }
  joiner.AddRequest(Request(1'100, 1'300, 5'300, 0));
  EXPECT_EQ(joiner.Join(Io(1'000, 6'000, 0), DevicePlace{kDisk, 0}).outcome,
            JoinOutcome::kNotJoined);
  for (uint64_t w = 1; w < kWaiting; ++w) {
    EXPECT_EQ(joiner.Join(Io(1'000, 6'000, w * 8 * 512), DevicePlace{kDisk, w * 8}).outcome,
              JoinOutcome::kJoined)
        << "waiting request " << w;
  }
  EXPECT_EQ(joiner.pending(), 2u);
  EXPECT_EQ(joiner.Expire(UINT64_MAX), 2u);
  EXPECT_EQ(joiner.pending(), 0u);
}

TEST(IoTrailTest, ConsumeVisitsUpToTheMarkInPlaceAndFreesTheRoom) {
  IoTrail trail(64);
  for (uint64_t i = 0; i < 10; ++i) trail.Push(Io(i, i + 1));
  const uint64_t mark = trail.Mark();
  trail.Push(Io(10, 11));  // after the mark: left for the next round
  std::vector<uint64_t> seen;
  EXPECT_EQ(trail.Consume(mark, [&](const IoTrailRecord& io) { seen.push_back(io.start_ns); }),
            10u);
  EXPECT_EQ(seen, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  seen.clear();
  EXPECT_EQ(
      trail.Consume(trail.Mark(), [&](const IoTrailRecord& io) { seen.push_back(io.start_ns); }),
      1u);
  EXPECT_EQ(seen, (std::vector<uint64_t>{10}));
  for (uint64_t i = 0; i < 64; ++i) EXPECT_TRUE(trail.Push(Io(i, i + 1)));  // all room is free
}

}  // namespace
}  // namespace iotail::engine
