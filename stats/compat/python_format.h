// Python's text forms of numbers and times, reproduced exactly for the drop-in compatibility with
// fio's Python post-processors: repr() of a float and time.ctime(). Free functions; thread-safe.
#pragma once

#include <string>

namespace iotail::stats {

// Python's repr(float): the shortest digits that read back to the same double, always with a
// ".0" for integral values, and exponent form (1e-05, 1.5e+16) where Python uses it.
std::string PythonFloatRepr(double value);

// Python's time.ctime(seconds) in local time: "Sun Nov 22 02:43:50 2026".
std::string PyCtime(double seconds);

}  // namespace iotail::stats
