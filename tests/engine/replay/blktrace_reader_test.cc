// BlktraceReader on dumps built byte by byte: fio's I/Os from the queue events in both byte
// orders, fio's clock, the dispatch-to-complete time matched to merged bios and flushes, the
// window that bounds the matching, and damaged dumps refused at the record's byte offset.
#include "engine/replay/blktrace_reader.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/engine/replay/blktrace_dump.h"
#include "tests/engine/replay/replay_counts.h"

namespace iotail::engine::replay {
namespace blktrace_reader_test {

using iotail::testing::Act;
using iotail::testing::BtRecord;
using iotail::testing::ByteOrder;
using iotail::testing::Dev;
using iotail::testing::EncodeAll;
using iotail::testing::kComplete;
using iotail::testing::kIssue;
using iotail::testing::kQueue;
using iotail::testing::MemorySource;
namespace tc = iotail::testing;

std::vector<TraceEvent> ReadAll(TraceReader& reader, size_t batch = 3) {
  return iotail::testing::AllEvents(reader, batch);
}

std::unique_ptr<TraceReader> Reader(const std::string& bytes, size_t window = 16384) {
  return MakeBlktraceReader(std::make_unique<MemorySource>(bytes), window);
}

// The message of the TraceFormatError reading `bytes` throws ("" if none).
std::string ReadError(const std::string& bytes) {
  try {
    auto reader = Reader(bytes);
    ReadAll(*reader);
  } catch (const TraceFormatError& e) {
    return e.what();
  }
  return "";
}

constexpr uint32_t kWrite = tc::kTcWrite | tc::kTcSync | tc::kTcQueue;
constexpr uint32_t kRead = tc::kTcRead | tc::kTcQueue;

// A write, a read, a discard and a flush on 8,16 (each queued, dispatched and completed), a
// process notification with its payload, a zero-length read, and a read on 8,32 without D or C.
std::vector<BtRecord> Workload() {
  return {
      tc::Rec(1000, Act(kQueue, kWrite), 100, 4096),
      tc::Rec(1100, Act(tc::kGetRq, kWrite), 100, 4096),
      tc::Rec(1200, Act(kIssue, tc::kTcWrite), 100, 4096),
      tc::Rec(5000, Act(kQueue, kRead), 200, 8192),
      tc::WithPdu(tc::Rec(5100, tc::kNotifyProcess), std::string("fio\0", 4)),
      tc::Rec(5200, Act(kIssue, tc::kTcRead), 200, 8192),
      tc::Rec(9200, Act(kComplete, tc::kTcWrite), 100, 4096),
      tc::Rec(9300, Act(kComplete, tc::kTcRead), 200, 8192),
      tc::Rec(10000, Act(kQueue, tc::kTcDiscard | tc::kTcWrite), 300, 65536),
      tc::Rec(11000, Act(kQueue, tc::kTcFlush | tc::kTcWrite | tc::kTcSync)),
      tc::Rec(11500, Act(kIssue, tc::kTcFlush)),
      tc::Rec(12000, Act(kQueue, kRead), 400, 0),
      tc::Rec(13000, Act(kQueue, kRead), 8, 512, Dev(8, 32)),
      tc::Rec(14500, Act(kComplete, tc::kTcFlush)),
      tc::Rec(15000, Act(kIssue, tc::kTcDiscard | tc::kTcWrite), 300, 65536),
      tc::Rec(16000, Act(kComplete, tc::kTcDiscard | tc::kTcWrite), 300, 65536),
  };
}

void ExpectWorkload(TraceReader& reader) {
  const std::vector<TraceEvent> events = ReadAll(reader);
  ASSERT_EQ(events.size(), 5u);
  const struct {
    TraceOp op;
    uint64_t time, offset;
    uint32_t length, device;
    uint64_t recorded;
  } want[] = {
      {TraceOp::kWrite, 0, 100 * 512, 4096, 0, 9200 - 1200},
      {TraceOp::kRead, 4000, 200 * 512, 8192, 0, 9300 - 5200},
      {TraceOp::kTrim, 9000, 300 * 512, 65536, 0, 16000 - 15000},
      {TraceOp::kSync, 10000, 0, 0, 0, 14500 - 11500},
      // the zero-length read at 12000 is dropped but moves the clock
      {TraceOp::kRead, 12000, 8 * 512, 512, 1, 0},
  };
  for (size_t i = 0; i < events.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(events[i].op, want[i].op);
    EXPECT_EQ(events[i].time_ns, want[i].time);
    EXPECT_EQ(events[i].offset, want[i].offset);
    EXPECT_EQ(events[i].length, want[i].length);
    EXPECT_EQ(events[i].device, want[i].device);
    EXPECT_EQ(events[i].recorded_ns, want[i].recorded);
    EXPECT_TRUE(events[i].timed);
  }
  EXPECT_EQ(reader.devices(), (std::vector<std::string>{"8,16", "8,32"}));
  // 16 records, 5 I/Os: the other 11 (G, D, C, the notification, the zero-length read).
  EXPECT_EQ(reader.skipped(), 11u);
  const BlktraceCounts counts = CountsOf(reader);
  EXPECT_EQ(counts.records, 16u);
  EXPECT_EQ(counts.matched, 4u);
  EXPECT_EQ(counts.unmatched, 1u);
}

TEST(BlktraceReaderTest, QueueEventsAreFiosIos) {
  ExpectWorkload(*Reader(EncodeAll(Workload(), ByteOrder::kLittle)));
}

TEST(BlktraceReaderTest, BigEndianDumpReadsTheSame) {
  ExpectWorkload(*Reader(EncodeAll(Workload(), ByteOrder::kBig)));
}

TEST(BlktraceReaderTest, ClockFollowsFioAndNeverGoesBack) {
  // fio waits the time since the previous Q, 0 when it went back.
  const auto q = [](uint64_t time) { return tc::Rec(time, Act(kQueue, kRead), 8, 4096); };
  auto reader =
      Reader(EncodeAll(std::vector{q(5000), q(3000), q(4000), q(9000)}, ByteOrder::kLittle));
  std::vector<uint64_t> times;
  for (const TraceEvent& e : ReadAll(*reader)) times.push_back(e.time_ns);
  EXPECT_EQ(times, (std::vector<uint64_t>{0, 0, 1000, 6000}));
}

TEST(BlktraceReaderTest, MergedBiosShareTheirRequestsTime) {
  // Two 4 KiB writes back-merged into one 8 KiB request at sector 100, then a write at sector 100
  // again (a later request at the same place) and a read in flight at the same sector.
  const std::vector<BtRecord> records = {
      tc::Rec(0, Act(kQueue, kWrite), 100, 4096),
      tc::Rec(10, Act(kQueue, kWrite), 108, 4096),
      tc::Rec(11, Act(tc::kBackMerge, kWrite), 108, 4096),
      tc::Rec(20, Act(kIssue, tc::kTcWrite), 100, 8192),
      tc::Rec(30, Act(kQueue, kRead), 100, 4096),
      tc::Rec(40, Act(kIssue, tc::kTcRead), 100, 4096),
      tc::Rec(500, Act(kComplete, tc::kTcRead), 100, 4096),
      // the flush machinery's completion of an empty bio at sector 100: not the write's
      tc::Rec(600, Act(kComplete, tc::kTcWrite), 100, 0),
      tc::Rec(1020, Act(kComplete, tc::kTcWrite), 100, 8192),
      tc::Rec(2000, Act(kQueue, kWrite), 100, 4096),
      tc::Rec(2100, Act(kIssue, tc::kTcWrite), 100, 4096),
      tc::Rec(2400, Act(kComplete, tc::kTcWrite), 100, 4096),
  };
  const auto events = ReadAll(*Reader(EncodeAll(records, ByteOrder::kLittle)));
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].recorded_ns, 1000u);
  EXPECT_EQ(events[1].recorded_ns, 1000u);
  EXPECT_EQ(events[1].offset, 108u * 512);
  EXPECT_EQ(events[2].op, TraceOp::kRead);
  EXPECT_EQ(events[2].recorded_ns, 460u);
  EXPECT_EQ(events[3].recorded_ns, 300u);
}

