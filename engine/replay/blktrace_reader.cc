#include "engine/replay/blktrace_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

namespace iotail::engine::replay {
namespace {

// blktrace's ABI (the kernel's include/uapi/linux/blktrace_api.h).
constexpr uint32_t kMagic = 0x65617400;
constexpr uint32_t kVersion = 7;
constexpr uint32_t kActionQueue = 1;
constexpr uint32_t kActionIssue = 7;
constexpr uint32_t kActionComplete = 8;
constexpr uint32_t kCategoryShift = 16;
constexpr uint32_t kCategoryWrite = 1u << 1;
constexpr uint32_t kCategoryFlush = 1u << 2;
constexpr uint32_t kCategoryNotify = 1u << 10;
constexpr uint32_t kCategoryDiscard = 1u << 13;
constexpr size_t kReadBufferBytes = 64 * 1024;

bool Has(uint32_t action, uint32_t category) {
  return (action & (category << kCategoryShift)) != 0;
}

struct Record {
  uint32_t magic = 0;
  uint64_t time = 0;
  uint64_t sector = 0;
  uint32_t bytes = 0;
  uint32_t action = 0;
  uint32_t device = 0;
  uint16_t pdu_len = 0;
};

// What a request does, for matching a dispatch to its bios; fio's order: discard, flush, write.
enum class IoClass : uint8_t { kRead, kWrite, kTrim, kFlush };
IoClass ClassOf(uint32_t action) {
  if (Has(action, kCategoryDiscard)) return IoClass::kTrim;
  if (Has(action, kCategoryFlush)) return IoClass::kFlush;
  if (Has(action, kCategoryWrite)) return IoClass::kWrite;
  return IoClass::kRead;
}

using Key = std::pair<uint32_t, uint64_t>;  // dev_t, sector

class BlktraceReader : public TraceReader {
 public:
  BlktraceReader(std::unique_ptr<ByteSource> source, size_t window)
      : source_(std::move(source)), buffer_(kReadBufferBytes), ring_(std::max<size_t>(window, 1)) {}

  size_t Next(TraceEvent* out, size_t n) override {
    size_t given = 0;
    while (given < n) {
      const size_t held = tail_ - head_;
      if (held > 0 && (ring_[head_ % ring_.size()].resolved || held == ring_.size() || ended_)) {
        out[given++] = GiveOutHead();
      } else if (ended_) {
        break;
      } else {
        ReadOne();
      }
    }
    return given;
  }
  const std::vector<std::string>& devices() const override { return device_names_; }
  uint64_t skipped() const override { return skipped_; }
  const BlktraceCounts& counts() const { return counts_; }

 private:
  struct Request {
    uint64_t dispatch_time;
    IoClass io_class;
    bool empty;                // a request without data (a flush)
    uint32_t live;             // its Qs still held
    std::vector<uint64_t> qs;  // their sequence numbers
  };
  using Waiting = std::multimap<Key, uint64_t>;  // Qs without a D yet -> sequence number
  using InFlight = std::multimap<Key, Request>;  // D seen, C not yet
  struct Held {
    TraceEvent event;
    uint64_t sector = 0;
    uint32_t dev = 0;
    uint32_t bytes = 0;  // the record's (a flush with data keeps its length here)
    IoClass io_class = IoClass::kRead;
    bool resolved = false;
    bool waiting = false;
    bool in_flight = false;
    Waiting::iterator waiting_it;
    InFlight::iterator request_it;
  };

  // Reads one record and acts on it; sets ended_ at the end of the stream.
  void ReadOne() {
    Record r;
    if (!ReadRecord(&r)) {
      ended_ = true;
      return;
    }
    ++counts_.records;
    const uint32_t what = r.action & 0xffff;
    if (Has(r.action, kCategoryNotify)) {
      ++skipped_;
    } else if (what == kActionQueue) {
      OnQueue(r);
    } else {
      ++skipped_;
      if (what == kActionIssue) OnDispatch(r);
      if (what == kActionComplete) OnComplete(r);
    }
  }

