#include "stats/util/large_buffer.h"

#include <sys/mman.h>

#include <new>
#include <utility>

namespace iotail::stats {

LargeBuffer::LargeBuffer(size_t doubles) : size_(doubles), bytes_(doubles * sizeof(double)) {
  if (bytes_ == 0) return;
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // Advice only: without transparent huge pages the buffer works the same, with small pages.
  ::madvise(p, bytes_, MADV_HUGEPAGE);
  data_ = static_cast<double*>(p);
}

LargeBuffer::~LargeBuffer() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

LargeBuffer::LargeBuffer(LargeBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

}  // namespace iotail::stats
