#include "engine/replay/replay_feed.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/replay/iolog_reader.h"
#include "engine/replay/iolog_writer.h"
#include "engine/replay/open_trace.h"
#include "tests/test_util.h"

namespace iotail::engine::replay {
namespace replay_feed_test {

namespace fs = std::filesystem;

class ReplayFeedTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = iotail::testing::MakeScratchDir("iotail_replay_feed"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
};

TEST_F(ReplayFeedTest, AppliesScaleAlignSkipAndTimeScaleAsFio) {
  ReplaySpec spec;
  spec.read_iolog = Write("t.log",
                          "fio version 3 iolog\n10 a add\n10 b add\n10 a read 40960 4096\n"
                          "30 b write 8192 512\n50 a trim 100000 4096\n70 b read 12288 4096\n");
  spec.scale = 2;
  spec.align = 8192;
  spec.skip = kSkipWrite;
  spec.time_scale = 200;  // twice as fast
  ReplayFeed feed(OpenTrace(spec.read_iolog), spec, 2, spec.read_iolog);
  const TraceEvent* e = feed.Peek();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->offset, 16384u);  // 40960 / 2 = 20480, down to 16384
  EXPECT_EQ(e->time_ns, 0u);
  feed.Pop();
  e = feed.Peek();  // the write is skipped
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->op, TraceOp::kTrim);
  EXPECT_EQ(e->offset, 49152u);    // 50000 down to a multiple of 8192
  EXPECT_EQ(e->time_ns, 20'000u);  // 40 us at twice the speed
  feed.Pop();
  e = feed.Peek();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->device, 1u);
  EXPECT_EQ(e->time_ns, 30'000u);
  feed.Pop();
  EXPECT_EQ(feed.Peek(), nullptr);
  EXPECT_TRUE(feed.ended());

  const TraceSummary s = ScanTrace(spec);
  EXPECT_EQ(s.ios, 3u);  // the write skipped
  EXPECT_EQ(s.reads, 2u);
  EXPECT_EQ(s.trims, 1u);
  EXPECT_EQ(s.span_ns, 30'000u);
  EXPECT_EQ(s.devices, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.max_end, 49152u + 4096);
}

TEST_F(ReplayFeedTest, NoStallDropsTimesAndWaitsAndRedirectSendsAllToOneTarget) {
  ReplaySpec spec;
  spec.read_iolog = Write("t.log",
                          "fio version 2 iolog\na add\nb add\na wait 100 0\n"
                          "b read 0 4096\n");
  spec.no_stall = true;
  spec.redirect = "/dev/null";
  ReplayFeed feed(OpenTrace(spec.read_iolog), spec, 1, spec.read_iolog);
  const TraceEvent* e = feed.Peek();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->op, TraceOp::kRead);
  EXPECT_EQ(e->device, 0u);
  EXPECT_FALSE(feed.Timed(*e));
}

TEST_F(ReplayFeedTest, ATraceFileWithoutATargetIsAnError) {
  ReplaySpec spec;
  spec.read_iolog = Write("t.log", "fio version 2 iolog\na add\nb add\nb read 0 4096\n");
  ReplayFeed feed(OpenTrace(spec.read_iolog), spec, 1, spec.read_iolog);
  EXPECT_THROW(feed.Peek(), TraceFormatError);
}

// A clone's trace of a read_iolog list: its files go to their places among the job's targets
// (every trace's files), and a file the plan did not map is an error, not a wrong target.
TEST_F(ReplayFeedTest, DeviceFilesPutATracesFilesAmongTheJobsTargets) {
  ReplaySpec spec;
  spec.read_iolog = Write("t.log",
                          "fio version 2 iolog\nb add\nc add\nc read 0 4096\n"
                          "b write 4096 4096\n");
  ReplayFeed feed(OpenTrace(spec.read_iolog), spec, 3, spec.read_iolog, {1, 2});
  const TraceEvent* e = feed.Peek();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->device, 2u);  // c: the job's third target
  feed.Pop();
  e = feed.Peek();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->device, 1u);  // b
  spec.read_iolog = Write("u.log", "fio version 2 iolog\nb add\nd add\nd read 0 4096\n");
  ReplayFeed unmapped(OpenTrace(spec.read_iolog), spec, 3, spec.read_iolog, {1});
  EXPECT_THROW(unmapped.Peek(), TraceFormatError);
}

