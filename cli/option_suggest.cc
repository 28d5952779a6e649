#include "cli/option_suggest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "stats/util/closest_name.h"

namespace iotail::cli {

namespace {

constexpr std::string_view kFioOptions[] = {
#include "cli/fio_option_names.inc"
};

}  // namespace

std::string ClosestName(std::string_view name, std::span<const std::string_view> valid) {
  return stats::ClosestName(name, valid);
}

bool IsFioOption(std::string_view name) {
  return std::binary_search(std::begin(kFioOptions), std::end(kFioOptions), name);
}

std::string UnknownOptionMessage(std::string_view name, std::span<const std::string_view> valid) {
  if (IsFioOption(name)) {
    return fmt::format(
        "'--{}' is a fio option that iotail does not support (`iotail run --help` lists those it "
        "does)",
        name);
  }
  const std::string closest = ClosestName(name, valid);
  if (closest.empty()) return fmt::format("unknown option '--{}' (see --help)", name);
  return fmt::format("unknown option '--{}', did you mean --{}?", name, closest);
}

}  // namespace iotail::cli
