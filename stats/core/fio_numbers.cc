#include "stats/core/fio_numbers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace iotail::stats {

std::string FioNumber(double value, FioUnits units) {
  static constexpr const char* kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  static constexpr const char* kDecimal[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  static constexpr const char* kCount[] = {"", "k", "M", "G", "T", "P", "E"};
  const char* const* names = units == FioUnits::kBinaryBytes    ? kBinary
                             : units == FioUnits::kDecimalBytes ? kDecimal
                                                                : kCount;
  const double base = units == FioUnits::kBinaryBytes ? 1024 : 1000;
  constexpr int kMaxDigits = 4;
  constexpr int kLastUnit = 6;
  if (!(value > 0)) value = 0;  // NaN too
  int unit = 0;
  while (value >= 10000 && unit < kLastUnit) {
    value /= base;
    ++unit;
  }
  const double whole = std::floor(value);
  int digits = 1;
  for (double v = whole; v >= 10 && digits < kMaxDigits; v /= 10) ++digits;
  // Unscaled: fio's integer, truncated. fio divides by whole milliseconds of runtime, iotail by
  // nanoseconds, so 4 I/Os in 1.00002 s are fio's 4 IOPS, not 3: a value within 0.001 below an
  // integer is that integer.
  if (unit == 0) return fmt::format("{:.0f}{}", std::floor(value + 0.001), names[unit]);
  return fmt::format("{:.{}f}{}", value, std::max(kMaxDigits - digits - 1, 0), names[unit]);
}

std::string FioWholeNumber(uint64_t value, int max_digits) {
  static constexpr const char* kPrefix[] = {"", "k", "M", "G", "T", "P", "E"};
  constexpr int kPrefixes = 7;
  const auto digits = [](uint64_t v) { return static_cast<int>(fmt::format("{}", v).size()); };
  int prefix = 0;
  uint64_t remainder = 0;
  bool divided = false;
  while (prefix < kPrefixes && digits(value) > max_digits) {
    remainder = value % 1000;
    value /= 1000;
    divided = true;
    ++prefix;
  }
  if (prefix >= kPrefixes) prefix = 0;
  if (!divided) return fmt::format("{}", value);
  const int room = max_digits - digits(value) - 1;  // decimals after the point
  if (room <= 0) {
    if (remainder >= 500) ++value;
    return fmt::format("{}{}", value, kPrefix[prefix]);
  }
  std::string decimals = fmt::format("{:.{}f}", static_cast<double>(remainder) / 1000, room);
  if (decimals[0] == '1') ++value;  // 0.9996 shown as 1.000: the whole part goes up
  return fmt::format("{}.{}{}", value, decimals.substr(2), kPrefix[prefix]);
}

}  // namespace iotail::stats
