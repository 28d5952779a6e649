// ZonedFile: fio's emulated zones of one file or non-zoned block device under zonemode=zbd (fio's
// init_zone_info, model ZBD_NONE): the file cut into zones of zonesize bytes (the last one
// possibly shorter than zonesize, as fio counts it, nr = ceil(size / zonesize)), each a
// sequential-write-required zone whose writes go at its write pointer, with zonecapacity usable
// bytes from its start. The write pointers live in memory only: every zone begins empty when the
// run begins (as in fio, whatever the file holds), and a reset moves the pointer back without
// touching the data (fio does not discard on emulated zones either).
//
// One ZonedFile is shared by every worker of every job of the run on that file (fio shares its
// zbd_info among jobs by file), across stonewalled groups: ZoneRegistry hands them out.
//
// Concurrency, and why not fio's lock per zone: fio locks a zone from choosing an I/O's offset
// until the I/O is queued (or, asynchronous, completed) because a real zoned device takes a zone's
// writes only in order. Emulated zones have no such device: what must hold is only that each write
// gets the bytes at the write pointer and moves it, and that no two writes get the same bytes. So
// a write reserves its bytes with one compare-and-swap on the zone's write pointer; the data
// counters are relaxed atomics. The list of open zones (max_open_zones) changes only when a zone
// opens or closes (once per zone filled, not per I/O) and is guarded by a spin lock held for a few
// instructions; a write to a zone already open reads one atomic flag. No allocation after
// construction; every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace iotail::engine {

// fio's ZBD_MAX_OPEN_ZONES: the largest max_open_zones and job_max_open_zones it takes.
inline constexpr uint32_t kZbdMaxOpenZones = 4096;

class ZonedFile {
 public:
  // file_size >= zone_size > 0; 0 < capacity <= zone_size; max_open: 0 for no limit.
  ZonedFile(uint64_t file_size, uint64_t zone_size, uint64_t capacity, uint32_t max_open);

  uint32_t zones() const { return nr_; }
  uint64_t zone_size() const { return zone_size_; }
  uint32_t max_open() const { return max_open_; }
  // The zone holding `offset` (nr for an offset at or past the end, fio's sentinel).
  uint32_t ZoneOf(uint64_t offset) const {
    const uint64_t z = offset / zone_size_;
    return z < nr_ ? static_cast<uint32_t>(z) : nr_;
  }
  uint64_t Start(uint32_t z) const { return uint64_t{z} * zone_size_; }
  uint64_t End(uint32_t z) const { return uint64_t{z + 1} * zone_size_; }
  uint64_t CapacityEnd(uint32_t z) const { return Start(z) + capacity_; }
  uint64_t Wp(uint32_t z) const { return zones_[z].wp.load(std::memory_order_acquire); }
  // Bytes below the write pointers of all zones (fio's wp_sectors_with_data, in bytes).
  uint64_t DataBytes() const { return data_.load(std::memory_order_relaxed); }

  // Reserves up to `want` bytes (whole multiples of min_bs) at zone z's write pointer, resetting
  // the zone first when fewer than min_bs bytes are left below its capacity or when `reset` is
  // set (fio's zbd_zone_full and reset_zone). Returns the offset, the bytes and whether a reset was
  // done (with data in the zone: fio counts only those).
  struct Reservation {
    uint64_t offset;
    uint64_t bytes;
    bool reset;
  };
  Reservation Reserve(uint32_t z, uint64_t want, uint64_t min_bs, bool reset);
  // fio's zbd_reset_zone: the write pointer back to the zone's start; true when it held data.
  bool Reset(uint32_t z);

  // fio's zbd_open_zone for the zone z by a worker whose open zones `mine` counts (limit
  // job_max, 0: none): true when z is open (and not filled by writes in flight) or could be opened
  // within the limits. Without max_open_zones nothing is tracked and every zone is open.
  bool Open(uint32_t z, std::atomic<uint32_t>* mine, uint32_t job_max);
  // fio's zbd_close_zone: z leaves the open list (its opener's count too).
  void Close(uint32_t z);
  bool IsOpen(uint32_t z) const { return zones_[z].open.load(std::memory_order_acquire); }
  uint32_t OpenCount() const { return open_count_.load(std::memory_order_acquire); }
  // The i-th zone of the open list (i < OpenCount() when read; may be stale, as fio reads it).
  uint32_t OpenAt(uint32_t i) const {
    return open_[i % open_.size()].load(std::memory_order_relaxed);
  }

  // fio's write_cnt (zone_reset_frequency): set to `every` writes; Countdown() takes one and says
  // when it reached 0 (then it starts over).
  void ResetCountdown(uint32_t every) { countdown_.store(every, std::memory_order_relaxed); }
  bool Countdown(uint32_t every);

  // Writes of all workers reserved and not completed yet (fio's any_io_in_flight for this file).
  std::atomic<uint32_t> writes_in_flight{0};

 private:
  struct Zone {
    std::atomic<uint64_t> wp{0};
    std::atomic<bool> open{false};
    std::atomic<std::atomic<uint32_t>*> opener{nullptr};  // whose count its opening took
  };
  void Lock() {
    while (lock_.test_and_set(std::memory_order_acquire)) {
    }
  }
  void Unlock() { lock_.clear(std::memory_order_release); }

  uint64_t zone_size_, capacity_;
  uint32_t nr_;
  uint32_t max_open_;
  std::unique_ptr<Zone[]> zones_;
  std::atomic<uint64_t> data_{0};
  std::atomic<uint32_t> countdown_{0};
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;  // guards the open list
  std::vector<std::atomic<uint32_t>> open_;   // the open zones, in the order they opened
  std::atomic<uint32_t> open_count_{0};
};

// The ZonedFiles of a run, one per file (by device and inode), made by the first job that uses
// the file with that job's zonesize, zonecapacity and max_open_zones, as fio's zbd_info is made
// by the first job and shared by the others. Used by the controlling thread only (RunJobs).
class ZoneRegistry {
 public:
  struct Settings {
    uint64_t file_size, zone_size, capacity;
    uint32_t max_open;
  };
  // The file's zones: made with `settings` if the file has none yet. `made` tells which.
  std::shared_ptr<ZonedFile> Get(uint64_t dev, uint64_t ino, const Settings& settings, bool* made);

 private:
  std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<ZonedFile>> files_;
};

}  // namespace iotail::engine
