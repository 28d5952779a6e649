// fio's dedupe_percentage, dedupe_mode, dedupe_working_set_percentage and dedupe_global: of the
// write buffers a worker fills (dedupe implies refill_buffers, as fio), `percentage`% repeat
// earlier contents and the rest are new. repeat: the last new buffer's contents again (from its
// generator's saved state); working_set: one of the first `unique_pages` new buffers, chosen at
// random (as fio's working set is the first pages its generator makes), or with dedupe_global one
// of `unique_pages` contents made from seeds every job shares (so the jobs' files share their
// duplicates). 100% makes every buffer the first one's. The bytes are iotail's generator's, not
// fio's: the proportions are fio's, not the data. Allocation-free after construction (which holds
// the working set's states); one per worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/buffer_fill.h"
#include "engine/io_pattern.h"

namespace iotail::engine {

class DedupeFiller {
 public:
  // seed: this worker's choice of which buffers repeat; ws_seed: the working set's seeds (shared
  // across jobs with dedupe_global).
  DedupeFiller(const DedupeSpec& spec, uint64_t unique_pages, uint64_t seed, uint64_t ws_seed)
      : spec_(spec),
        unique_pages_(unique_pages == 0 ? 1 : unique_pages),
        choose_(seed),
        ws_seed_(ws_seed) {
    if (spec_.working_set && !spec_.global) pages_.reserve(unique_pages_);
  }

  // Fills buf[0, len) with `content`, new random parts from `fresh` or repeated ones.
  void Fill(const BufferContent& content, char* buf, size_t len, FastRandom& fresh) {
    const bool all = spec_.percentage >= 100;
    if (all && have_prev_) {
      Repeat(content, buf, len);
      return;
    }
    if (!all && choose_.Below(100) < spec_.percentage) {
      if (spec_.working_set && spec_.global) {
        FastRandom page(ws_seed_ ^ (0x9e3779b97f4a7c15ull * (choose_.Next() % unique_pages_ + 1)));
        content.Fill(buf, len, page);
        return;
      }
      if (spec_.working_set && !pages_.empty()) {
        FastRandom page = pages_[choose_.Next() % pages_.size()];
        content.Fill(buf, len, page);
        return;
      }
      if (have_prev_) {
        Repeat(content, buf, len);
        return;
      }
    }
    prev_ = fresh;  // the state this new buffer starts from
    have_prev_ = true;
    if (pages_.size() < pages_.capacity()) pages_.push_back(fresh);
    content.Fill(buf, len, fresh);
  }

 private:
  void Repeat(const BufferContent& content, char* buf, size_t len) {
    FastRandom again = prev_;
    content.Fill(buf, len, again);
  }

  DedupeSpec spec_;
  uint64_t unique_pages_;
  FastRandom choose_;
  uint64_t ws_seed_;
  FastRandom prev_{0};
  std::vector<FastRandom> pages_;  // working_set: the first new buffers' states
  bool have_prev_ = false;
};

}  // namespace iotail::engine
