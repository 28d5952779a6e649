#include "engine/explain/record_ring.h"

#if IOTAIL_HAVE_EXPLAIN
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace iotail::engine {

std::variant<RecordRing, std::string> RecordRing::Map(int map_fd, size_t data_bytes) {
  RecordRing ring;
  ring.page_ = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  ring.data_bytes_ = data_bytes;
  ring.mask_ = data_bytes - 1;
  auto failed = [&](const char* what) {
    return fmt::format("cannot map the ring buffer ({}): {}", what, std::strerror(errno));
  };
  ring.consumer_page_ = ::mmap(nullptr, ring.page_, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
  if (ring.consumer_page_ == MAP_FAILED) {
    ring.consumer_page_ = nullptr;
    return failed("consumer page");
  }
  // The producer's page, then the data twice.
  ring.producer_pages_ = ::mmap(nullptr, ring.page_ + 2 * data_bytes, PROT_READ, MAP_SHARED, map_fd,
                                static_cast<off_t>(ring.page_));
  if (ring.producer_pages_ == MAP_FAILED) {
    ring.producer_pages_ = nullptr;
    return failed("producer pages");
  }
  ring.consumer_ = static_cast<std::atomic<uint64_t>*>(ring.consumer_page_);
  ring.producer_ = static_cast<const std::atomic<uint64_t>*>(ring.producer_pages_);
  ring.data_ = static_cast<const char*>(ring.producer_pages_) + ring.page_;
  ring.epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (ring.epoll_fd_ < 0) return failed("epoll");
  epoll_event event{};
  event.events = EPOLLIN;
  if (::epoll_ctl(ring.epoll_fd_, EPOLL_CTL_ADD, map_fd, &event) != 0) return failed("epoll");
  return ring;
}

RecordRing::RecordRing(RecordRing&& other) noexcept
    : epoll_fd_(std::exchange(other.epoll_fd_, -1)),
      page_(other.page_),
      data_bytes_(other.data_bytes_),
      mask_(other.mask_),
      consumer_page_(std::exchange(other.consumer_page_, nullptr)),
      producer_pages_(std::exchange(other.producer_pages_, nullptr)),
      consumer_(std::exchange(other.consumer_, nullptr)),
      producer_(std::exchange(other.producer_, nullptr)),
      data_(std::exchange(other.data_, nullptr)) {}

RecordRing::~RecordRing() { Unmap(); }

void RecordRing::Unmap() {
  if (consumer_page_ != nullptr) ::munmap(consumer_page_, page_);
  if (producer_pages_ != nullptr) ::munmap(producer_pages_, page_ + 2 * data_bytes_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  consumer_page_ = producer_pages_ = nullptr;
  epoll_fd_ = -1;
}

void RecordRing::Wait(int timeout_ms) {
  epoll_event event{};
  while (::epoll_wait(epoll_fd_, &event, 1, timeout_ms) < 0 && errno == EINTR) {
  }
}

}  // namespace iotail::engine
#endif