  void OnQueue(const Record& r) {
    // fio's clock: the wait before this Q is the time since the previous Q, 0 if it went back.
    if (have_last_ && r.time > last_time_) clock_ns_ += r.time - last_time_;
    last_time_ = r.time;
    have_last_ = true;
    const uint32_t device = DeviceIndex(r.device);
    const IoClass io_class = ClassOf(r.action);
    TraceEvent event;
    event.time_ns = clock_ns_;
    event.device = device;
    event.timed = true;
    switch (io_class) {
      case IoClass::kTrim:
        event.op = TraceOp::kTrim;
        break;
      case IoClass::kFlush:
        event.op = TraceOp::kSync;
        break;
      case IoClass::kWrite:
      case IoClass::kRead:
        if (r.bytes == 0) {  // fio: "ignoring zero byte trace"
          ++skipped_;
          return;
        }
        event.op = io_class == IoClass::kWrite ? TraceOp::kWrite : TraceOp::kRead;
        break;
    }
    if (event.op != TraceOp::kSync) {
      event.offset = r.sector * 512;
      event.length = r.bytes;
    }
    Held& held = ring_[tail_ % ring_.size()];
    held = Held{};
    held.event = event;
    held.sector = r.sector;
    held.dev = r.device;
    held.bytes = r.bytes;
    held.io_class = io_class;
    held.waiting = true;
    held.waiting_it = waiting_.emplace(Key{r.device, r.sector}, tail_);
    ++tail_;
  }

  // A D takes the Qs of its device and class that start within its sectors and have no D yet.
  void OnDispatch(const Record& r) {
    const IoClass io_class = ClassOf(r.action);
    const uint64_t end = r.sector + std::max<uint64_t>(r.bytes / 512, 1);
    auto it = waiting_.lower_bound(Key{r.device, r.sector});
    InFlight::iterator request = in_flight_.end();
    while (it != waiting_.end() && it->first.first == r.device && it->first.second < end) {
      Held& held = ring_[it->second % ring_.size()];
      if (held.io_class != io_class || (held.bytes == 0) != (r.bytes == 0)) {
        ++it;
        continue;
      }
      if (request == in_flight_.end()) {
        request = in_flight_.emplace(Key{r.device, r.sector},
                                     Request{r.time, io_class, r.bytes == 0, 0, {}});
      }
      request->second.qs.push_back(it->second);
      ++request->second.live;
      held.waiting = false;
      held.in_flight = true;
      held.request_it = request;
      it = waiting_.erase(it);
    }
  }

  // A C ends the oldest request in flight at its device, sector and class, with data or without
  // as the C (the flush machinery also completes the empty flush bio: "C WS 0").
  void OnComplete(const Record& r) {
    const IoClass io_class = ClassOf(r.action);
    auto [first, last] = in_flight_.equal_range(Key{r.device, r.sector});
    for (auto it = first; it != last; ++it) {
      if (it->second.io_class != io_class || it->second.empty != (r.bytes == 0)) continue;
      const uint64_t recorded =
          r.time > it->second.dispatch_time ? r.time - it->second.dispatch_time : 0;
      for (uint64_t seq : it->second.qs) {
        if (seq < head_) continue;  // already given out
        Held& held = ring_[seq % ring_.size()];
        held.event.recorded_ns = recorded;
        held.resolved = true;
        held.in_flight = false;
      }
      in_flight_.erase(it);
      return;
    }
  }

  TraceEvent GiveOutHead() {
    Held& held = ring_[head_ % ring_.size()];
    if (held.waiting) waiting_.erase(held.waiting_it);
    if (held.in_flight && --held.request_it->second.live == 0) in_flight_.erase(held.request_it);
    ++(held.resolved ? counts_.matched : counts_.unmatched);
    ++head_;
    return held.event;
  }

  uint32_t DeviceIndex(uint32_t dev) {
    if (!device_ids_.empty() && device_ids_[last_device_] == dev) return last_device_;
    const auto found = std::find(device_ids_.begin(), device_ids_.end(), dev);
    last_device_ = static_cast<uint32_t>(found - device_ids_.begin());
    if (found == device_ids_.end()) {
      device_ids_.push_back(dev);
      device_names_.push_back(fmt::format("{},{}", dev >> 20, dev & 0xfffff));
    }
    return last_device_;
  }

