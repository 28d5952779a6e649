// Blktrace dumps built byte by byte for the reader's tests: one blk_io_trace record (48 bytes and
// its payload) in either byte order, the action codes of the kernel's blktrace_api.h, and a
// ByteSource over bytes in memory. Header-only; each test owns what it builds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/replay/trace_event.h"

namespace iotail::testing {

enum : uint32_t {
  kTcRead = 1u << 0,
  kTcWrite = 1u << 1,
  kTcFlush = 1u << 2,
  kTcSync = 1u << 3,
  kTcQueue = 1u << 4,
  kTcIssue = 1u << 6,
  kTcComplete = 1u << 7,
  kTcNotify = 1u << 10,
  kTcDiscard = 1u << 13,
};
constexpr uint32_t Act(uint32_t what, uint32_t categories) { return what | (categories << 16); }
// The basic actions: Q, M (back merge), G, D, C; and a process-name notification.
constexpr uint32_t kQueue = 1, kBackMerge = 2, kGetRq = 4, kIssue = 7, kComplete = 8;
constexpr uint32_t kNotifyProcess = Act(0, kTcNotify);
constexpr uint32_t Dev(uint32_t major, uint32_t minor) { return major << 20 | minor; }

struct BtRecord {
  uint64_t time = 0;
  uint64_t sector = 0;
  uint32_t bytes = 0;
  uint32_t action = 0;
  uint32_t device = Dev(8, 16);
  std::string pdu;
  uint32_t magic = 0x65617407;
  uint32_t cpu = 0;
};

// A record without payload (a builder: designated initializers of a struct with a std::string
// member trip GCC's -Wmissing-field-initializers).
inline BtRecord Rec(uint64_t time, uint32_t action, uint64_t sector = 0, uint32_t bytes = 0,
                    uint32_t device = Dev(8, 16)) {
  BtRecord r;
  r.time = time;
  r.action = action;
  r.sector = sector;
  r.bytes = bytes;
  r.device = device;
  return r;
}
inline BtRecord WithPdu(BtRecord r, std::string pdu) {
  r.pdu = std::move(pdu);
  return r;
}

enum class ByteOrder { kLittle, kBig };

// The record as blktrace writes it on a machine of `order`.
inline std::string Encode(const BtRecord& r, ByteOrder order) {
  std::string out;
  const auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      const int shift = 8 * (order == ByteOrder::kLittle ? i : bytes - 1 - i);
      out.push_back(static_cast<char>((v >> shift) & 0xff));
    }
  };
  put(r.magic, 4);
  put(0, 4);  // sequence
  put(r.time, 8);
  put(r.sector, 8);
  put(r.bytes, 4);
  put(r.action, 4);
  put(4242, 4);  // pid
  put(r.device, 4);
  put(r.cpu, 4);
  put(0, 2);  // error
  put(r.pdu.size(), 2);
  return out + r.pdu;
}

template <typename Records>
std::string EncodeAll(const Records& records, ByteOrder order) {
  std::string out;
  for (const BtRecord& r : records) out += Encode(r, order);
  return out;
}

// A little-endian dump of `each` reads and `each` writes on one device (8,16), 200 us apart: each
// queued, dispatched 10 us later and completed `read_ns` (`write_ns`) after its dispatch, so the
// trace records those device times. Reads at sectors 0, 8, ..., writes from sector 8192.
inline std::string DeviceTimedDump(int each, uint64_t read_ns, uint64_t write_ns) {
  std::vector<BtRecord> recs;
  for (int i = 0; i < each; ++i) {
    const uint64_t t = i * 200'000ull;
    const uint64_t rs = i * 8ull, ws = 8192 + i * 8ull;
    recs.push_back(Rec(t, Act(kQueue, kTcQueue | kTcRead), rs, 4096));
    recs.push_back(Rec(t + 10'000, Act(kIssue, kTcRead), rs, 4096));
    recs.push_back(Rec(t + 10'000 + read_ns, Act(kComplete, kTcRead), rs, 4096));
    recs.push_back(Rec(t + 50'000, Act(kQueue, kTcQueue | kTcWrite), ws, 4096));
    recs.push_back(Rec(t + 60'000, Act(kIssue, kTcWrite), ws, 4096));
    recs.push_back(Rec(t + 60'000 + write_ns, Act(kComplete, kTcWrite), ws, 4096));
  }
  std::stable_sort(recs.begin(), recs.end(),
                   [](const BtRecord& a, const BtRecord& b) { return a.time < b.time; });
  return EncodeAll(recs, ByteOrder::kLittle);
}

// Bytes in memory, read in pieces of at most `piece` (records straddle the reads).
class MemorySource : public engine::replay::ByteSource {
 public:
  explicit MemorySource(std::string bytes, size_t piece = 1000)
      : bytes_(std::move(bytes)), piece_(piece) {}
  size_t Read(char* buf, size_t n) override {
    const size_t k = std::min({n, piece_, bytes_.size() - pos_});
    std::memcpy(buf, bytes_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  const std::string& name() const override { return name_; }

 private:
  std::string bytes_;
  size_t piece_;
  size_t pos_ = 0;
  std::string name_ = "mem.bin";
};

}  // namespace iotail::testing
