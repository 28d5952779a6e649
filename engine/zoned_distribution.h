// fio's zoned random distributions (random_distribution=zoned:A/S:A/S... and zoned_abs:A/S...):
// A% of the accesses go to the next S of the region (S a % of it for zoned, a size for zoned_abs),
// the zones laid one after another from the region's start; within a zone, offsets are uniform
// (with replacement: fio implies norandommap for any skewed distribution). Parsing follows fio's
// zone_split_ddir: the access shares must add up to 100 (one left out gets what remains, 0 when
// the others make 100), sizes left out share what remains of 100%, more than 100% is an error;
// one list for every direction (fio's separate lists after ',' are refused). Value types; the
// table is built once per worker and sampled without allocating.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "engine/size_parser.h"

namespace iotail::engine {

struct AccessZone {
  uint32_t access_pct = 0;
  uint64_t size = 0;  // a % of the region (zoned) or bytes (zoned_abs)
};

// The list after "zoned:" or "zoned_abs:" (parse_size for zoned_abs sizes; without one zoned_abs
// is refused). Throws UsageError naming --random_distribution.
std::vector<AccessZone> ParseAccessZones(std::string_view list, bool absolute,
                                         const SizeParser& parse_size);

// Blocks [first, first + count) of one zone.
struct BlockRange {
  uint64_t first = 0, count = 1;
};

// For each v of 0..99, the blocks of the zone that the v-th percent of the accesses goes to, in a
// region of `blocks` blocks of `block_bytes` each (fio's integer arithmetic). Throws UsageError
// when zoned_abs zones reach past the region.
std::array<BlockRange, 100> ZoneRanges(const std::vector<AccessZone>& zones, bool absolute,
                                       uint64_t blocks, uint64_t block_bytes);

}  // namespace iotail::engine
