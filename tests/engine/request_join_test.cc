// Joining an I/O to its block request (engine/explain/request_join.h) through the request table
// (engine/explain/request_table.h) as the BPF programs fill it: which request is an I/O's, the
// stages its latency splits into, and the table's own rules (a half-written or another place's
// entry is never read as this one's).
#include "engine/explain/request_join.h"

#include <gtest/gtest.h>
#include <sys/sysmacros.h>

#include <numeric>
#include <vector>

namespace iotail::engine {
namespace request_join_test {

const dev_t kDisk = makedev(7, 1);
const uint32_t kKernelDisk = (7u << 20) | 1u;

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

// A request table in memory, written as the BPF programs write theirs (trace_common.bpf.h:
// publish_request), without the rival check (tests set the flag themselves).
class FakeTable {
 public:
  explicit FakeTable(uint32_t entries = 1024) : entries_(entries) {}
  RequestTable table() {
    return RequestTable(entries_.data(), static_cast<uint32_t>(entries_.size() - 1));
  }
  iotail_request_entry& Publish(uint64_t entered, uint64_t issue, uint64_t complete,
                                uint64_t sector = 16, uint32_t sectors = 8,
                                uint8_t op = IOTAIL_OP_READ, uint8_t flags = 0) {
    iotail_request_entry& e = entries_[iotail_request_index(
        kKernelDisk, sector, static_cast<uint32_t>(entries_.size() - 1))];
    e.seq += 2;
    e.taken = 0;
    e.dev = kKernelDisk;
    e.sector = sector;
    e.nr_sector = sectors;
    e.entered_ns = entered;
    e.issue_ns = issue;
    e.complete_ns = complete;
    e.op = op;
    e.flags = flags;
    return e;
  }

