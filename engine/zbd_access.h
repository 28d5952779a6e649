// ZbdAccess: one worker's I/O under fio's zonemode=zbd, on the emulated zones of its file
// (engine/zoned_file.h). Each I/O the worker's IoPattern chooses is moved as fio's
// zbd_adjust_block moves it:
//   - writes go at the write pointer of the chosen zone (the zone of the chosen offset), opened
//     within max_open_zones (per file) and job_max_open_zones (per clone) or, when it cannot be,
//     another zone (fio's zbd_convert_to_open_zone: an open zone of the worker's range with room,
//     the next one that can be opened, an open one with room); a zone with less than the smallest
//     write left below its capacity is reset first, and so is one picked by zone_reset_threshold
//     (written bytes of the file at least that share of the worker's range) every
//     1/zone_reset_frequency writes; a write is cut to what is left below the zone's capacity; a
//     write that fills its zone closes it when it completes;
//   - reads stay below the write pointer (unless read_beyond_wp): a zone with too little data
//     sends a sequential read to the next zone with data, a random one to the nearest (either
//     side), its offset kept within the data; no zone with data ends the pass (fio's eof);
//   - trims reset their zone (no discard, as fio on emulated zones); a random trim of an empty zone
//     goes to the nearest zone with data;
//   - the first read of rw/randrw on a file without data becomes a write (zbd_adjust_ddir).
// Unlike fio it takes no lock per zone (zoned_file.h says why); where fio waits for its I/Os in
// flight to close zones (io_u_quiesce), Adjust says kWait and the worker reaps first (or, with
// nothing of its own in flight, yields while other workers' writes to the file complete).
// One per worker, used by its thread only; the ZonedFile is shared.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "engine/io_pattern.h"
#include "engine/job_spec.h"
#include "engine/zoned_file.h"
#include "stats/core/direction.h"

namespace iotail::engine {

class ZbdAccess {
 public:
  // The worker's range of the file: [offset, offset + size) (zone-aligned for writers, as fio's
  // zbd_zone_align_file_sizes leaves it); file_size: the file's whole size.
  ZbdAccess(const JobSpec& spec, std::shared_ptr<ZonedFile> file, uint64_t offset, uint64_t size,
            uint64_t file_size);

  enum class Verdict { kAccept, kEof, kWait };
  // fio's zbd_adjust_ddir: the direction for the next I/O of a job that mixes reads and writes.
  stats::Direction Direction(stats::Direction dir) const;
  // Moves `c` (offset, and length) as fio's zbd_adjust_block; own_in_flight: the worker's I/Os in
  // flight. kEof: the worker's pass is over; kWait: try `c` again once I/Os have completed.
  Verdict Adjust(IoChoice& c, uint32_t own_in_flight);
  // Where a sequential pattern goes on after the accepted I/O `c` (fio's last_pos): its end, or
  // for a write that reached its zone's capacity, the zone's end.
  uint64_t SequentialNext(const IoChoice& c) const;
  // An I/O adjusted by Adjust has completed (or failed): a write that reached its zone's capacity
  // closes the zone (fio's zbd_end_zone_io).
  void Completed(stats::Direction dir, uint64_t offset, uint32_t len);
  // A trim: its zone reset (fio's zbd_do_io_u_trim). 0, or -EINVAL when not at a zone's start.
  int Trim(uint64_t offset);
  // A new pass over the range (fio's zbd_file_reset): a writer restarts the reset countdown.
  void NewPass();
  // Zones this worker reset (fio's nr_zone_resets).
  uint64_t resets() const { return resets_; }

 private:
  bool Valid(uint64_t offset) const { return offset - offset_ < size_; }
  uint32_t Clamp(uint32_t z) const {
    return z < min_zone_ ? min_zone_ : z >= max_zone_ ? max_zone_ - 1 : z;
  }
  Verdict AdjustWrite(IoChoice& c, uint32_t own_in_flight);
  Verdict AdjustRead(IoChoice& c);
  Verdict AdjustTrim(IoChoice& c);
  // fio's zbd_convert_to_open_zone: *zone is where the write goes.
  Verdict ConvertToOpenZone(uint64_t offset, uint32_t own_in_flight, uint32_t* zone);
  bool HasRoom(uint32_t z) const { return file_->Wp(z) + min_bs_w_ <= file_->CapacityEnd(z); }
  // fio's zbd_find_zone: the next zone after `from` (and, random, the nearest before it) with at
  // least min_bytes of data; UINT32_MAX if none.
  uint32_t FindZone(uint32_t from, uint64_t min_bytes) const;

  std::shared_ptr<ZonedFile> file_;
  uint64_t offset_, size_, file_size_;
  uint32_t min_zone_, max_zone_;
  uint64_t min_bs_r_, min_bs_w_;
  bool random_, mixed_, writes_, read_beyond_wp_;
  uint32_t job_max_open_;
  double reset_threshold_;
  uint32_t reset_every_;           // fio's write_cnt start: 1 / zone_reset_frequency (0: no resets)
  std::atomic<uint32_t> open_{0};  // zones this worker opened (fio's td->num_open_zones)
  uint64_t resets_ = 0;
  // Tries in a row that waited for other workers' writes to complete.
  static constexpr uint32_t kMaxWaits = 1'000'000;
  uint32_t waits_ = 0;
};

}  // namespace iotail::engine
