// BlockMap: which blocks of a region a random pass has already done, as fio's random map (its
// axmap): one bit per block of the minimum block size, with summary levels above it (a bit per
// full word of the level below) so that the next free block after any block is found in a few
// word reads however full the map is. Used when a random pass mixes block sizes (bssplit,
// bsrange): an I/O starts at a free block and is trimmed to the free blocks that follow it, so a
// pass does every block exactly once and writes exactly the region's size. Memory: one bit per
// block plus about 1/63 of that. Not thread-safe (one per worker); allocation only in the
// constructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace iotail::engine {

class BlockMap {
 public:
  static constexpr uint64_t kNone = UINT64_MAX;

  explicit BlockMap(uint64_t blocks);

  uint64_t blocks() const { return blocks_; }
  uint64_t done() const { return done_; }
  bool Full() const { return done_ == blocks_; }
  bool IsSet(uint64_t block) const { return (levels_[0][block >> 6] >> (block & 63) & 1) != 0; }
  // Marks up to `count` blocks from `block` (which must be free) as done, stopping before the
  // first block already done and at `end` (exclusive); returns how many were marked (>= 1).
  uint64_t SetRun(uint64_t block, uint64_t count, uint64_t end);
  // The first free block at or after `block`, else the first free block from 0 (fio's
  // axmap_next_free wraps the same way); kNone when the map is full.
  uint64_t NextFree(uint64_t block) const;
  // Every block free again (a new pass).
  void Clear();

 private:
  void Set(uint64_t block);
  uint64_t FindFrom(size_t level, uint64_t index) const;

  uint64_t blocks_;
  uint64_t done_ = 0;
  // levels_[0]: a bit per block; levels_[k + 1]: a bit per word of levels_[k], set when that word
  // is full. Bits past the end of a level are kept set, so a last word fills up like the others.
  // The top level is one word.
  std::vector<std::vector<uint64_t>> levels_;
  std::vector<uint64_t> entries_;  // entries (bits) per level
};

}  // namespace iotail::engine
