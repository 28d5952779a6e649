// iotail-mpi's merge of the ranks' intervals (mpi/cluster_reducer.h), without MPI: intervals of one
// period from every rank add up (as `iotail merge` would place them), a rank that is behind holds
// the others, the last period's finals are summed, and a rank that is done holds nobody up; the
// intervals' and a rank's totals' encodings (with --explain's stages) round trip.
#include "mpi/cluster_reducer.h"

#include <gtest/gtest.h>

#include <vector>

#include "mpi/rank_messages.h"

namespace iotail::mpi {
namespace cluster_reducer_test {

ClusterInterval Interval(uint64_t time_ms, uint64_t ios, bool final = false) {
  ClusterInterval i;
  i.time_ms = time_ms;
  i.start_ns = (time_ms - 500) * 1'000'000;
  i.end_ns = time_ms * 1'000'000;
  i.final = final;
  i.planned_bytes = 0;
  i.jobs.resize(1);
  i.jobs[0].dirs[0].ios = ios;
  i.jobs[0].dirs[0].clat.n = ios;
  i.jobs[0].dirs[0].clat.hist.assign(stats::kRecordBuckets, 0);
  i.jobs[0].dirs[0].clat.hist[100] = ios;
  i.entry_counts.assign(kEntryWords, 0);
  i.entry_counts[0] = ios;  // one entry, its reads
  return i;
}

TEST(ClusterReducerTest, SumsEachTimeOnceEveryRankHasIt) {
  std::vector<ClusterInterval> out;
  ClusterReducer reducer(3, 1, 500, [&](const ClusterInterval& i) { out.push_back(i); });
  reducer.Add(0, Interval(500, 1));
  reducer.Add(1, Interval(500, 10));
  EXPECT_TRUE(out.empty());  // rank 2 has not reported 500 yet
  reducer.Add(0, Interval(1000, 2));
  reducer.Add(2, Interval(500, 100));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].time_ms, 500u);
  EXPECT_EQ(out[0].jobs[0].dirs[0].ios, 111u);
  EXPECT_EQ(out[0].jobs[0].dirs[0].clat.hist[100], 111u);
  EXPECT_EQ(out[0].entry_counts[0], 111u);  // each entry's counts add up too
  // Rank 1's clock closed its last boundary late: its final ends at 998, in the period ending at
  // 1000, where `iotail merge` puts that record too. The others have 1000, then their finals.
  reducer.Add(1, Interval(998, 20, true));
  reducer.Add(2, Interval(1000, 200));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].time_ms, 1000u);
  EXPECT_EQ(out[1].jobs[0].dirs[0].ios, 222u);
  EXPECT_FALSE(out[1].final);
  reducer.Add(0, Interval(1003, 3, true));
  EXPECT_EQ(out.size(), 2u);  // rank 2 may still have something before 1003
  reducer.Add(2, Interval(1001, 300, true));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[2].final);
  EXPECT_EQ(out[2].time_ms, 1003u);  // the latest final of the period
  EXPECT_EQ(out[2].jobs[0].dirs[0].ios, 303u);
  EXPECT_TRUE(reducer.Complete());
  uint64_t total = 0;
  for (const auto& i : out) total += i.jobs[0].dirs[0].ios;
  EXPECT_EQ(total, 1u + 10 + 100 + 2 + 20 + 200 + 3 + 300);  // nothing lost, nothing twice
}

// A run of two batches (a stonewall) closes an interval clock, and sends a final, per batch: the
// first batch's final is a partial interval like any other, and the cluster ends with the second.
// Each batch's times count from its own start; the cluster's time line places the second batch
// from the first boundary after the first batch's end.
TEST(ClusterReducerTest, EachBatchEndsWithAFinalAndOnlyTheLastEndsTheCluster) {
  std::vector<ClusterInterval> out;
  ClusterReducer reducer(
      2, 1, 500, [&](const ClusterInterval& i) { out.push_back(i); }, 2);
  reducer.Add(0, Interval(500, 1));
  reducer.Add(1, Interval(500, 10));
  reducer.Add(0, Interval(700, 2, true));  // batch 1 ends
  reducer.Add(0, Interval(500, 3));        // rank 0's batch 2 already: it waits for rank 1's end
  EXPECT_EQ(out.size(), 1u);
  reducer.Add(1, Interval(702, 20, true));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[1].final);
  EXPECT_FALSE(reducer.Complete());
  EXPECT_EQ(out[1].time_ms, 702u);
  EXPECT_EQ(out[1].jobs[0].dirs[0].ios, 22u);
  reducer.Add(1, Interval(500, 30));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].time_ms, 1500u);  // 500 into batch 2, which starts at 1000
  EXPECT_EQ(out[2].jobs[0].dirs[0].ios, 33u);
  reducer.Add(0, Interval(600, 4, true));
  reducer.Add(1, Interval(601, 40, true));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[3].final);
  EXPECT_EQ(out[3].time_ms, 1601u);
  EXPECT_EQ(out[3].jobs[0].dirs[0].ios, 44u);
  EXPECT_TRUE(reducer.Complete());
}

