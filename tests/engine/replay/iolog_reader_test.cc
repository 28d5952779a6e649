#include "engine/replay/iolog_reader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/replay/open_trace.h"
#include "tests/test_util.h"

namespace iotail::engine::replay {
namespace iolog_reader_test {

// A ByteSource over a string, handing out at most `chunk` bytes per Read (so lines straddle
// reads).
class StringSource : public ByteSource {
 public:
  StringSource(std::string text, size_t chunk = 7) : text_(std::move(text)), chunk_(chunk) {}
  size_t Read(char* buf, size_t n) override {
    const size_t k = std::min({n, chunk_, text_.size() - at_});
    std::copy_n(text_.data() + at_, k, buf);
    at_ += k;
    return k;
  }
  const std::string& name() const override { return name_; }

 private:
  std::string text_;
  size_t chunk_;
  size_t at_ = 0;
  std::string name_ = "trace.log";
};

std::vector<TraceEvent> ReadAll(TraceReader& r) {
  std::vector<TraceEvent> all;
  TraceEvent ev[3];
  for (size_t n; (n = r.Next(ev, 3)) > 0;) all.insert(all.end(), ev, ev + n);
  return all;
}

std::string ErrorOf(const std::string& text) {
  try {
    IologReader r(std::make_unique<StringSource>(text));
    ReadAll(r);
  } catch (const TraceFormatError& e) {
    return e.what();
  }
  return "";
}

TEST(IologReaderTest, ReadsTheVersion3LogFio333Wrote) {
  auto r = OpenTrace(std::string(IOTAIL_TEST_DATA_DIR) + "/replay/fio-3.33-randrw.iolog");
  const std::vector<TraceEvent> all = ReadAll(*r);
  ASSERT_EQ(all.size(), 10u);  // open, 8 I/Os, close
  EXPECT_EQ(r->devices(), std::vector<std::string>{"/tmp/iotail-replay-golden"});
  EXPECT_EQ(all[0].op, TraceOp::kOpen);
  EXPECT_EQ(all[0].time_ns, 0u);  // from the first event
  EXPECT_EQ(all[1].op, TraceOp::kWrite);
  EXPECT_EQ(all[1].offset, 61440u);
  EXPECT_EQ(all[1].length, 4096u);
  EXPECT_EQ(all[1].time_ns, (209u - 201u) * 1000);  // microseconds in the log
  EXPECT_TRUE(all[1].timed);
  EXPECT_EQ(all[3].op, TraceOp::kRead);
  EXPECT_EQ(all[3].offset, 880640u);
  EXPECT_EQ(all[9].op, TraceOp::kClose);
  EXPECT_EQ(all[9].time_ns, (889u - 201u) * 1000);
  uint64_t reads = 0, writes = 0;
  for (const TraceEvent& e : all) {
    reads += e.op == TraceOp::kRead;
    writes += e.op == TraceOp::kWrite;
  }
  EXPECT_EQ(reads, 3u);
  EXPECT_EQ(writes, 5u);
}

TEST(IologReaderTest, Version2IsUntimedAndKeepsWaitsAsInstants) {
  IologReader r(std::make_unique<StringSource>(
      "fio version 2 iolog\n/dev/a add\n/dev/b add\n/dev/a open\n/dev/b write 8192 512\n"
      "/dev/a wait 1500 0\n/dev/a trim 0 4096\n/dev/b sync 0 0\n/dev/a datasync 0 0\n"
      "/dev/a read 4096 4096"));  // no newline at the end
  const std::vector<TraceEvent> all = ReadAll(r);
  ASSERT_EQ(all.size(), 7u);
  EXPECT_EQ(r.version(), 2);
  EXPECT_EQ(r.devices(), (std::vector<std::string>{"/dev/a", "/dev/b"}));
  EXPECT_EQ(all[1].op, TraceOp::kWrite);
  EXPECT_EQ(all[1].device, 1u);
  EXPECT_FALSE(all[1].timed);
  EXPECT_EQ(all[2].op, TraceOp::kWait);
  EXPECT_EQ(all[2].time_ns, 1'500'000'000u);  // fio: milliseconds since its start
  EXPECT_EQ(all[3].op, TraceOp::kTrim);
  EXPECT_EQ(all[4].op, TraceOp::kSync);
  EXPECT_EQ(all[5].op, TraceOp::kDatasync);
  EXPECT_EQ(all[6].op, TraceOp::kRead);
  EXPECT_EQ(all[6].offset, 4096u);
}

TEST(IologReaderTest, BackwardTimesAreHeldAtThePreviousOne) {
  IologReader r(std::make_unique<StringSource>(
      "fio version 3 iolog\n100 f add\n100 f read 0 512\n90 f read 512 512\n120 f read 0 512\n"));
  const std::vector<TraceEvent> all = ReadAll(r);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].time_ns, 0u);
  EXPECT_EQ(all[2].time_ns, 20'000u);
  EXPECT_EQ(r.backwards_times(), 1u);
}

TEST(IologReaderTest, DamagedLinesNameFileAndLine) {
  EXPECT_EQ(ErrorOf("fio version 1 iolog\n").substr(0, 12), "trace.log:1:");
  EXPECT_NE(ErrorOf("fio version 3 iolog\n1 f add\nx f read 0 1\n").find("trace.log:3: 'x' is not"),
            std::string::npos);
  EXPECT_NE(ErrorOf("fio version 3 iolog\n1 f add\n2 f wait 5 0\n").find("trace.log:3: 'wait'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("fio version 2 iolog\nf add\nf jump 0 1\n").find("trace.log:3: 'jump'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("fio version 2 iolog\nf read 0\n").find("trace.log:2: 3 fields"),
            std::string::npos);
  EXPECT_NE(ErrorOf("fio version 2 iolog\nf read 0 99999999999\n").find("trace.log:2:"),
            std::string::npos);
  EXPECT_NE(ErrorOf("fio version 2 iolog\nf read 0 1\n" + std::string(5000, 'a') + "\n")
                .find("trace.log:3: line longer than 4096"),
            std::string::npos);
  EXPECT_NE(ErrorOf("").find("trace.log:0: empty"), std::string::npos);
}

TEST(IologReaderTest, StreamsALongTraceInBoundedReads) {
  // 200,000 lines through 64 KiB reads: every one comes out, in order.
  std::string text = "fio version 3 iolog\n0 f add\n";
  for (int i = 0; i < 200'000; ++i)
    text += std::to_string(i * 10) + " f read " + std::to_string(i * 4096) + " 4096\n";
  IologReader r(std::make_unique<StringSource>(std::move(text), 1 << 20));
  TraceEvent ev[1000];
  uint64_t n = 0, last = 0;
  for (size_t k; (k = r.Next(ev, 1000)) > 0;) {
    for (size_t i = 0; i < k; ++i, ++n) {
      ASSERT_EQ(ev[i].offset, n * 4096);
      last = ev[i].time_ns;
    }
  }
  EXPECT_EQ(n, 200'000u);
  EXPECT_EQ(last, 199'999u * 10'000);
}

TEST(OpenTraceTest, TellsFormatsFromTheirFirstBytes) {
  EXPECT_EQ(DetectTraceFormat("fio version 3 iolog\n"), TraceFormat::kIolog);
  EXPECT_EQ(DetectTraceFormat("fio version 2 iolog\n"), TraceFormat::kIolog);
  EXPECT_EQ(DetectTraceFormat(std::string("\x1f\x8b\x08\x00", 4)), TraceFormat::kGzip);
  EXPECT_EQ(DetectTraceFormat(std::string("\x28\xb5\x2f\xfd", 4)), TraceFormat::kZstd);
  EXPECT_EQ(DetectTraceFormat(std::string("\x07\x74\x61\x65", 4)), TraceFormat::kBlktrace);
  EXPECT_EQ(DetectTraceFormat(std::string("\x65\x61\x74\x07", 4)), TraceFormat::kBlktrace);
  EXPECT_EQ(DetectTraceFormat(std::string("\x1f\x8b", 2)), TraceFormat::kGzip);
  EXPECT_EQ(DetectTraceFormat("timestamp,offset\n"), TraceFormat::kUnknown);
  try {
    OpenTraceFrom(std::make_unique<StringSource>("1,2,3\n"));
    FAIL() << "a CSV was taken for a trace";
  } catch (const TraceFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("trace.log: not a trace"), std::string::npos);
  }
}

TEST(OpenTraceTest, AMissingFileIsASystemErrorNamingIt) {
  try {
    OpenTrace("/nonexistent/iotail/trace.log");
    FAIL();
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/iotail/trace.log"), std::string::npos);
  }
}

}  // namespace iolog_reader_test
}  // namespace iotail::engine::replay
