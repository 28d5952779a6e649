#include "engine/block_map.h"

#include <algorithm>
#include <bit>

namespace iotail::engine {

BlockMap::BlockMap(uint64_t blocks) : blocks_(blocks) {
  uint64_t n = blocks > 0 ? blocks : 1;
  for (;;) {
    entries_.push_back(n);
    levels_.emplace_back((n + 63) / 64, 0);
    if (levels_.back().size() == 1) break;
    n = levels_.back().size();
  }
  Clear();
}

void BlockMap::Clear() {
  done_ = 0;
  for (size_t l = 0; l < levels_.size(); ++l) {
    std::vector<uint64_t>& words = levels_[l];
    std::fill(words.begin(), words.end(), 0);
    const uint64_t used = entries_[l] & 63;
    if (used != 0) words.back() = ~uint64_t{0} << used;  // the bits past the end
  }
  if (blocks_ == 0) levels_[0][0] = ~uint64_t{0};
}

void BlockMap::Set(uint64_t block) {
  uint64_t index = block;
  for (size_t l = 0; l < levels_.size(); ++l) {
    uint64_t& word = levels_[l][index >> 6];
    word |= uint64_t{1} << (index & 63);
    if (word != ~uint64_t{0}) return;
    index >>= 6;  // that word is full: its bit in the level above
  }
}

uint64_t BlockMap::SetRun(uint64_t block, uint64_t count, uint64_t end) {
  uint64_t n = 0;
  for (uint64_t b = block; n < count && b < end && b < blocks_ && !IsSet(b); ++b, ++n) Set(b);
  done_ += n;
  return n;
}

// The first clear bit at or after `index` in level `level`, or kNone.
uint64_t BlockMap::FindFrom(size_t level, uint64_t index) const {
  const std::vector<uint64_t>& words = levels_[level];
  const uint64_t w = index >> 6;
  if (w >= words.size()) return kNone;
  const uint64_t clear = ~words[w] & (~uint64_t{0} << (index & 63));
  if (clear != 0) return (w << 6) + static_cast<uint64_t>(std::countr_zero(clear));
  if (level + 1 == levels_.size()) return kNone;  // the top level is one word
  // The next word of this level with a clear bit: the next clear bit of the level above.
  const uint64_t next = FindFrom(level + 1, w + 1);
  if (next == kNone) return kNone;
  return (next << 6) + static_cast<uint64_t>(std::countr_zero(~words[next]));
}

uint64_t BlockMap::NextFree(uint64_t block) const {
  if (Full()) return kNone;
  const uint64_t b = block < blocks_ ? FindFrom(0, block) : kNone;
  if (b != kNone && b < blocks_) return b;
  return FindFrom(0, 0);
}

}  // namespace iotail::engine