// fio 3.33's assignment of a list's traces to the clones (measured: fio numbers the clones after
// the first from the last).
TEST(ReplaySpecTest, ClonesTakeTheTracesOfTheListAsFio) {
  ReplaySpec spec;
  spec.read_iolog = "a:b:c";
  spec.traces = {"a", "b", "c"};
  std::string order;
  for (uint32_t w = 0; w < 5; ++w) order += spec.TraceOf(w, 5);
  EXPECT_EQ(order, "abacb");
  order.clear();
  for (uint32_t w = 0; w < 3; ++w) order += spec.TraceOf(w, 3);
  EXPECT_EQ(order, "acb");
  ReplaySpec one;
  one.read_iolog = "x";
  EXPECT_EQ(one.TraceOf(3, 4), "x");
  EXPECT_TRUE(one.DeviceFilesOf(3, 4).empty());
}

TEST_F(ReplayFeedTest, StreamsMoreEventsThanItsRingHolds) {
  std::string text = "fio version 3 iolog\n0 a add\n";
  const int n = 3 * ReplayFeed::kRing + 17;
  for (int i = 0; i < n; ++i) text += std::to_string(i) + " a read " + std::to_string(i) + " 1\n";
  ReplaySpec spec;
  spec.read_iolog = Write("t.log", text);
  ReplayFeed feed(OpenTrace(spec.read_iolog), spec, 1, spec.read_iolog);
  int got = 0;
  for (const TraceEvent* e; (e = feed.Peek()) != nullptr; feed.Pop(), ++got) {
    ASSERT_EQ(e->offset, static_cast<uint64_t>(got));
    if (got % 100 == 0) feed.TopUp();
  }
  EXPECT_EQ(got, n);
}

TEST_F(ReplayFeedTest, IologWriterWritesWhatTheReaderReadsBack) {
  const std::string path = (dir_ / "w.log").string();
  {
    IologWriter w(path, {"/x/f0", "/x/f1"});
    w.Opened(0);
    for (uint32_t i = 0; i < 3 * IologWriter::kRing; ++i) {  // more than the ring holds
      w.Log(i * 1000, i % 2, i % 3 == 0 ? TraceOp::kWrite : TraceOp::kRead, i * 4096u, 4096);
    }
    w.Close(0);
  }
  IologReader r(std::make_unique<FileByteSource>(path));
  EXPECT_EQ(r.version(), 3);
  std::vector<TraceEvent> ev(1024);
  uint64_t ios = 0, opens = 0, closes = 0;
  for (size_t k; (k = r.Next(ev.data(), ev.size())) > 0;) {
    for (size_t i = 0; i < k; ++i) {
      if (ev[i].op == TraceOp::kOpen) ++opens;
      if (ev[i].op == TraceOp::kClose) ++closes;
      if (ev[i].op == TraceOp::kRead || ev[i].op == TraceOp::kWrite) {
        EXPECT_EQ(ev[i].offset, ios * 4096);
        EXPECT_EQ(ev[i].device, ios % 2);
        ++ios;
      }
    }
  }
  EXPECT_EQ(ios, 3 * IologWriter::kRing);
  EXPECT_EQ(opens, 2u);
  EXPECT_EQ(closes, 2u);
  EXPECT_EQ(r.devices(), (std::vector<std::string>{"/x/f0", "/x/f1"}));
}

}  // namespace replay_feed_test
}  // namespace iotail::engine::replay
