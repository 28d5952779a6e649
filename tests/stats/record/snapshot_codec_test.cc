#include "stats/record/snapshot_codec.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace iotail::stats {
namespace snapshot_codec_test {

RecorderSnapshot Sample() {
  Recorder rec;
  rec.RecordClat(Direction::kRead, 1234, 4096);
  rec.RecordClat(Direction::kRead, 18'000'000'000, 4096);
  rec.RecordLat(Direction::kRead, 99'999);
  rec.RecordSlat(Direction::kWrite, 7);
  rec.RecordClat(Direction::kWrite, 5'000, 512);
  rec.RecordIssue(300'000, 100'000);
  rec.RecordError(5);
  rec.SetInFlight(3);
  return rec.Snapshot();
}

void ExpectSame(const LatencySnapshot& a, const LatencySnapshot& b) {
  EXPECT_EQ(a.hist, b.hist);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.min_ns, b.min_ns);
  EXPECT_EQ(a.max_ns, b.max_ns);
  EXPECT_EQ(a.sum_ns, b.sum_ns);
  EXPECT_EQ(a.sum_sq_ns, b.sum_sq_ns);  // bit for bit
}

TEST(SnapshotCodecTest, RoundTripIsExactAndSparse) {
  const RecorderSnapshot s = Sample();
  std::vector<uint64_t> words;
  Encode(s, words);
  EXPECT_LT(words.size(), 400u);  // sparse: a few buckets, not 3 x 3 x 3776
  size_t pos = 0;
  RecorderSnapshot back;
  Decode(words, pos, back);
  EXPECT_EQ(pos, words.size());
  for (int d = 0; d < kDirectionCount; ++d) {
    EXPECT_EQ(back.dirs[d].ios, s.dirs[d].ios);
    EXPECT_EQ(back.dirs[d].bytes, s.dirs[d].bytes);
    ExpectSame(back.dirs[d].clat, s.dirs[d].clat);
    ExpectSame(back.dirs[d].slat, s.dirs[d].slat);
    ExpectSame(back.dirs[d].lat, s.dirs[d].lat);
  }
  EXPECT_EQ(back.schedule.late, 1u);
  EXPECT_EQ(back.schedule.max_lag_ns, 300'000u);
  EXPECT_EQ(back.errors, s.errors);
  EXPECT_EQ(back.in_flight, 3u);

  CpuUsage cpu{1, 2, 3, 4, 5, 6}, cpu_back;
  IoDepthCounts depths, depths_back;
  depths.level[3] = 9;
  depths.complete[6] = 2;
  std::vector<uint64_t> more;
  Encode(cpu, more);
  Encode(depths, more);
  pos = 0;
  Decode(more, pos, cpu_back);
  Decode(more, pos, depths_back);
  EXPECT_EQ(cpu_back.minf, 6u);
  EXPECT_EQ(cpu_back.usr_ns, 1u);
  EXPECT_EQ(depths_back.level, depths.level);
  EXPECT_EQ(depths_back.complete, depths.complete);
}

// A replay's lateness and its trace's recorded latencies travel too (iotail-mpi's cluster summary
// and JSON report a replaying rank's lateness).
TEST(SnapshotCodecTest, ReplayLatenessAndRecordedLatenciesRoundTrip) {
  Recorder rec;
  rec.RecordClat(Direction::kRead, 50'000, 4096);
  rec.RecordLateness(12'345);
  rec.RecordLateness(250'000);
  rec.KeepRecorded();
  rec.RecordRecorded(Direction::kRead, 200'000);
  rec.RecordRecorded(Direction::kTrim, 3'000'000);
  const RecorderSnapshot s = rec.Snapshot();
  std::vector<uint64_t> words;
  Encode(s, words);
  size_t pos = 0;
  RecorderSnapshot back;
  Decode(words, pos, back);
  EXPECT_EQ(pos, words.size());
  ExpectSame(back.schedule.lateness, s.schedule.lateness);
  EXPECT_EQ(back.schedule.lateness.n, 2u);
  EXPECT_EQ(back.schedule.lateness.max_ns, 250'000u);
  for (int d = 0; d < kDirectionCount; ++d) ExpectSame(back.dirs[d].recorded, s.dirs[d].recorded);
  EXPECT_EQ(back.dirs[DirectionIndex(Direction::kRead)].recorded.n, 1u);
  EXPECT_EQ(back.dirs[DirectionIndex(Direction::kTrim)].recorded.max_ns, 3'000'000u);
}

TEST(SnapshotCodecTest, ShortOrDamagedInputThrows) {
  std::vector<uint64_t> words;
  Encode(Sample(), words);
  for (size_t cut : {size_t{0}, size_t{1}, words.size() / 2, words.size() - 1}) {
    std::vector<uint64_t> part(words.begin(), words.begin() + static_cast<ptrdiff_t>(cut));
    size_t pos = 0;
    RecorderSnapshot s;
    EXPECT_THROW(Decode(part, pos, s), std::runtime_error) << cut;
  }
  // A bucket index past the layout: the read direction's first clat pair.
  std::vector<uint64_t> bad = words;
  bad[2 + 6 + 1] = kRecordBuckets;
  size_t pos = 0;
  RecorderSnapshot s;
  EXPECT_THROW(Decode(bad, pos, s), std::runtime_error);
}

}  // namespace snapshot_codec_test
}  // namespace iotail::stats
