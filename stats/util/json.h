// JSON text: the one string escaper of every JSON writer in iotail (run summary, pctiles report,
// SLA verdicts). Escapes '"' and '\' with a backslash and control characters below 0x20 as
// \u00XX; every other byte (UTF-8 included) is copied as it is. Free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace iotail::stats {

// The text of `s` escaped for the inside of a JSON string, without the quotes.
std::string JsonEscape(std::string_view s);

// `s` as a JSON string: escaped and in double quotes.
std::string JsonString(std::string_view s);

}  // namespace iotail::stats
