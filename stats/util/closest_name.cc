#include "stats/util/closest_name.h"

#include <algorithm>
#include <cctype>

namespace iotail::stats {

namespace {

char Fold(char c) {
  return c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring).
size_t Distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = Fold(a[i - 1]) == Fold(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && Fold(a[i - 1]) == Fold(b[j - 2]) && Fold(a[i - 2]) == Fold(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::string ClosestName(std::string_view name, std::span<const std::string_view> valid) {
  const size_t allowed = name.size() <= 4 ? 1 : name.size() <= 8 ? 2 : 3;
  std::string_view best;
  size_t best_distance = allowed + 1;
  for (std::string_view v : valid) {
    const size_t dist = Distance(name, v);
    if (dist < best_distance) {
      best = v;
      best_distance = dist;
    }
  }
  return std::string(best);
}

}  // namespace iotail::stats
