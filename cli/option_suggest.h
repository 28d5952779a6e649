// Suggestions for mistyped names: the closest of the valid names by Damerau-Levenshtein distance
// (case-insensitive, dashes equal to underscores), when it is close enough to be what was meant
// (at most 1 edit for names up to 4 letters, 2 up to 8, 3 beyond). Pure functions; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace iotail::cli {

// The closest valid name, or "" when none is close enough.
std::string ClosestName(std::string_view name, std::span<const std::string_view> valid);

// Whether `name` (underscores) is an option or alias of fio 3.33 (cli/fio_option_names.inc).
bool IsFioOption(std::string_view name);

// The message for an option `iotail run` does not know: "'--X' is a fio option that iotail does not
// support" for fio's own, else "unknown option '--X'", with ", did you mean --Y?" when a valid
// option is close.
std::string UnknownOptionMessage(std::string_view name, std::span<const std::string_view> valid);

}  // namespace iotail::cli
