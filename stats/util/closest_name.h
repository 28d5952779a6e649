// ClosestName: the valid name a mistyped one most likely meant, by Damerau-Levenshtein distance
// (optimal string alignment; case-insensitive, '-' equal to '_'), when it is close enough (at most
// 1 edit for names up to 4 letters, 2 up to 8, 3 beyond), else "". DidYouMean wraps it for
// messages. Pure functions; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stats/util/enum_names.h"

namespace iotail::stats {

std::string ClosestName(std::string_view name, std::span<const std::string_view> valid);

// ", did you mean X?" for the closest name of an EnumName table, or "".
template <typename Enum, size_t N>
std::string DidYouMean(const EnumName<Enum> (&table)[N], std::string_view name) {
  std::vector<std::string_view> names;
  for (const EnumName<Enum>& entry : table) names.push_back(entry.name);
  const std::string closest = ClosestName(name, names);
  return closest.empty() ? "" : ", did you mean " + closest + "?";
}

}  // namespace iotail::stats
