// FioNumber: a rate or size written as fio's text output writes it (fio 3.33, checked against its
// output in tests/stats/report/fio_numbers_test.cc): at most four digits, scaled by 1024
// (B, KiB, MiB, ...) or 1000 (B, kB, MB, ... ; counts: "", k, M, ...) until below 10000; then
// rounded to as many decimals as fit in four digits ("9.99KiB", "19.1GiB", "40.0k", "448KiB");
// unscaled, the whole part, truncated as fio's integer is ("99" for 99.95 IOPS, "1535B"). Never
// "0.0MiB" for a small rate. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace iotail::stats {

enum class FioUnits { kBinaryBytes, kDecimalBytes, kCount };

// value (bytes or a count; negative or NaN reads as 0) with its unit, e.g. "400KiB".
std::string FioNumber(double value, FioUnits units);

// A whole number as fio's text writes a latency's min and max (`min=1436, max=3944.3k`): as it is
// while it has at most max_digits digits; else divided by 1000 (k, M, G, ...) until it has, the
// remainder shown as decimals in what room is left (max_digits counts the point), rounded up into
// the whole part when it rounds to 1 ("9999999" at 6 digits is "10000.0k", as fio writes it).
std::string FioWholeNumber(uint64_t value, int max_digits = 6);

}  // namespace iotail::stats
