// Direction: the data direction of a latency sample, numbered as fio's `ddir` log column, and its
// names ("read", "write", "trim") as the reports print them and the options take them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "stats/util/enum_names.h"

namespace iotail::stats {

enum class Direction : uint8_t { kRead = 0, kWrite = 1, kTrim = 2 };
inline constexpr int kDirectionCount = 3;

inline constexpr EnumName<Direction> kDirectionNames[] = {
    {Direction::kRead, "read"}, {Direction::kWrite, "write"}, {Direction::kTrim, "trim"}};

constexpr std::string_view DirectionName(Direction d) { return NameOf(kDirectionNames, d); }

// The direction called `name` ("read", "write" or "trim"), or nullopt.
constexpr std::optional<Direction> DirectionNamed(std::string_view name) {
  return ValueNamed(kDirectionNames, name);
}

constexpr int DirectionIndex(Direction d) { return static_cast<int>(d); }

}  // namespace iotail::stats