TEST(BlktraceReaderTest, WindowBoundsTheMatching) {
  // Q0..Q9 queued; then D and C for Q9, then for Q0. With a window of 4, Q0 is given out (without
  // its time) once Q4 is read; with 16, it waits for its C. Q9 is matched either way.
  std::vector<BtRecord> records;
  for (uint64_t i = 0; i < 10; ++i) {
    records.push_back(tc::Rec(i * 100, Act(kQueue, kRead), i * 8, 4096));
  }
  for (uint64_t s : {72, 0}) {
    records.push_back(tc::Rec(2000 + s, Act(kIssue, tc::kTcRead), s, 4096));
    records.push_back(tc::Rec(3000 + s, Act(kComplete, tc::kTcRead), s, 4096));
  }
  const std::string bytes = EncodeAll(records, ByteOrder::kLittle);
  for (size_t window : {4u, 16u}) {
    SCOPED_TRACE(window);
    auto reader = Reader(bytes, window);
    const auto events = ReadAll(*reader, 1);
    ASSERT_EQ(events.size(), 10u);
    EXPECT_EQ(events[0].recorded_ns, window == 4 ? 0u : 1000u);
    EXPECT_EQ(events[9].recorded_ns, 1000u);
    EXPECT_EQ(CountsOf(*reader).matched, window == 4 ? 1u : 2u);
    EXPECT_EQ(CountsOf(*reader).unmatched, window == 4 ? 9u : 8u);
  }
}

