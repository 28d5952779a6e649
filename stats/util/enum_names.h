// EnumName tables: the names of an enum's values, in one constant table per enum, for the code that
// parses a name into a value (options, log fields) and prints a value back. A value may have
// several names (aliases such as "usec" for "us"): its first entry is the one printed. The tables
// are static constants owned by the enum's header or source; the lookups are constexpr free
// functions, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace iotail::stats {

template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

// The value called `name` in `table`, or nullopt.
template <typename Enum, size_t N>
constexpr std::optional<Enum> ValueNamed(const EnumName<Enum> (&table)[N], std::string_view name) {
  for (const EnumName<Enum>& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

// The first name of `value` in `table`, or "?" when it has none.
template <typename Enum, size_t N>
constexpr std::string_view NameOf(const EnumName<Enum> (&table)[N], Enum value) {
  for (const EnumName<Enum>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

}  // namespace iotail::stats
