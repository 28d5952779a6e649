// Direction: the data direction of a latency sample, numbered as fio's `ddir` log column.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace iotail::stats {

enum class Direction : uint8_t { kRead = 0, kWrite = 1, kTrim = 2 };
inline constexpr int kDirectionCount = 3;

constexpr std::string_view DirectionName(Direction d) {
  switch (d) {
    case Direction::kRead:
      return "read";
    case Direction::kWrite:
      return "write";
    case Direction::kTrim:
      return "trim";
  }
  return "?";
}

constexpr int DirectionIndex(Direction d) { return static_cast<int>(d); }

}  // namespace iotail::stats
