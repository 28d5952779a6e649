#include "engine/explain/request_table.h"

#include <sys/sysmacros.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <iterator>

namespace iotail::engine {

namespace {

// blk_status_t (include/linux/blk_types.h) -> -errno as blk_status_to_errno gives it.
int32_t ErrnoOfStatus(int32_t status) {
  switch (status) {
    case 0:
      return 0;
    case 1:
      return -EOPNOTSUPP;
    case 2:
      return -ETIMEDOUT;
    case 3:
      return -ENOSPC;
    case 4:
      return -ENOLINK;
    case 5:
      return -EREMOTEIO;
    case 6:
      return -EBADE;
    case 7:
      return -ENODATA;
    case 8:
      return -EILSEQ;
    case 9:
      return -ENOMEM;
    case 11:
      return -EREMCHG;
    case 12:
      return -EAGAIN;
    case 13:
      return -EBUSY;
    case 14:
      return -ETOOMANYREFS;
    case 15:
      return -EOVERFLOW;
    case 16:
      return -ENODEV;
    case 17:
      return -ETIME;
    case 19:
      return -EINVAL;
    default:
      return -EIO;  // 10 (BLK_STS_IOERR) and any the kernel adds
  }
}

// The programs write entries while iotail reads them: every access is atomic (GCC's builtins:
// std::atomic_ref cannot load through a const reference before C++26).
template <typename T>
T Load(const T& field, int order = __ATOMIC_RELAXED) {
  return __atomic_load_n(&field, order);
}

}  // namespace

// A whole copy of `entry`, or nothing when a program was writing it.
std::optional<iotail_request_entry> RequestTable::Read(const iotail_request_entry& entry) {
  const uint32_t seq = Load(entry.seq, __ATOMIC_ACQUIRE);
  if (seq % 2 != 0) return std::nullopt;
  // Word by word through relaxed atomic loads (the programs may write meanwhile; the seq check
  // below tells whether they did).
  static_assert(sizeof(iotail_request_entry) == 64, "one cache line an entry");
  uint64_t words[sizeof(iotail_request_entry) / 8];
  const auto* from = reinterpret_cast<const uint64_t*>(&entry);
  for (size_t i = 0; i < std::size(words); ++i) words[i] = Load(from[i]);
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (Load(entry.seq) != seq) return std::nullopt;
  iotail_request_entry copy;
  std::memcpy(&copy, words, sizeof(copy));
  return copy;
}

// Marks `entry` taken if it still holds `copy`: seq and taken are its first eight bytes, swapped
// as one (a program that began writing another request there meanwhile moved seq: that request
// stays untaken, its own I/O's to take).
void RequestTable::MarkTaken(iotail_request_entry& entry, const iotail_request_entry& copy) {
  static_assert(offsetof(iotail_request_entry, seq) == 0 &&
                offsetof(iotail_request_entry, taken) == 4);
  auto* word = reinterpret_cast<uint64_t*>(&entry);
  uint64_t expected;
  const uint32_t untaken[2] = {copy.seq, 0};
  std::memcpy(&expected, untaken, sizeof(expected));
  const uint32_t taken[2] = {copy.seq, 1};
  uint64_t desired;
  std::memcpy(&desired, taken, sizeof(desired));
  __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

std::optional<BlockRequestEvent> RequestTable::Lookup(dev_t dev, uint64_t sector, bool take) const {
  if (entries_ == nullptr) return std::nullopt;
  const uint32_t kdev = (major(dev) << 20) | minor(dev);
  const uint32_t home = iotail_request_index(kdev, sector, mask_);
  // The first entry holding the place is its latest request (publish_request never writes a place
  // after an entry holding it).
  for (uint32_t k = 0; k < IOTAIL_REQUEST_PROBES; ++k) {
    iotail_request_entry& entry = entries_[home + k];
    if (Load(entry.dev) != kdev || Load(entry.sector) != sector) continue;
    std::optional<iotail_request_entry> copy = Read(entry);
    if (!copy || copy->dev != kdev || copy->sector != sector || copy->complete_ns == 0) {
      return std::nullopt;
    }
    if (take) MarkTaken(entry, *copy);
    return Decode(*copy, dev);
  }
  return std::nullopt;
}

BlockRequestEvent RequestTable::Decode(const iotail_request_entry& copy, dev_t dev) {
  BlockRequestEvent e;
  e.dev = dev;
  e.sector = copy.sector;
  e.nr_sector = copy.nr_sector;
  e.op = copy.op <= IOTAIL_OP_OTHER ? static_cast<BlockOp>(copy.op) : BlockOp::kOther;
  e.error = (copy.flags & IOTAIL_BLOCK_STATUS) ? ErrnoOfStatus(copy.error) : copy.error;
  e.cpu = copy.cpu;
  e.entered_ns = copy.entered_ns;
  e.issue_ns = copy.issue_ns;
  e.complete_ns = copy.complete_ns;
  e.partial = (copy.flags & IOTAIL_BLOCK_PARTIAL) != 0;
  e.requeued = (copy.flags & IOTAIL_BLOCK_REQUEUED) != 0;
  e.ambiguous = (copy.flags & IOTAIL_BLOCK_AMBIGUOUS) != 0;
  return e;
}

uint64_t RequestTable::Untaken() const {
  if (entries_ == nullptr) return 0;
  uint64_t n = 0;
  for (uint64_t i = 0; i <= mask_; ++i) {
    const iotail_request_entry& entry = entries_[i];
    if (Load(entry.complete_ns) != 0 && Load(entry.taken) == 0) ++n;
  }
  return n;
}

}  // namespace iotail::engine