  // Decodes the next record (its payload skipped); false at a clean end of the stream.
  bool ReadRecord(Record* r) {
    const uint64_t at = offset_;
    unsigned char raw[kBlktraceRecordBytes];
    const size_t got = Take(raw, sizeof raw);
    if (got == 0) return false;
    if (got < sizeof raw) {
      Fail(at, fmt::format("the record is cut short: {} of {} bytes", got, sizeof raw));
    }
    uint32_t magic;
    std::memcpy(&magic, raw, 4);
    if (at == 0) {
      swap_ = (magic & 0xffffff00) != kMagic && (__builtin_bswap32(magic) & 0xffffff00) == kMagic;
    }
    const auto u16 = [&](size_t o) {
      uint16_t v;
      std::memcpy(&v, raw + o, 2);
      return swap_ ? __builtin_bswap16(v) : v;
    };
    const auto u32 = [&](size_t o) {
      uint32_t v;
      std::memcpy(&v, raw + o, 4);
      return swap_ ? __builtin_bswap32(v) : v;
    };
    const auto u64 = [&](size_t o) {
      uint64_t v;
      std::memcpy(&v, raw + o, 8);
      return swap_ ? __builtin_bswap64(v) : v;
    };
    r->magic = u32(0);
    if ((r->magic & 0xffffff00) != kMagic) {
      Fail(at, fmt::format("bad magic {:#010x}, expected {:#08x}NN in either byte order (is it a "
                           "`blkparse -d` dump?)",
                           r->magic, kMagic >> 8));
    }
    if ((r->magic & 0xff) != kVersion) {
      Fail(at, fmt::format("blktrace version {}, iotail and fio read version {}", r->magic & 0xff,
                           kVersion));
    }
    r->time = u64(8);
    r->sector = u64(16);
    r->bytes = u32(24);
    r->action = u32(28);
    r->device = u32(36);
    r->pdu_len = u16(46);
    for (size_t left = r->pdu_len; left > 0;) {
      unsigned char skip[256];
      const size_t k = Take(skip, std::min(left, sizeof skip));
      if (k == 0) {
        Fail(at, fmt::format("its {}-byte payload is cut short after {} bytes", r->pdu_len,
                             r->pdu_len - left));
      }
      left -= k;
    }
    return true;
  }

  // Copies up to n bytes from the stream; fewer only at its end.
  size_t Take(unsigned char* dst, size_t n) {
    size_t got = 0;
    while (got < n) {
      if (pos_ == len_) {
        len_ = source_->Read(buffer_.data(), buffer_.size());
        pos_ = 0;
        if (len_ == 0) break;
      }
      const size_t k = std::min(n - got, len_ - pos_);
      std::memcpy(dst + got, buffer_.data() + pos_, k);
      pos_ += k;
      got += k;
    }
    offset_ += got;
    return got;
  }

  [[noreturn]] void Fail(uint64_t at, const std::string& what) const {
    throw TraceFormatError(
        fmt::format("{}: blktrace record at byte {}: {}", source_->name(), at, what));
  }

  std::unique_ptr<ByteSource> source_;
  std::vector<char> buffer_;
  size_t pos_ = 0;
  size_t len_ = 0;
  uint64_t offset_ = 0;
  bool swap_ = false;
  bool ended_ = false;
  // fio's clock
  bool have_last_ = false;
  uint64_t last_time_ = 0;
  uint64_t clock_ns_ = 0;
  // The held Qs, sequence numbers head_ <= seq < tail_ at ring_[seq % size].
  std::vector<Held> ring_;
  uint64_t head_ = 0;
  uint64_t tail_ = 0;
  Waiting waiting_;
  InFlight in_flight_;
  std::vector<uint32_t> device_ids_;
  std::vector<std::string> device_names_;
  uint32_t last_device_ = 0;
  uint64_t skipped_ = 0;
  BlktraceCounts counts_;
};

}  // namespace

bool LooksLikeBlktrace(std::string_view head) {
  if (head.size() < 4) return false;
  uint32_t magic;
  std::memcpy(&magic, head.data(), 4);
  return (magic & 0xffffff00) == kMagic || (__builtin_bswap32(magic) & 0xffffff00) == kMagic;
}

std::unique_ptr<TraceReader> MakeBlktraceReader(std::unique_ptr<ByteSource> source, size_t window) {
  return std::make_unique<BlktraceReader>(std::move(source), window);
}

BlktraceCounts CountsOf(const TraceReader& reader) {
  return dynamic_cast<const BlktraceReader&>(reader).counts();
}

}  // namespace iotail::engine::replay
