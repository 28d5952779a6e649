#include "engine/interval_clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "engine/clock.h"

namespace iotail::engine {
namespace interval_clock_test {

TEST(IntervalClockTest, BoundariesAreEpochMultiplesStrictlyAfterNow) {
  EXPECT_EQ(NextBoundaryNs(0, 1000), 1'000'000'000u);
  EXPECT_EQ(NextBoundaryNs(999'999'999, 1000), 1'000'000'000u);
  EXPECT_EQ(NextBoundaryNs(1'000'000'000, 1000), 2'000'000'000u);
  const uint64_t now = 1'700'000'000'123'456'789ull;
  const uint64_t b = NextBoundaryNs(now, 250);
  EXPECT_EQ(b % 250'000'000u, 0u);
  EXPECT_GT(b, now);
  EXPECT_LE(b - now, 250'000'000u);
}

TEST(IntervalClockTest, LogTimesRelativeOrEpoch) {
  // Relative times count from the period boundary at or before the start (1 s here, 500 ms).
  EXPECT_EQ(LogTimeMs(2'000'000'000, 1'500'000'000, 1000, false), 1000u);
  EXPECT_EQ(LogTimeMs(2'000'000'000, 1'500'000'000, 500, false), 500u);
  EXPECT_EQ(LogTimeMs(2'000'400'000, 1'500'000'000, 500, false), 500u);
  EXPECT_EQ(LogTimeMs(2'000'600'000, 1'500'000'000, 500, false), 501u);
  EXPECT_EQ(LogTimeMs(2'500'000'000, 1'234'567'890, 250, false), 1500u);
  EXPECT_EQ(LogTimeMs(2'000'000'000, 1'500'000'000, 1000, true), 2000u);
  EXPECT_EQ(LogTimeMs(1, 5, 1000, false), 0u);
}

// A sink that counts what it is given, per log time.
class CountingSink final : public stats::IntervalSink {
 public:
  void OnInterval(const IntervalInfo& info,
                  std::span<const stats::RecorderSnapshot> deltas) override {
    EXPECT_EQ(closes, 0) << "an interval after Close()";
    EXPECT_EQ(deltas.size(), workers);
    EXPECT_LT(info.start_ns, info.end_ns);
    EXPECT_EQ(info.start_ns, last_end_ns) << "intervals are contiguous";
    last_end_ns = info.end_ns;
    finals += info.final ? 1 : 0;
    ++calls[info.time_ms];
    for (const auto& d : deltas) ios += d.dirs[0].ios;
    closed_end_ns.store(info.end_ns);
  }
  void Close() override { ++closes; }

  std::map<uint64_t, int> calls;  // time -> calls
  uint64_t ios = 0;
  uint64_t last_end_ns = 0;
  int finals = 0;
  int closes = 0;
  size_t workers = 3;
  std::atomic<uint64_t> closed_end_ns{0};  // the last interval's end, readable by other threads
};

TEST(IntervalClockTest, SharedTimestampsAndNothingLost) {
  Clock::Init();
  std::vector<std::unique_ptr<stats::Recorder>> recs;
  for (int i = 0; i < 3; ++i) recs.push_back(std::make_unique<stats::Recorder>());
  std::vector<const stats::Recorder*> ptrs;
  for (auto& r : recs) ptrs.push_back(r.get());
  CountingSink first, second;
  IntervalClockOptions opt;
  opt.period_ms = 20;
  opt.unix_epoch = true;
  opt.start_realtime_ns = Clock::RealtimeNs();
  first.last_end_ns = second.last_end_ns = opt.start_realtime_ns;
  IntervalClock clock(ptrs, {&first, &second}, opt);
  clock.Start();
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  std::atomic<uint64_t> written{0};
  for (auto& r : recs) {
    writers.emplace_back([&, rec = r.get()] {
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        rec->RecordClat(stats::Direction::kRead, 1000 + n % 5000, 4096);
        ++n;
      }
      written += n;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(130));
  stop = true;
  for (auto& w : writers) w.join();
  clock.Finish(Clock::RealtimeNs());
  for (const CountingSink* sink : {&first, &second}) {
    EXPECT_EQ(sink->ios, written.load());
    EXPECT_EQ(sink->finals, 1);
    EXPECT_EQ(sink->closes, 1);
    EXPECT_GE(sink->calls.size(), 5u);
    size_t i = 0;
    for (const auto& [t, n] : sink->calls) {
      EXPECT_EQ(n, 1);  // one call per instant, covering all workers
      if (++i < sink->calls.size()) {
        EXPECT_EQ(t % 20, 0u) << t;  // all but the final partial one
      }
    }
  }
  EXPECT_EQ(first.calls, second.calls);
  uint64_t totals = 0;
  for (const auto& s : clock.Totals()) totals += s.dirs[0].ios;
  EXPECT_EQ(totals, written.load());
}

TEST(IntervalClockTest, FinalIntervalRightAfterABoundaryGetsItsOwnTime) {
  // Deterministic form of a race that made ~2% of runs write two lines with one time: the run
  // ends a fraction of a millisecond after the last boundary the clock closed.
  Clock::Init();
  stats::Recorder rec;
  CountingSink sink;
  sink.workers = 1;
  IntervalClockOptions opt;
  opt.period_ms = 200;
  opt.unix_epoch = true;
  opt.start_realtime_ns = Clock::RealtimeNs();
  sink.last_end_ns = opt.start_realtime_ns;
  IntervalClock clock({&rec}, {&sink}, opt);
  clock.Start();
  while (sink.closed_end_ns.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  clock.Finish(sink.closed_end_ns.load() + 100'000);  // 0.1 ms after the boundary
  ASSERT_EQ(sink.calls.size(), 2u);
  for (const auto& [t, n] : sink.calls) EXPECT_EQ(n, 1) << "time " << t;
  EXPECT_EQ(sink.calls.rbegin()->first, sink.calls.begin()->first + 1);
  EXPECT_EQ(sink.finals, 1);
}

TEST(IntervalClockTest, ARunEndingJustAfterAnUnclosedBoundaryEndsWithThatBoundarysClose) {
  // The clock thread wakes late (a loaded machine) and the run ends 1 ms after the boundary it
  // had not closed yet: the final interval is that boundary's close, stamped with it, not one of
  // a period and a millisecond stamped past it (which merges would split or place differently).
  Clock::Init();
  stats::Recorder rec;
  rec.RecordClat(stats::Direction::kRead, 1000, 4096);
  CountingSink sink;
  sink.workers = 1;
  IntervalClockOptions opt;
  opt.period_ms = 500;
  opt.unix_epoch = true;
  opt.start_realtime_ns = 1'795'408'932'000'000'000;  // a boundary: the first interval is full
  sink.last_end_ns = opt.start_realtime_ns;
  IntervalClock clock({&rec}, {&sink}, opt);  // not started: no boundary is closed
  clock.Finish(opt.start_realtime_ns + 501'000'000);
  ASSERT_EQ(sink.calls.size(), 1u);
  EXPECT_EQ(sink.calls.begin()->first, 1'795'408'932'500u);
  EXPECT_EQ(sink.last_end_ns, opt.start_realtime_ns + 501'000'000) << "rates over its length";
  EXPECT_EQ(sink.ios, 1u);

  // Ending later than a quarter period after it, the interval keeps its own end time.
  stats::Recorder rec2;
  CountingSink late;
  late.workers = 1;
  late.last_end_ns = opt.start_realtime_ns;
  IntervalClock clock2({&rec2}, {&late}, opt);
  clock2.Finish(opt.start_realtime_ns + 640'000'000);
  ASSERT_EQ(late.calls.size(), 1u);
  EXPECT_EQ(late.calls.begin()->first, 1'795'408'932'640u);
}

}  // namespace interval_clock_test
}  // namespace iotail::engine
