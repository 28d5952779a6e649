#include "engine/zbd_access.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "stats/core/errors.h"

namespace iotail::engine {

using stats::UsageError;

ZbdAccess::ZbdAccess(const JobSpec& spec, std::shared_ptr<ZonedFile> file, uint64_t offset,
                     uint64_t size, uint64_t file_size)
    : file_(std::move(file)),
      offset_(offset),
      size_(size),
      file_size_(file_size),
      min_zone_(file_->ZoneOf(offset)),
      max_zone_(file_->ZoneOf(offset + size)),
      min_bs_r_(spec.SizesOf(stats::Direction::kRead).min),
      min_bs_w_(spec.SizesOf(stats::Direction::kWrite).min),
      random_(spec.IsRandom()),
      mixed_(spec.HasReads() && spec.HasWrites()),
      writes_(spec.HasWrites()),
      read_beyond_wp_(spec.zones.read_beyond_wp),
      job_max_open_(spec.zones.job_max_open),
      reset_threshold_(spec.zones.reset_threshold),
      reset_every_(spec.zones.reset_frequency > 0
                       ? static_cast<uint32_t>(std::min(1.0 / spec.zones.reset_frequency,
                                                        static_cast<double>(UINT_MAX)))
                       : 0) {
  if (max_zone_ <= min_zone_) max_zone_ = min_zone_ + 1;  // a range inside one zone (reads)
  max_zone_ = std::min(max_zone_, file_->zones());
  NewPass();
}

void ZbdAccess::NewPass() {
  if (writes_ && reset_every_ != 0) file_->ResetCountdown(reset_every_);
}

stats::Direction ZbdAccess::Direction(stats::Direction dir) const {
  if (dir != stats::Direction::kRead || !mixed_) return dir;
  if (file_->DataBytes() != 0 || read_beyond_wp_) return dir;
  return stats::Direction::kWrite;  // nothing to read yet
}

ZbdAccess::Verdict ZbdAccess::Adjust(IoChoice& c, uint32_t own_in_flight) {
  if (file_->ZoneOf(c.offset) >= file_->zones()) return Verdict::kEof;  // past the last zone
  switch (c.dir) {
    case stats::Direction::kWrite:
      return AdjustWrite(c, own_in_flight);
    case stats::Direction::kRead:
      return read_beyond_wp_ ? Verdict::kAccept : AdjustRead(c);
    case stats::Direction::kTrim:
      return AdjustTrim(c);
  }
  return Verdict::kAccept;
}

ZbdAccess::Verdict ZbdAccess::AdjustWrite(IoChoice& c, uint32_t own_in_flight) {
  uint32_t z = file_->ZoneOf(c.offset);
  if (!file_->Open(z, &open_, job_max_open_)) {
    const Verdict v = ConvertToOpenZone(c.offset, own_in_flight, &z);
    if (v != Verdict::kAccept) return v;
  }
  waits_ = 0;
  // zone_reset_threshold/frequency: this zone is reset before the write.
  const bool reset =
      reset_every_ != 0 &&
      static_cast<double>(file_->DataBytes()) >= static_cast<double>(size_) * reset_threshold_ &&
      file_->Countdown(reset_every_);
  // Counted in flight before its bytes are taken, so that a worker that finds every open zone
  // full also finds a write in flight that will close one (and waits rather than ending).
  file_->writes_in_flight.fetch_add(1, std::memory_order_acq_rel);
  const ZonedFile::Reservation r = file_->Reserve(z, c.bs, min_bs_w_, reset);
  if (r.reset) ++resets_;
  if (!Valid(r.offset) || r.offset + r.bytes > file_size_ || r.bytes == 0) {
    file_->Close(z);  // fio: "invalid WP value", the request dropped
    file_->writes_in_flight.fetch_sub(1, std::memory_order_acq_rel);
    return Verdict::kEof;
  }
  c.offset = r.offset;
  c.bs = static_cast<uint32_t>(r.bytes);
  return Verdict::kAccept;
}

ZbdAccess::Verdict ZbdAccess::ConvertToOpenZone(uint64_t offset, uint32_t own_in_flight,
                                                uint32_t* zone) {
  const bool limits = file_->max_open() != 0 || job_max_open_ != 0;
  uint32_t n = file_->OpenCount();
  uint32_t zi = Clamp(file_->ZoneOf(offset));
  if (limits && n != 0) {
    // A quasi-random open zone of this worker's range, from the offset's place in the range.
    const auto pick = static_cast<uint32_t>((offset - offset_) * n / size_);
    bool found = false;
    for (uint32_t i = 0; i < n && !found; ++i) {
      const uint32_t cand = file_->OpenAt((pick + i) % n);
      if (min_zone_ <= cand && cand < max_zone_) {
        zi = cand;
        found = true;
      }
    }
    if (!found) return Verdict::kEof;  // fio: no candidate zone
    if (HasRoom(zi)) {
      *zone = zi;
      return Verdict::kAccept;
    }
  } else if (!limits && HasRoom(zi)) {
    *zone = zi;
    return Verdict::kAccept;
  }
  n = file_->OpenCount();
  const bool wait_close = n == max_zone_ - min_zone_ ||
                          (file_->max_open() != 0 && n == file_->max_open()) ||
                          (job_max_open_ != 0 && open_.load() == job_max_open_);
  if (wait_close && own_in_flight != 0) return Verdict::kWait;  // fio's io_u_quiesce
  for (bool retry = true;;) {
    // The next zones of the range, wrapping, that are not open and can be opened.
    uint32_t z = zi;
    for (uint64_t i = size_ / file_->zone_size(); i > 0; --i) {
      ++z;
      if (z >= file_->zones() || !Valid(file_->Start(z))) z = min_zone_;
      if (file_->IsOpen(z)) continue;
      if (file_->Open(z, &open_, job_max_open_)) {
        *zone = z;
        return Verdict::kAccept;
      }
    }
    // An open zone of the range with room.
    n = file_->OpenCount();
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t cand = file_->OpenAt(i);
      if (cand >= min_zone_ && cand < max_zone_ && HasRoom(cand)) {
        *zone = cand;
        return Verdict::kAccept;
      }
    }
    // Writes in flight (other workers') will close zones; a worker that ended with writes never
    // completed (an engine failure) would hold them forever: after so many tries, give up.
    const bool in_flight = file_->writes_in_flight.load(std::memory_order_acquire) != 0;
    if (in_flight && ++waits_ < kMaxWaits) return Verdict::kWait;
    if (!retry) return Verdict::kEof;  // fio: did not open another zone
    retry = false;
  }
}

