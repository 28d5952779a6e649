#include "engine/zoned_distribution.h"

#include <fmt/format.h>

#include <charconv>
#include <string>

#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

constexpr uint64_t kMissing = UINT64_MAX;

[[noreturn]] void Bad(std::string_view list, const std::string& why) {
  throw stats::UsageError(fmt::format("--random_distribution: {} in '{}'", why, list));
}

uint64_t Percent(std::string_view text, std::string_view list) {
  if (text.empty()) return kMissing;
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v > 100) {
    Bad(list, fmt::format("expected a percentage from 0 to 100, got '{}'", text));
  }
  return v;
}

}  // namespace

std::vector<AccessZone> ParseAccessZones(std::string_view list, bool absolute,
                                         const SizeParser& parse_size) {
  if (list.find(',') != std::string_view::npos) {
    Bad(list, "separate zone lists per direction (after ',') are not supported; give one list");
  }
  if (absolute && !parse_size) Bad(list, "zoned_abs is not supported here");
  std::vector<uint64_t> access, size;
  for (size_t at = 0; at <= list.size();) {
    const size_t end = std::min(list.find(':', at), list.size());
    const std::string_view item = list.substr(at, end - at);
    const size_t slash = item.find('/');
    if (item.empty() || slash == std::string_view::npos) {
      Bad(list, fmt::format("expected ACCESS%/SIZE items separated by ':', got '{}'", item));
    }
    access.push_back(Percent(item.substr(0, slash), list));
    const std::string_view s = item.substr(slash + 1);
    if (absolute) {
      if (s.empty()) Bad(list, "zoned_abs needs a size for every zone");
      size.push_back(parse_size(s, "--random_distribution"));
    } else {
      size.push_back(Percent(s, list));
    }
    if (access.size() > 256) Bad(list, "more than 256 zones");
    at = end + 1;
  }
  // fio's zone_split_ddir: the given shares must make 100 (more is an error, as is less).
  uint64_t given = 0, given_size = 0, missing = 0, missing_size = 0;
  for (size_t i = 0; i < access.size(); ++i) {
    (access[i] == kMissing ? missing : given) += access[i] == kMissing ? 1 : access[i];
    if (!absolute)
      (size[i] == kMissing ? missing_size : given_size) += size[i] == kMissing ? 1 : size[i];
  }
  if (given > 100 || given_size > 100) Bad(list, "the percentages add up to more than 100");
  if (given < 100) {
    Bad(list, fmt::format("the access percentages add up to {}, not 100", given));
  }
  std::vector<AccessZone> zones;
  for (size_t i = 0; i < access.size(); ++i) {
    AccessZone z;
    z.access_pct = static_cast<uint32_t>(access[i] == kMissing ? 0 : access[i]);
    z.size =
        size[i] != kMissing
            ? size[i]
            : (missing_size == 1 && access.size() == 1 ? 100 : (100 - given_size) / missing_size);
    zones.push_back(z);
  }
  return zones;
}

std::array<BlockRange, 100> ZoneRanges(const std::vector<AccessZone>& zones, bool absolute,
                                       uint64_t blocks, uint64_t block_bytes) {
  std::array<BlockRange, 100> by_share{};
  size_t share = 0;
  uint64_t start = 0;  // % of the region, or bytes
  for (const AccessZone& z : zones) {
    BlockRange range;
    if (absolute) {
      const uint64_t unit = block_bytes > 0 ? block_bytes : 1;
      range.first = start / unit;
      range.count = z.size / unit;
      if (range.first + range.count > blocks) {
        throw stats::UsageError(fmt::format(
            "--random_distribution: the zoned_abs zones reach {} bytes, past the region's {}",
            start + z.size, blocks * unit));
      }
    } else {
      range.first = start * blocks / 100;
      range.count = blocks * z.size / 100;
    }
    if (range.count == 0) range.count = 1;
    start += z.size;
    for (uint32_t i = 0; i < z.access_pct && share < by_share.size(); ++i)
      by_share[share++] = range;
  }
  return by_share;
}

}  // namespace iotail::engine