// Queue and dispatch records of `ios` reads, generated as they are read, none ever completed:
// the worst case for the matching (every Q held until the window pushes it out).
class NeverCompletedSource : public ByteSource {
 public:
  explicit NeverCompletedSource(uint64_t ios) : ios_(ios) {}
  size_t Read(char* buf, size_t n) override {
    size_t given = 0;
    while (given < n) {
      if (pos_ == pending_.size()) {
        if (next_ == ios_) break;
        const uint64_t i = next_++;
        pending_ =
            EncodeAll(std::vector{tc::Rec(i * 1000, Act(kQueue, kRead), i * 8, 4096),
                                  tc::Rec(i * 1000 + 1, Act(kIssue, tc::kTcRead), i * 8, 4096)},
                      ByteOrder::kLittle);
        pos_ = 0;
      }
      const size_t k = std::min(n - given, pending_.size() - pos_);
      std::memcpy(buf + given, pending_.data() + pos_, k);
      pos_ += k;
      given += k;
    }
    return given;
  }
  const std::string& name() const override { return name_; }

 private:
  uint64_t ios_;
  uint64_t next_ = 0;
  std::string pending_;
  size_t pos_ = 0;
  std::string name_ = "generated";
};

TEST(BlktraceReaderTest, MemoryStaysBoundedWhateverTheLength) {
  constexpr uint64_t kIos = 400000;
  const size_t before = mallinfo2().uordblks;
  auto reader = MakeBlktraceReader(std::make_unique<NeverCompletedSource>(kIos));
  std::vector<TraceEvent> buf(1000);
  uint64_t events = 0;
  size_t peak = 0;
  for (size_t n; (n = reader->Next(buf.data(), buf.size())) > 0;) {
    events += n;
    peak = std::max(peak, mallinfo2().uordblks - before);
  }
  EXPECT_EQ(events, kIos);
  EXPECT_EQ(CountsOf(*reader).unmatched, kIos);
  // The window of 16,384 Qs in flight and their indexes: 2.2 MB measured, whatever the length
  // (all 400,000 held would be over 50 MB).
  EXPECT_LT(peak, 5u << 20) << "peak heap " << peak;
  RecordProperty("peak_heap_bytes", std::to_string(peak));
  EXPECT_GT(peak, 1u << 20) << "peak heap " << peak;
}

TEST(BlktraceReaderTest, EmptyDumpHasNoEvents) {
  auto reader = Reader("");
  EXPECT_TRUE(ReadAll(*reader).empty());
  EXPECT_TRUE(reader->devices().empty());
}

TEST(BlktraceReaderTest, TruncatedRecordNamesItsByteOffset) {
  std::string bytes = EncodeAll(Workload(), ByteOrder::kLittle);
  // The first two records whole (48 bytes each), the third cut after 20 bytes.
  const std::string error = ReadError(bytes.substr(0, 2 * 48 + 20));
  EXPECT_EQ(error, "mem.bin: blktrace record at byte 96: the record is cut short: 20 of 48 bytes");
}

TEST(BlktraceReaderTest, TruncatedPayloadNamesItsRecord) {
  const std::vector<BtRecord> records = {
      tc::Rec(1, Act(kQueue, kRead), 8, 4096),
      tc::WithPdu(tc::Rec(2, tc::kNotifyProcess), std::string(16, 'x')),
  };
  const std::string bytes = EncodeAll(records, ByteOrder::kBig);
  EXPECT_EQ(ReadError(bytes.substr(0, bytes.size() - 6)),
            "mem.bin: blktrace record at byte 48: its 16-byte payload is cut short after 10 "
            "bytes");
}

TEST(BlktraceReaderTest, BadMagicNamesItsByteOffset) {
  std::vector<BtRecord> records = Workload();
  records[2].magic = 0x12345607;
  const std::string error = ReadError(EncodeAll(records, ByteOrder::kLittle));
  EXPECT_NE(error.find("mem.bin: blktrace record at byte 96: bad magic 0x12345607"),
            std::string::npos)
      << error;
  // Text is no blktrace dump: refused at byte 0.
  EXPECT_NE(
      ReadError(std::string("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n").append(100, ' '))
          .find("blktrace record at byte 0: bad magic"),
      std::string::npos);
}

TEST(BlktraceReaderTest, OtherVersionIsRefused) {
  std::vector<BtRecord> records = Workload();
  records[0].magic = 0x65617408;
  EXPECT_EQ(
      ReadError(EncodeAll(records, ByteOrder::kBig)),
      "mem.bin: blktrace record at byte 0: blktrace version 8, iotail and fio read version 7");
}

TEST(BlktraceReaderTest, LooksLikeBlktraceInEitherByteOrder) {
  const std::string little = EncodeAll(Workload(), ByteOrder::kLittle);
  const std::string big = EncodeAll(Workload(), ByteOrder::kBig);
  EXPECT_TRUE(LooksLikeBlktrace(little));
  EXPECT_TRUE(LooksLikeBlktrace(big));
  EXPECT_FALSE(LooksLikeBlktrace("fio version 3 iolog"));
  EXPECT_FALSE(LooksLikeBlktrace(little.substr(0, 3)));
}

}  // namespace blktrace_reader_test
}  // namespace iotail::engine::replay