void ZbdAccess::Completed(stats::Direction dir, uint64_t offset, uint32_t len) {
  if (dir != stats::Direction::kWrite) return;
  const uint32_t z = file_->ZoneOf(offset);
  if (z < file_->zones() && offset + len >= file_->CapacityEnd(z)) file_->Close(z);
  // Only after the close: a worker that sees no write in flight sees the zone closed.
  file_->writes_in_flight.fetch_sub(1, std::memory_order_acq_rel);
}

uint32_t ZbdAccess::FindZone(uint32_t from, uint64_t min_bytes) const {
  const auto has = [&](uint32_t z) { return file_->Start(z) + min_bytes <= file_->Wp(z); };
  // Forwards from the next zone; random I/O also looks back, nearest first.
  for (int64_t up = int64_t{from} + 1, down = int64_t{from} - 1;
       up < max_zone_ || down >= min_zone_; ++up, --down) {
    if (up < max_zone_) {
      if (has(static_cast<uint32_t>(up))) return static_cast<uint32_t>(up);
    } else if (!random_) {
      break;
    }
    if (random_ && down >= min_zone_ && has(static_cast<uint32_t>(down))) {
      return static_cast<uint32_t>(down);
    }
  }
  return UINT32_MAX;
}

ZbdAccess::Verdict ZbdAccess::AdjustRead(IoChoice& c) {
  const uint32_t orig = file_->ZoneOf(c.offset);
  uint32_t z = orig;
  uint64_t range = file_->Wp(z) - file_->Start(z);
  if (range < min_bs_r_ || (!random_ && c.offset + min_bs_r_ > file_->Wp(z))) {
    z = FindZone(z, min_bs_r_);
    if (z == UINT32_MAX) return Verdict::kEof;
    range = file_->Wp(z) - file_->Start(z);
    if (!random_) c.offset = file_->Start(z);
  }
  // Within the zone's data, as large as it may be, keeping the random spread.
  if (range <= c.bs) {
    c.offset = file_->Start(z);
  } else if (random_) {
    c.offset = file_->Start(z) +
               ((c.offset - file_->Start(orig)) % (range - c.bs)) / min_bs_r_ * min_bs_r_;
  }
  const uint64_t len = std::min<uint64_t>(c.bs, file_->Wp(z) - c.offset) / min_bs_r_ * min_bs_r_;
  if (len == 0) return Verdict::kEof;
  c.bs = static_cast<uint32_t>(len);
  return Verdict::kAccept;
}

