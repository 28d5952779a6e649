// fio's zonemode=strided (zonesize, zonerange, zoneskip): a worker's I/O stays in one zone of
// zonerange bytes until zonesize bytes have been transferred there, then moves zonerange +
// zoneskip further on, back to the region's start once past the file's end (fio's
// setup_strided_zone_mode). Within a zone the worker's IoPattern runs over [0, zonerange) as if the
// zone were the whole file: sequential I/O wraps at the zone's end, random I/O has a random map of
// the zone, begun afresh every zonerange bytes (when zonesize > zonerange a zone is done several
// times over). The job's byte budget (size, io_size) is counted as without zones; the skipped
// bytes are not I/O. Only with one file per worker, as fio (which drops the zones otherwise).
// Allocation-free; one per worker.
#pragma once

#include <cstdint>

#include "engine/io_pattern.h"

namespace iotail::engine {

class ZoneStride {
 public:
  // start: the region's first byte; file_end: the byte after the file's last one (absolute).
  ZoneStride(uint64_t zone_size, uint64_t zone_range, uint64_t zone_skip, uint64_t start,
             uint64_t file_end)
      : size_(zone_size), range_(zone_range), skip_(zone_skip), start_(start), end_(file_end) {}

  // The next I/O of `pattern` (which runs over one zone), placed in the current zone; with `dir`,
  // in that direction (per-direction rate schedules).
  IoChoice Next(IoPattern& pattern, const stats::Direction* dir = nullptr) {
    if (zone_bytes_ >= size_) {
      zone_bytes_ = 0;
      base_ += range_ + skip_;
      if (start_ + base_ >= end_) base_ = 0;  // wrap to the start, as fio
      pattern.Restart();
    } else if (zone_bytes_ != 0 && zone_bytes_ % range_ == 0) {
      pattern.Restart();  // the zone again: its random map afresh
    }
    if (pattern.PassDone()) pattern.Restart();
    IoChoice c = dir != nullptr ? pattern.Next(*dir) : pattern.Next();
    if (start_ + base_ + c.offset + c.bs > end_) {
      // The last zone runs past the file's end: on to the first one.
      base_ = 0;
      zone_bytes_ = 0;
      pattern.Restart();
      c = dir != nullptr ? pattern.Next(*dir) : pattern.Next();
    }
    c.offset += start_ + base_;
    zone_bytes_ += c.bs;
    return c;
  }

 private:
  uint64_t size_, range_, skip_, start_, end_;
  uint64_t base_ = 0;        // the current zone's start, from start_
  uint64_t zone_bytes_ = 0;  // transferred in the current zone
};

}  // namespace iotail::engine
