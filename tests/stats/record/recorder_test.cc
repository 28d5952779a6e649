// Recorder snapshot semantics. Run this file under ThreadSanitizer with
// scripts/tsan-engine-tests.sh (a build with -DIOTAIL_SANITIZE=thread).
#include "stats/record/recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <thread>

namespace iotail::stats {
namespace recorder_test {

uint64_t Sum(const std::vector<uint64_t>& v) {
  uint64_t s = 0;
  for (uint64_t x : v) s += x;
  return s;
}

TEST(RecorderTest, DeltasAreExactAndCumulativeAddsUp) {
  auto rec = std::make_unique<Recorder>();
  RecorderSampler sampler(*rec);
  RecorderSnapshot d;
  rec->RecordClat(Direction::kRead, 100, 4096);
  rec->RecordClat(Direction::kRead, 1000, 4096);
  rec->RecordClat(Direction::kWrite, 5000, 8192);
  sampler.Next(d);
  EXPECT_EQ(d.dirs[0].ios, 2u);
  EXPECT_EQ(d.dirs[0].bytes, 8192u);
  EXPECT_EQ(d.dirs[0].clat.hist[100], 1u);
  EXPECT_EQ(d.dirs[0].clat.hist[Fio3BucketIndex(1000)], 1u);
  EXPECT_EQ(d.dirs[1].ios, 1u);
  EXPECT_EQ(d.dirs[0].clat.min_ns, 100u);
  EXPECT_EQ(d.dirs[0].clat.max_ns, 1000u);
  sampler.Next(d);
  EXPECT_EQ(Sum(d.dirs[0].clat.hist), 0u);
  EXPECT_EQ(d.dirs[0].ios, 0u);
  rec->RecordClat(Direction::kRead, 100, 4096);
  rec->RecordError(EIO);
  rec->RecordError(EIO);
  sampler.Next(d);
  EXPECT_EQ(d.dirs[0].clat.hist[100], 1u);
  EXPECT_EQ(d.errors[EIO], 2u);
  EXPECT_EQ(sampler.cumulative().dirs[0].ios, 3u);
  EXPECT_EQ(sampler.cumulative().TotalErrors(), 2u);
}

// fio's file and directory operation engines: I/Os counted without a latency, operations timed
// without an I/O.
TEST(RecorderTest, UntimedIosAndOperationsCountApart) {
  Recorder rec;
  rec.RecordUntimed(Direction::kWrite, 4096);
  rec.RecordUntimed(Direction::kWrite, 4096);
  rec.RecordOperation(Direction::kWrite, 1500);
  const RecorderSnapshot s = rec.Snapshot();
  EXPECT_EQ(s.dirs[1].ios, 2u);
  EXPECT_EQ(s.dirs[1].bytes, 8192u);
  EXPECT_EQ(s.dirs[1].clat.n, 1u);
  EXPECT_EQ(s.dirs[1].clat.sum_ns, 1500u);
  EXPECT_EQ(Sum(s.dirs[1].clat.hist), 1u);
  EXPECT_EQ(s.dirs[1].lat.n, 0u);
  EXPECT_EQ(s.dirs[0].ios, 0u);
}

TEST(RecorderTest, InFlightIsALevelNotACount) {
  Recorder rec;
  RecorderSampler sampler(rec);
  RecorderSnapshot d;
  rec.SetInFlight(8);
  sampler.Next(d);
  EXPECT_EQ(d.in_flight, 8u);
  sampler.Next(d);  // nothing changed: still 8 in flight, not a difference of 0
  EXPECT_EQ(d.in_flight, 8u);
  rec.SetInFlight(2);
  sampler.Next(d);
  EXPECT_EQ(d.in_flight, 2u);
  RecorderSnapshot two_workers = d;
  two_workers.Add(d);  // the same instant on two workers: levels add
  EXPECT_EQ(two_workers.in_flight, 4u);
}

TEST(RecorderTest, ExactMeanAndStddev) {
  auto rec = std::make_unique<Recorder>();
  for (uint64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) rec->RecordClat(Direction::kRead, v * 1000, 1);
  const RecorderSnapshot s = rec->Snapshot();
  EXPECT_DOUBLE_EQ(s.dirs[0].clat.MeanNs(), 5000.0);
  // Sample stddev of {2,4,4,4,5,5,7,9} = sqrt(32/7).
  EXPECT_NEAR(s.dirs[0].clat.StddevNs(), 1000.0 * std::sqrt(32.0 / 7.0), 1e-6);
  EXPECT_EQ(s.dirs[0].clat.min_ns, 2000u);
  EXPECT_EQ(s.dirs[0].clat.max_ns, 9000u);
}

TEST(RecorderTest, LatenciesAboveFiosTopKeepTheirOwnBuckets) {
  auto rec = std::make_unique<Recorder>();
  rec->RecordClat(Direction::kRead, uint64_t{1} << 40, 1);  // 18 minutes: fio would clamp it
  rec->RecordClat(Direction::kRead, 18'000'000'000, 1);     // 18 s
  rec->RecordClat(Direction::kRead, UINT64_MAX, 1);
  const RecorderSnapshot s = rec->Snapshot();
  const auto& hist = s.dirs[0].clat.hist;
  ASSERT_EQ(hist.size(), kRecordBuckets);
  EXPECT_EQ(hist[kFio3Buckets - 1], 0u);
  EXPECT_EQ(hist[RecordBucketIndex(uint64_t{1} << 40)], 1u);
  EXPECT_EQ(hist[RecordBucketIndex(18'000'000'000)], 1u);
  EXPECT_EQ(hist[kRecordBuckets - 1], 1u);
  const HistogramLayout layout = HistogramLayout::Recorded();
  EXPECT_EQ(layout.LowerNs(RecordBucketIndex(uint64_t{1} << 40)), std::ldexp(1.0, 40));
}

TEST(RecorderTest, ConcurrentWriterNothingLostOrDoubleCounted) {
  auto rec = std::make_unique<Recorder>();
  constexpr uint64_t kN = 200000;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> snapshots{0};
  std::thread writer([&] {
    for (uint64_t i = 0; i < kN; ++i) {
      // Halfway, wait for the reader to have sampled twice, so that snapshots are taken
      // while the writer runs even on a loaded machine.
      if (i == kN / 2) {
        while (snapshots.load() < 2) std::this_thread::yield();
      }
      rec->RecordClat(i % 3 == 0 ? Direction::kWrite : Direction::kRead, (i * 7919) % 100000, 512);
    }
    done.store(true);
  });
  RecorderSampler sampler(*rec);
  RecorderSnapshot d;
  uint64_t hist_total = 0, ios_total = 0, intervals = 0;
  while (!done.load()) {
    sampler.Next(d);
    for (int dir = 0; dir < 2; ++dir) {
      hist_total += Sum(d.dirs[dir].clat.hist);
      ios_total += d.dirs[dir].ios;
    }
    ++intervals;
    snapshots.store(intervals);
  }
  writer.join();
  sampler.Next(d);
  for (int dir = 0; dir < 2; ++dir) {
    hist_total += Sum(d.dirs[dir].clat.hist);
    ios_total += d.dirs[dir].ios;
  }
  EXPECT_EQ(hist_total, kN);
  EXPECT_EQ(ios_total, kN);
  EXPECT_GT(intervals, 1u);
  EXPECT_EQ(sampler.cumulative().dirs[0].bytes + sampler.cumulative().dirs[1].bytes, kN * 512);
}

// The latency target's statistics reset: a snapshot taken at the reset (into reserved buckets, so
// without allocating) subtracted from the final totals leaves exactly what came after, with the
// min and max of that part alone; errors stay the whole run's.
TEST(RecorderTest, SubtractingTheResetSnapshotLeavesWhatCameAfter) {
  Recorder rec;
  rec.RecordClat(Direction::kRead, 50, 4096);
  rec.RecordLat(Direction::kRead, 70);
  rec.RecordClat(Direction::kRead, 9000, 4096);
  rec.RecordError(EIO);
  RecorderSnapshot base = rec.Snapshot();
  base.ReserveBuckets();
  rec.Snapshot(base);  // reuses the reserved buckets
  EXPECT_GE(base.dirs[0].clat.hist.capacity(), kRecordBuckets);
  EXPECT_GE(base.dirs[1].slat.hist.capacity(), kRecordBuckets);  // never recorded: kept reserved
  rec.RestartExtremes();
  rec.RecordClat(Direction::kRead, 300, 8192);
  rec.RecordClat(Direction::kRead, 400, 8192);
  rec.RecordLat(Direction::kRead, 500);
  RecorderSnapshot total = rec.Snapshot();
  total.SubtractCounts(base);
  const DirectionSnapshot& r = total.dirs[0];
  EXPECT_EQ(r.ios, 2u);
  EXPECT_EQ(r.bytes, 16384u);
  EXPECT_EQ(r.clat.n, 2u);
  EXPECT_EQ(r.clat.sum_ns, 700u);
  EXPECT_EQ(Sum(r.clat.hist), 2u);
  EXPECT_EQ(r.clat.min_ns, 300u);
  EXPECT_EQ(r.clat.max_ns, 400u);
  EXPECT_EQ(r.lat.n, 1u);
  EXPECT_EQ(r.lat.min_ns, 500u);
  EXPECT_DOUBLE_EQ(r.clat.StddevNs(), std::sqrt(5000.0));
  EXPECT_EQ(total.errors[EIO], 1u);
}

TEST(RecorderTest, LatenessIsAHistogramOfItsOwnSampledPerInterval) {
  Recorder rec;
  RecorderSampler sampler(rec);
  RecorderSnapshot delta;
  sampler.Next(delta);
  EXPECT_EQ(delta.schedule.lateness.n, 0u);
  EXPECT_TRUE(delta.schedule.lateness.hist.empty());
  rec.RecordLateness(1'000);
  rec.RecordLateness(250'000);  // late (over 100 us)
  sampler.Next(delta);
  EXPECT_EQ(delta.schedule.lateness.n, 2u);
  EXPECT_EQ(Sum(delta.schedule.lateness.hist), 2u);
  EXPECT_EQ(delta.schedule.issued, 2u);
  EXPECT_EQ(delta.schedule.late, 1u);
  rec.RecordLateness(5'000);
  sampler.Next(delta);
  EXPECT_EQ(delta.schedule.lateness.n, 1u);
  EXPECT_EQ(Sum(delta.schedule.lateness.hist), 1u);
  const RecorderSnapshot all = rec.Snapshot();
  EXPECT_EQ(all.schedule.lateness.n, 3u);
  EXPECT_EQ(all.schedule.lateness.max_ns, 250'000u);
  EXPECT_EQ(all.schedule.lateness.min_ns, 1'000u);
  // The clat of an ordinary run stays without lateness.
  EXPECT_EQ(all.dirs[0].clat.n, 0u);
}

// A replay's recorded latencies (the trace's own, blktrace's D to C) are a histogram per direction
// of their own, sampled per interval and added up across workers, apart from clat.
TEST(RecorderTest, RecordedLatenciesArePerDirectionAndSampledPerInterval) {
  Recorder rec;
  rec.RecordRecorded(Direction::kRead, 1);  // not kept: the recorder was not asked to
  EXPECT_EQ(rec.Snapshot().dirs[0].recorded.n, 0u);
  rec.KeepRecorded();
  RecorderSampler sampler(rec);
  RecorderSnapshot delta;
  sampler.Next(delta);
  EXPECT_EQ(delta.dirs[0].recorded.n, 0u);
  rec.RecordRecorded(Direction::kRead, 200'000);
  rec.RecordRecorded(Direction::kWrite, 2'000'000);
  rec.RecordRecorded(Direction::kWrite, 3'000'000);
  sampler.Next(delta);
  EXPECT_EQ(delta.dirs[0].recorded.n, 1u);
  EXPECT_EQ(delta.dirs[1].recorded.n, 2u);
  EXPECT_EQ(Sum(delta.dirs[1].recorded.hist), 2u);
  rec.RecordRecorded(Direction::kRead, 100'000);
  sampler.Next(delta);
  EXPECT_EQ(delta.dirs[0].recorded.n, 1u);
  EXPECT_EQ(Sum(delta.dirs[0].recorded.hist), 1u);
  EXPECT_EQ(Sum(delta.dirs[1].recorded.hist), 0u);
  RecorderSnapshot all = rec.Snapshot();
  all.Add(rec.Snapshot());
  EXPECT_EQ(all.dirs[1].recorded.n, 4u);
  EXPECT_EQ(all.dirs[0].recorded.min_ns, 100'000u);
  EXPECT_EQ(all.dirs[0].clat.n, 0u);
  EXPECT_EQ(all.dirs[0].ios, 0u);  // a recorded latency is no I/O done
}

}  // namespace recorder_test
}  // namespace iotail::stats
