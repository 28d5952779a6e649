#include "stats/util/large_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>
#include <utility>

namespace iotail::stats {
namespace {

// The huge page size of x86-64 and arm64 (4 KiB base pages): a mapping that starts on this
// boundary is backed by huge pages from its first byte.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

}  // namespace

LargeBuffer::LargeBuffer(size_t doubles) : LargeBuffer(doubles * sizeof(double), Rounding::kPage) {
  size_ = doubles;
}

LargeBuffer LargeBuffer::Bytes(size_t bytes) {
  constexpr size_t kWholeHugePagesFrom = size_t{64} << 10;
  return LargeBuffer(bytes, bytes >= kWholeHugePagesFrom ? Rounding::kHugePage : Rounding::kPage);
}

LargeBuffer::LargeBuffer(size_t bytes, Rounding rounding) {
  const size_t unit = rounding == Rounding::kHugePage ? kHugePage : kPage;
  bytes_ = (bytes + unit - 1) / unit * unit;
  size_ = bytes_ / sizeof(double);
  if (bytes_ == 0) return;
  // Map a huge page more and trim both ends so that the buffer starts on a huge-page boundary:
  // mmap places it anywhere, and the small pages of a partial first huge page (up to 512 of them,
  // each a page fault) cost more than the huge pages after it.
  const size_t mapped = bytes_ >= kHugePage ? bytes_ + kHugePage : bytes_;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  auto* begin = static_cast<char*>(p);
  if (mapped != bytes_) {
    const auto address = reinterpret_cast<uintptr_t>(begin);
    const size_t head = (kHugePage - address % kHugePage) % kHugePage;
    if (head > 0) ::munmap(begin, head);
    ::munmap(begin + head + bytes_, kHugePage - head);
    begin += head;
  }
  // Advice only: without transparent huge pages the buffer works the same, with small pages.
  ::madvise(begin, bytes_, MADV_HUGEPAGE);
  data_ = reinterpret_cast<double*>(begin);
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
