// Per-command I/O priorities, fio's cmdprio options of its libaio and io_uring engines
// (fio 3.33's engines/cmdprio.c): a share of each direction's I/Os is issued with a priority of
// its own (the request's aio_reqprio or the SQE's ioprio) rather than the job's (prio/prioclass,
// or none). CmdPrioOptions holds the options as given (a plain value in the job's spec); a CmdPrio
// is built from them per worker before the run (it allocates) and then only chooses: Choose() is
// a few compares over fixed tables, no allocation, no lock, safe on the I/O path. Each direction
// with cmdprio has a list of the priorities its I/Os can take, the job's own first (index 0), as
// fio's clat_prio list: per-priority latencies are recorded by that index. Not thread-safe (each
// worker owns its own).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/size_parser.h"
#include "stats/core/direction.h"

namespace iotail::engine {

// fio's ioprio value: the class (0 taken as best effort, as fio's ioprio_value) in bits 13-15, the
// level in bits 0-2.
constexpr uint16_t IoprioValue(int cls, int level) {
  return static_cast<uint16_t>((cls == 0 ? 2 : cls) << 13 | level);
}
constexpr int IoprioClass(uint32_t value) { return static_cast<int>(value >> 13); }
constexpr int IoprioLevel(uint32_t value) { return static_cast<int>(value & 7); }

// One cmdprio_bssplit entry: I/Os of `bs` bytes, `perc` percent of them at `prio` (-1: the
// cmdprio_class and cmdprio options' priority).
struct CmdPrioSplit {
  uint64_t bs = 0;
  uint32_t perc = 0;
  int32_t prio = -1;
  bool operator==(const CmdPrioSplit&) const = default;
};

// The options as given, per direction (reads [0], writes [1]; fio's take "R,W" or one value for
// both). class 0: not given (fio's default, the real-time class); bssplit: its entries with a
// non-zero share, sorted by block size as fio sorts them.
struct CmdPrioOptions {
  std::array<uint32_t, 2> percentage{};
  std::array<uint32_t, 2> cls{};
  std::array<uint32_t, 2> level{};
  std::array<std::vector<CmdPrioSplit>, 2> bssplit;
  bool bssplit_given = false;
  bool Any() const { return bssplit_given || percentage[0] != 0 || percentage[1] != 0; }
};

// fio 3.33's cmdprio_bssplit syntax: entries BS/PERC[/CLASS/LEVEL] joined by ':', "R,W" per
// direction (one list: both). As fio's sscanf: more fields after LEVEL are ignored (3.33 has no
// priority hints), a share over 100 counts as 100, a class over 3 as 3, a level over 7 as 7.
// UsageError naming --cmdprio_bssplit on what fio refuses (no block size, BS/PERC/CLASS without a
// level, more than 64 entries, a block size's shares over 100). Each block size is read by
// `parse_size` as fio reads it (str_to_decimal under the job's kb_base: 4KiB is 4000 bytes under
// the default 1024); without one, k, m and g as powers of 1024.
void ParseCmdPrioBssplit(std::string_view text, CmdPrioOptions& out,
                         const SizeParser& parse_size = {});

class CmdPrio {
 public:
  // `job_ioprio`: the job's priority (prio/prioclass as fio's ioprio_value; 0 when not set);
  // `reads`/`writes`: whether the job has each direction (a direction it lacks gets no list).
  CmdPrio(const CmdPrioOptions& options, uint16_t job_ioprio, bool reads, bool writes);

  struct Choice {
    uint16_t ioprio;  // the request's priority value (the job's own when not chosen)
    uint16_t index;   // in Priorities(dir): 0 for the job's own value
    bool chosen;      // drawn for a priority of its own (fio then sets libaio's aio_reqprio)
  };
  // The priority of an I/O of `bs` bytes in direction d, from `percent` (uniform in [0, 100)).
  Choice Choose(stats::Direction d, uint64_t bs, uint32_t percent) const;
  // The priorities direction d's I/Os can take (empty: no per-priority latencies for it).
  std::span<const uint16_t> Priorities(stats::Direction d) const;
  bool Active() const { return active_; }

 private:
  struct Prio {
    uint32_t perc;  // cumulative share within its block size
    uint16_t ioprio;
    uint16_t index;
  };
  struct BsPrios {
    uint64_t bs;
    uint32_t total;  // the block size's whole share
    std::vector<Prio> prios;
  };
  struct Dir {
    std::vector<uint16_t> values;  // the clat_prio list: values[0] is the job's priority
    uint32_t percentage = 0;       // percentage mode
    Prio perc_prio{};
    std::vector<BsPrios> bs;  // bssplit mode
  };
  uint16_t IndexOf(Dir& dir, uint16_t value);
  std::array<Dir, 2> dirs_;
  bool bssplit_ = false;
  bool active_ = false;
  uint16_t job_ioprio_ = 0;
};

}  // namespace iotail::engine
