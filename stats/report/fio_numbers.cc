#include "stats/report/fio_numbers.h"

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

}  // namespace iotail::stats
