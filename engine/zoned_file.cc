#include "engine/zoned_file.h"

#include <algorithm>

namespace iotail::engine {

ZonedFile::ZonedFile(uint64_t file_size, uint64_t zone_size, uint64_t capacity, uint32_t max_open)
    : zone_size_(zone_size),
      capacity_(capacity),
      nr_(static_cast<uint32_t>((file_size + zone_size - 1) / zone_size)),
      max_open_(max_open),
      zones_(std::make_unique<Zone[]>(nr_)),
      open_(std::max<uint32_t>(max_open, 1)) {
  for (uint32_t z = 0; z < nr_; ++z) zones_[z].wp.store(Start(z), std::memory_order_relaxed);
}

ZonedFile::Reservation ZonedFile::Reserve(uint32_t z, uint64_t want, uint64_t min_bs, bool reset) {
  Zone& zone = zones_[z];
  const uint64_t start = Start(z), cap_end = CapacityEnd(z);
  uint64_t wp = zone.wp.load(std::memory_order_acquire);
  bool did_reset = false;
  for (;;) {
    uint64_t at = wp;
    if (reset || wp + min_bs > cap_end) at = start;  // fio: reset before this write
    const uint64_t bytes = std::min(want, cap_end - at) / min_bs * min_bs;
    if (zone.wp.compare_exchange_weak(wp, at + bytes, std::memory_order_acq_rel)) {
      if (at != wp) {
        // The zone's data before the reset is gone.
        data_.fetch_sub(wp - start, std::memory_order_relaxed);
        did_reset = wp != start;
      }
      data_.fetch_add(bytes, std::memory_order_relaxed);
      return Reservation{at, bytes, did_reset};
    }
    // Another writer moved the pointer: decide again on what it left.
  }
}

bool ZonedFile::Reset(uint32_t z) {
  Zone& zone = zones_[z];
  const uint64_t start = Start(z);
  uint64_t wp = zone.wp.load(std::memory_order_acquire);
  while (wp != start) {
    if (zone.wp.compare_exchange_weak(wp, start, std::memory_order_acq_rel)) {
      data_.fetch_sub(wp - start, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

bool ZonedFile::Open(uint32_t z, std::atomic<uint32_t>* mine, uint32_t job_max) {
  if (max_open_ == 0) return true;
  Zone& zone = zones_[z];
  // Open already: usable unless writes in flight fill it (fio then treats it as full).
  if (zone.open.load(std::memory_order_acquire)) return Wp(z) < CapacityEnd(z);
  Lock();
  bool ok = false;
  if (zone.open.load(std::memory_order_relaxed)) {
    ok = Wp(z) < CapacityEnd(z);
  } else if ((job_max == 0 || mine->load(std::memory_order_relaxed) < job_max) &&
             open_count_.load(std::memory_order_relaxed) < max_open_) {
    const uint32_t n = open_count_.load(std::memory_order_relaxed);
    open_[n].store(z, std::memory_order_relaxed);
    open_count_.store(n + 1, std::memory_order_release);
    mine->fetch_add(1, std::memory_order_relaxed);
    zone.opener.store(mine, std::memory_order_relaxed);
    zone.open.store(true, std::memory_order_release);
    ok = true;
  }
  Unlock();
  return ok;
}

void ZonedFile::Close(uint32_t z) {
  Zone& zone = zones_[z];
  if (max_open_ == 0 || !zone.open.load(std::memory_order_acquire)) return;
  Lock();
  if (zone.open.load(std::memory_order_relaxed)) {
    const uint32_t n = open_count_.load(std::memory_order_relaxed);
    uint32_t i = 0;
    while (i < n && open_[i].load(std::memory_order_relaxed) != z) ++i;
    if (i < n) {
      // fio keeps the list in opening order: the later ones move down.
      for (; i + 1 < n; ++i) {
        open_[i].store(open_[i + 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
      }
      open_count_.store(n - 1, std::memory_order_release);
      if (std::atomic<uint32_t>* who = zone.opener.load(std::memory_order_relaxed)) {
        who->fetch_sub(1, std::memory_order_relaxed);
      }
      zone.opener.store(nullptr, std::memory_order_relaxed);
      zone.open.store(false, std::memory_order_release);
    }
  }
  Unlock();
}

bool ZonedFile::Countdown(uint32_t every) {
  uint32_t left = countdown_.load(std::memory_order_relaxed);
  for (;;) {
    const uint32_t next = left <= 1 ? every : left - 1;
    if (countdown_.compare_exchange_weak(left, next, std::memory_order_relaxed)) return left <= 1;
  }
}

std::shared_ptr<ZonedFile> ZoneRegistry::Get(uint64_t dev, uint64_t ino, const Settings& settings,
                                             bool* made) {
  auto& slot = files_[{dev, ino}];
  *made = slot == nullptr;
  if (slot == nullptr) {
    slot = std::make_shared<ZonedFile>(settings.file_size, settings.zone_size, settings.capacity,
                                       settings.max_open);
  }
  return slot;
}

}  // namespace iotail::engine