TEST(ClusterReducerTest, ADoneRankHoldsNobodyUp) {
  std::vector<ClusterInterval> out;
  ClusterReducer reducer(2, 1, 500, [&](const ClusterInterval& i) { out.push_back(i); });
  reducer.Add(0, Interval(500, 1));
  EXPECT_TRUE(out.empty());
  reducer.RankDone(1);
  ASSERT_EQ(out.size(), 1u);
  reducer.Add(0, Interval(600, 1, true));
  EXPECT_TRUE(reducer.Complete());
  EXPECT_THROW(ClusterReducer(1, 2, 500, [](const ClusterInterval&) {}).Add(0, Interval(1, 1)),
               std::runtime_error);  // wrong job count
}

TEST(ClusterReducerTest, EncodingRoundTrips) {
  ClusterInterval i = Interval(1500, 42, true);
  i.planned_bytes = 77;
  i.entry_counts.assign(2 * kEntryWords, 0);
  i.entry_counts[kEntryWords + 3] = 8192;  // entry 1, write bytes
  i.logged_bytes = {5, 6, 7};
  const auto words = EncodeInterval(i);
  const ClusterInterval back = DecodeInterval(words);
  EXPECT_EQ(back.time_ms, 1500u);
  EXPECT_TRUE(back.final);
  EXPECT_EQ(back.planned_bytes, 77u);
  EXPECT_EQ(back.jobs[0].dirs[0].clat.hist[100], 42u);
  EXPECT_EQ(back.entry_counts, i.entry_counts);
  EXPECT_EQ(back.logged_bytes, i.logged_bytes);
  std::vector<uint64_t> longer = words;
  longer.push_back(0);
  EXPECT_THROW(DecodeInterval(longer), std::runtime_error);
}

// The bytes the ranks' logs account for: each worker's I/Os times its own rounded mean, as its
// log's bs column carries it, and as `iotail merge` counts them; summed over the ranks by the
// reducer.
TEST(ClusterReducerTest, LoggedBytesAreEachWorkersRoundedMeanTimesItsIos) {
  Mailbox mailbox;
  ForwardSink sink(mailbox, 1);
  const size_t job_of[] = {0, 0}, entry_of[] = {0, 1};
  sink.SetWorkers(job_of, entry_of, 2);
  std::vector<stats::RecorderSnapshot> deltas(2);
  deltas[0].dirs[0].ios = 3;
  deltas[0].dirs[0].bytes = 3 * 4096 + 65536;  // mean 25941.33: logged as 25941
  deltas[1].dirs[0].ios = 2;
  deltas[1].dirs[0].bytes = 4096 + 65536;  // mean 34816
  sink.OnInterval({1000, 0, 1, false, 0}, deltas);
  const auto messages = mailbox.TakeAll();
  ASSERT_EQ(messages.size(), 1u);
  ClusterInterval i = DecodeInterval(messages[0].words);
  EXPECT_EQ(i.logged_bytes[0], 3u * 25941 + 2u * 34816);
  EXPECT_EQ(i.jobs[0].dirs[0].bytes, 3u * 4096 + 65536 + 4096 + 65536);  // the summary's: exact
  std::vector<ClusterInterval> out;
  ClusterReducer reducer(2, 1, 1000, [&](const ClusterInterval& c) { out.push_back(c); });
  i.final = true;
  reducer.Add(0, i);
  reducer.Add(1, i);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].logged_bytes[0], 2 * (3u * 25941 + 2u * 34816));
}

// A rank's totals carry each job's --explain stages exactly (or none), and the run's unjoined
// counts.
TEST(ClusterReducerTest, TotalsCarryTheExplainStages) {
  stats::RunSummary summary;
  summary.jobs.resize(2);
  stats::ExplainTotals e;
  stats::AddSample(e.dirs[1].stages[3], 123'456);
  stats::AddSample(e.dirs[1].stages[3], 7'000);
  e.dirs[1].joined = 2;
  e.dirs[1].not_joined = 1;
  e.dirs[1].split = 1;
  e.dirs[1].latency_sum_ns = 140'000;
  e.records_dropped = 4;
  summary.jobs[1].explain = e;
  summary.explain.requests_unmatched = 9;
  const RankTotals t = DecodeTotals(EncodeTotals(summary));
  ASSERT_EQ(t.explain.size(), 2u);
  EXPECT_FALSE(t.explain[0]);
  ASSERT_TRUE(t.explain[1]);
  const stats::ExplainDirection& w = t.explain[1]->dirs[1];
  EXPECT_EQ(w.stages[3].hist, e.dirs[1].stages[3].hist);
  EXPECT_EQ(w.stages[3].min_ns, 7'000u);
  EXPECT_EQ(w.stages[3].sum_sq_ns, e.dirs[1].stages[3].sum_sq_ns);
  EXPECT_TRUE(w.stages[0].hist.empty());
  EXPECT_EQ(w.joined, 2u);
  EXPECT_EQ(w.not_joined, 1u);
  EXPECT_EQ(w.split, 1u);
  EXPECT_EQ(w.latency_sum_ns, 140'000u);
  EXPECT_EQ(t.explain[1]->records_dropped, 4u);
  EXPECT_EQ(t.requests_unmatched, 9u);
}

}  // namespace cluster_reducer_test
}  // namespace iotail::mpi
