// LargeBuffer: an array of doubles (or bytes) in anonymous memory that the kernel may back with
// huge pages (madvise MADV_HUGEPAGE): a window of histogram quanta is tens of megabytes, touched
// slot by slot, and with 4 KiB pages most of its cost was page faults. Pages are faulted in
// (zeroed) when first touched, so untouched parts cost nothing but address space. A buffer of
// bytes (Bytes: a file's read buffer) is rounded up to whole huge pages, so that its first touch
// is one fault instead of one per 4 KiB (a fault costs microseconds, tens of them in some VMs).
// Owns the mapping; movable, not copyable. Throws std::bad_alloc when the mapping fails. Not
// thread-safe itself (threads may use disjoint parts).
#pragma once

#include <cstddef>

namespace iotail::stats {

class LargeBuffer {
 public:
  LargeBuffer() = default;
  explicit LargeBuffer(size_t doubles);
  // At least `bytes` bytes: from 64 KiB on, rounded up to whole huge pages (2 MiB).
  static LargeBuffer Bytes(size_t bytes);
  ~LargeBuffer();
  LargeBuffer(LargeBuffer&& other) noexcept;
  LargeBuffer& operator=(LargeBuffer&& other) noexcept;
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;

  double* get() const { return data_; }
  size_t size() const { return size_; }  // doubles
  char* bytes() const { return reinterpret_cast<char*>(data_); }
  size_t size_bytes() const { return bytes_; }

 private:
  enum class Rounding { kPage, kHugePage };
  LargeBuffer(size_t bytes, Rounding rounding);
  double* data_ = nullptr;
  size_t size_ = 0;
  size_t bytes_ = 0;
};

}  // namespace iotail::stats