 private:
  std::vector<iotail_request_entry> entries_;
};

// A worker on the whole disk kDisk (its offsets are the disk's).
TrailJoin JoinOn(FakeTable& fake) {
  std::vector<std::optional<FilePlace>> files;
  files.push_back(FilePlace{kDisk, 0, nullptr});
  return TrailJoin(fake.table(), std::move(files));
}

uint64_t Sum(const std::array<uint64_t, stats::kStageCount>& stages) {
  return std::accumulate(stages.begin(), stages.end(), uint64_t{0});
}

TEST(RequestJoinTest, JoinsTheRequestAtItsSectorAndSplitsItsLatency) {
  FakeTable fake;
  fake.Publish(1'100, 1'300, 5'300);
  IoTrailRecord io = Io(1'000, 6'000);
  JoinOn(fake).Join(io);
  ASSERT_EQ(io.join, JoinOutcome::kJoined);
  EXPECT_EQ(StagesOf(io), (std::array<uint64_t, 5>{0, 100, 200, 4'000, 700}));
  EXPECT_EQ(fake.table().Untaken(), 0u) << "taken by the join";
}

TEST(RequestJoinTest, OpenLoopLagIsTheScheduleStage) {
  FakeTable fake;
  fake.Publish(2'100, 2'200, 3'000);
  IoTrailRecord io = Io(2'000, 3'500);
  io.intended_ns = 500;
  JoinOn(fake).Join(io);
  ASSERT_EQ(io.join, JoinOutcome::kJoined);
  EXPECT_EQ(StagesOf(io)[0], 1'500u);
  EXPECT_EQ(Sum(StagesOf(io)), LatencyOf(io));
}

TEST(RequestJoinTest, ARequestOutsideTheIosStampsIsNotItsOwn) {
  FakeTable fake;
  fake.Publish(900, 1'300, 5'300);  // entered before iotail's submit stamp
  IoTrailRecord io = Io(1'000, 6'000);
  JoinOn(fake).Join(io);
  EXPECT_EQ(io.join, JoinOutcome::kNotJoined);
  fake.Publish(1'100, 1'300, 6'100);  // completed after iotail saw it done
  io = Io(1'000, 6'000);
  JoinOn(fake).Join(io);
  EXPECT_EQ(io.join, JoinOutcome::kNotJoined);
}

TEST(RequestJoinTest, AnotherSectorDiskOrDirectionIsNotJoined) {
  FakeTable fake;
  fake.Publish(1'100, 1'300, 5'300, 24);
  IoTrailRecord io = Io(1'000, 6'000);  // sector 16: nothing there
  JoinOn(fake).Join(io);
  EXPECT_EQ(io.join, JoinOutcome::kNotJoined);
  EXPECT_FALSE(fake.table().Find(makedev(7, 2), 24).has_value()) << "another disk";
  fake.Publish(1'100, 1'300, 5'300, 16, 8, IOTAIL_OP_WRITE);
  io = Io(1'000, 6'000);
  JoinOn(fake).Join(io);
  EXPECT_EQ(io.join, JoinOutcome::kNotJoined) << "a write is no read's";
  io = Io(1'000, 6'000, 99 * 4096);
  io.file = 1;  // a file with no place
  JoinOn(fake).Join(io);
  EXPECT_EQ(io.join, JoinOutcome::kNotJoined);
}

TEST(RequestJoinTest, ARivalRequestIsNeverGuessedBetween) {
  FakeTable fake;
  fake.Publish(1'200, 1'400, 5'500, 16, 8, IOTAIL_OP_READ, IOTAIL_BLOCK_AMBIGUOUS);
  IoTrailRecord io = Io(1'000, 6'000);
  JoinOn(fake).Join(io);
  EXPECT_EQ(io.join, JoinOutcome::kNotJoined);
}

TEST(RequestJoinTest, ARequestOfAnotherLengthOrPartIsCountedAsSplitNotJoined) {
  FakeTable fake;
  fake.Publish(1'100, 1'300, 5'300, 16, 4);  // half of the I/O
  IoTrailRecord io = Io(1'000, 6'000);
  JoinOn(fake).Join(io);
  EXPECT_EQ(io.join, JoinOutcome::kSplit);
  fake.Publish(1'100, 1'300, 5'300, 16, 8, IOTAIL_OP_READ, IOTAIL_BLOCK_PARTIAL);
  io = Io(1'000, 6'000);
  JoinOn(fake).Join(io);
  EXPECT_EQ(io.join, JoinOutcome::kSplit);
}

TEST(RequestJoinTest, UnseenTimesAndClockDisorderKeepTheStagesSummingToTheLatency) {
  // No allocation time and no insert: entered at issue; a completion stamped after iotail's done
  // (another CPU's clock) is clamped to it.
  IoTrailRecord io = Io(1'000, 6'000);
  io.entered_ns = 1'300;
  io.request_issue_ns = 1'300;
  io.complete_ns = 6'050;
  const auto stages = StagesOf(io);
  EXPECT_EQ(Sum(stages), LatencyOf(io));
  EXPECT_EQ(stages[2], 0u);               // queue: entered at issue
  EXPECT_EQ(stages[4], 0u);               // delivery: clamped
  EXPECT_EQ(stages[3], 6'000u - 1'300u);  // device up to the I/O's end
}

// An entry being written (odd seq) is not read; one whose seq moved while it was read is not
// either (here: the same state, seen through the rule).
TEST(RequestTableTest, AnEntryBeingWrittenIsNotRead) {
  FakeTable fake;
  iotail_request_entry& e = fake.Publish(1'100, 1'300, 5'300);
  ASSERT_TRUE(fake.table().Find(kDisk, 16).has_value());
  e.seq += 1;  // a program is writing it
  EXPECT_FALSE(fake.table().Find(kDisk, 16).has_value());
  e.seq += 1;
  const auto request = fake.table().Find(kDisk, 16);
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->entered_ns, 1'100u);
  EXPECT_EQ(request->issue_ns, 1'300u);
  EXPECT_EQ(request->complete_ns, 5'300u);
  EXPECT_EQ(request->dev, kDisk);
}

TEST(RequestTableTest, FindLeavesAnEntryUntakenAndTakeMarksIt) {
  FakeTable fake(64);
  for (uint64_t i = 0; i < 10; ++i) fake.Publish(1, 2, 3, i * 8);
  const uint64_t held = fake.table().Untaken();
  EXPECT_GE(held, 8u);  // ten places, some may share an entry of 64
  EXPECT_LE(held, 10u);
  EXPECT_TRUE(fake.table().Find(kDisk, 72).has_value());
  EXPECT_EQ(fake.table().Untaken(), held);
  EXPECT_TRUE(fake.table().Take(kDisk, 72).has_value());
  EXPECT_EQ(fake.table().Untaken(), held - 1);
  EXPECT_FALSE(RequestTable().Find(kDisk, 72).has_value()) << "an empty view finds nothing";
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

}  // namespace request_join_test
}  // namespace iotail::engine