ZbdAccess::Verdict ZbdAccess::AdjustTrim(IoChoice& c) {
  const uint32_t z = file_->ZoneOf(c.offset);
  if (!random_ || file_->Wp(z) > file_->Start(z)) return Verdict::kAccept;
  const uint32_t other = FindZone(z, 1);
  if (other == UINT32_MAX) return Verdict::kEof;
  c.offset = file_->Start(other);
  return Verdict::kAccept;
}

uint64_t ZbdAccess::SequentialNext(const IoChoice& c) const {
  const uint64_t end = c.offset + c.bs;
  if (c.dir != stats::Direction::kWrite) return end;
  // fio's setup_zbd_zone_mode: at a zone's capacity, a sequential writer goes on at its end.
  const uint32_t z = file_->ZoneOf(end - 1);
  return end >= file_->CapacityEnd(z) ? file_->End(z) : end;
}

int ZbdAccess::Trim(uint64_t offset) {
  const uint32_t z = file_->ZoneOf(offset);
  if (z >= file_->zones() || offset != file_->Start(z)) return -EINVAL;
  if (file_->Reset(z)) ++resets_;
  return 0;
}

// JobSpec::Validate's part for zonemode=zbd, as fio checks it (zbd.c), and what iotail does not
// emulate yet.
void JobSpec::ValidateZbd() const {
  if (zones.size == 0) {
    throw UsageError(
        "--zonesize: must be given with --zonemode=zbd (fio: specifying the zone size is "
        "mandatory for a regular file or block device)");
  }
  if (zones.size < 512) throw UsageError("--zonesize: at least 512 bytes with --zonemode=zbd");
  if (zones.capacity > zones.size) {
    throw UsageError(
        fmt::format("--zonecapacity: {} is larger than --zonesize {}", zones.capacity, zones.size));
  }
  const uint64_t capacity = zones.capacity != 0 ? zones.capacity : zones.size;
  if (HasWrites() && SizesOf(stats::Direction::kWrite).max > zones.size) {
    throw UsageError(fmt::format(
        "--bs: a write larger than a zone (--zonesize={}; fio: I/O buflen exceeds zone size)",
        zones.size));
  }
  if (HasWrites() && capacity < SizesOf(stats::Direction::kWrite).min) {
    throw UsageError(fmt::format("--zonecapacity: {} is smaller than the smallest write ({} bytes)",
                                 capacity, SizesOf(stats::Direction::kWrite).min));
  }
  if (HasTrims() && (MinBlockSize() != zones.size || MaxBlockSize() != zones.size)) {
    throw UsageError(fmt::format(
        "--bs: a trim with --zonemode=zbd resets one zone: its block size must be --zonesize ({}), "
        "one size (fio: trim block size is not the zone size)",
        zones.size));
  }
  auto not_yet = [](const char* what) {
    throw UsageError(fmt::format("{} with --zonemode=zbd: not supported yet", what));
  };
  if (blocks.bs_min != 0 || blocks.bs_min_w != 0 || !blocks.bssplit.empty() ||
      !blocks.bssplit_w.empty()) {
    not_yet("--bsrange/--bssplit (mixed block sizes)");
  }
  if (verify.kind != VerifyKind::kNone) not_yet("--verify");
  if (zones.skip != 0) not_yet("--zoneskip");
  if (rates.Limited()) not_yet("--rate/--rate_iops");
  if (ioengine == EngineKind::kNbd || ioengine == EngineKind::kNull) {
    not_yet("--ioengine=nbd/null (zones are emulated on files and block devices)");
  }
  if (rw_modifier != 0) not_yet("--rw=MODE:N");
  if (files_per_clone ? filenames.size() > numjobs : filenames.size() > 1) {
    not_yet("more than one file per job clone");
  }
}

}  // namespace iotail::engine
