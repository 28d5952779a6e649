// RecordRing: the consumer side of a BPF ring buffer map (BPF_MAP_TYPE_RINGBUF), read through its
// own memory mapping instead of libbpf's ring_buffer__consume, which stores the consumer position
// after every record: the producing programs read that position at every reserve, so each record
// would pass its cache line from the consumer's CPU to the producer's and back. Consume() stores it
// once per batch (at most kRecordsPerRelease records), so the line stays shared between the CPUs.
//
// The layout is the kernel's (kernel/bpf/ringbuf.c, as libbpf maps it): a read-write page holding
// the consumer position at the map's offset 0, then a read-only page holding the producer position,
// then the data pages mapped twice in a row (a record that wraps reads as one). Each record starts
// with an 8-byte header, its length with the busy bit (not yet submitted) and the discard bit, and
// is padded to 8 bytes.
//
// Threads: one consumer thread (Wait and Consume); built only with IOTAIL_HAVE_EXPLAIN.
#pragma once

#if IOTAIL_HAVE_EXPLAIN
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

namespace iotail::engine {

class RecordRing {
 public:
  static constexpr uint32_t kRecordsPerRelease = 1024;

  // Maps the ring buffer map `map_fd` of `data_bytes` (its max_entries: a power of two, a multiple
  // of the page size). An error in words when the kernel refuses.
  static std::variant<RecordRing, std::string> Map(int map_fd, size_t data_bytes);

  RecordRing(RecordRing&& other) noexcept;
  RecordRing& operator=(RecordRing&&) = delete;
  RecordRing(const RecordRing&) = delete;
  ~RecordRing();

  // Waits up to timeout_ms for the producer's wakeup (records may be waiting without one).
  void Wait(int timeout_ms);

  // Calls f(data, size) on each submitted record, oldest first, up to the first not yet submitted;
  // discarded records are skipped. Returns how many were handed over.
  template <typename F>
  size_t Consume(F&& f) {
    uint64_t consumer = consumer_->load(std::memory_order_relaxed);
    size_t handed = 0;
    uint32_t since_release = 0;
    for (;;) {
      const uint64_t producer = producer_->load(std::memory_order_acquire);
      if (consumer >= producer) break;
      bool busy = false;
      while (consumer < producer) {
        const auto* header =
            reinterpret_cast<const std::atomic<uint32_t>*>(data_ + (consumer & mask_));
        const uint32_t word = header->load(std::memory_order_acquire);
        if (word & kBusyBit) {
          busy = true;
          break;
        }
        const uint32_t length = word & ~(kBusyBit | kDiscardBit);
        if (!(word & kDiscardBit)) {
          f(data_ + (consumer & mask_) + kHeaderBytes, length);
          ++handed;
        }
        consumer += (uint64_t{length} + kHeaderBytes + 7) / 8 * 8;
        if (++since_release == kRecordsPerRelease) {
          consumer_->store(consumer, std::memory_order_release);
          since_release = 0;
        }
      }
      consumer_->store(consumer, std::memory_order_release);
      since_release = 0;
      if (busy) break;
    }
    return handed;
  }

 private:
  static constexpr uint32_t kBusyBit = 1U << 31;
  static constexpr uint32_t kDiscardBit = 1U << 30;
  static constexpr uint32_t kHeaderBytes = 8;

  RecordRing() = default;
  void Unmap();

  int epoll_fd_ = -1;
  size_t page_ = 0;
  size_t data_bytes_ = 0;
  uint64_t mask_ = 0;
  void* consumer_page_ = nullptr;
  void* producer_pages_ = nullptr;
  std::atomic<uint64_t>* consumer_ = nullptr;
  const std::atomic<uint64_t>* producer_ = nullptr;
  const char* data_ = nullptr;
};

}  // namespace iotail::engine
#endif
