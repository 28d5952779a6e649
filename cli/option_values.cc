// Values as fio writes them on a command line or in a job file: see cli/option_values.h.
#include "cli/option_values.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "stats/core/errors.h"
#include "stats/util/enum_names.h"

namespace iotail::cli {

using stats::UsageError;

double ParseNumber(std::string_view text, std::string_view option, size_t* used) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr == text.data() || v < 0 || !std::isfinite(v)) {
    throw UsageError(fmt::format("--{}: expected a number, got '{}'", option, text));
  }
  *used = static_cast<size_t>(ptr - text.data());
  return v;
}

namespace {

// The position of the operator when `text` is bare arithmetic (a number, an operator, then a
// number or '('), else npos. A dash is no operator here: it makes ranges (bsrange=4k-8k).
size_t BareArithmeticOperator(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  const size_t number_end = i;
  while (i < text.size() && text[i] == ' ') ++i;
  if (number_end == 0 || !std::isdigit(static_cast<unsigned char>(text[0])) || i >= text.size() ||
      std::string_view("*+^/%").find(text[i]) == std::string_view::npos) {
    return std::string_view::npos;
  }
  const size_t op = i++;
  while (i < text.size() && text[i] == ' ') ++i;
  if (i >= text.size() || !(std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '(')) {
    return std::string_view::npos;
  }
  return op;
}

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// fio's reading of bare arithmetic (see FioBareArithmetic).
std::string FioLeadingValue(std::string_view text, ValueSyntax syntax) {
  size_t digits = 0;
  while (digits < text.size() && IsDigit(text[digits])) ++digits;
  const std::string lead(text.substr(0, digits));
  if (syntax == ValueSyntax::kSize) {
    size_t letters = digits;
    while (letters < text.size() && IsAlpha(text[letters])) ++letters;
    return std::string(text.substr(0, letters));
  }
  size_t p = digits;
  while (p < text.size() && (IsDigit(text[p]) || text[p] == '+' || text[p] == '-')) ++p;
  if (p == text.size() || !IsAlpha(text[p])) return lead;
  std::string unit(text.substr(p));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.starts_with("us")) return lead + "us";
  if (unit.starts_with("ms")) return lead + "ms";
  if (unit == "s" || unit == "m" || unit == "h") return lead + unit;
  if (unit == "d") return lead + "d";
  return lead + "us";
}

}  // namespace

std::optional<std::string> FioBareArithmetic(std::string_view text, std::string_view option,
                                             ValueSyntax syntax, const ValueContext& context) {
  const size_t op = BareArithmeticOperator(text);
  if (op == std::string_view::npos) return std::nullopt;
  if (text.substr(0, op).find('.') != std::string_view::npos) {
    throw UsageError(fmt::format(
        "--{}: '{}' is arithmetic without parentheses, which fio 3.33 does not evaluate (it "
        "reads the digits before the '.'): write ({}) in a job file for the result",
        option, text, text));
  }
  std::string lead = FioLeadingValue(text, syntax);
  if (context.notes != nullptr) {
    context.notes->push_back(fmt::format(
        "--{}: '{}' is arithmetic without parentheses: fio 3.33 reads only its leading number, "
        "{}, and so does iotail (write ({}) in a job file for the result)",
        option, text, lead, text));
  }
  // Days, which iotail's times do not spell, as hours.
  if (lead.ends_with('d')) {
    uint64_t days = 0, hours = 0;
    const auto [end, ec] = std::from_chars(lead.data(), lead.data() + lead.size() - 1, days);
    if (ec != std::errc() || __builtin_mul_overflow(days, uint64_t{24}, &hours)) {
      throw UsageError(fmt::format("--{}: '{}' is too long", option, text));
    }
    lead = fmt::format("{}h", hours);
  }
  return lead;
}

uint32_t ParseU32(std::string_view text, std::string_view option, const ValueContext& context) {
  if (const auto lead = FioBareArithmetic(text, option, ValueSyntax::kSize, context)) {
    return ParseU32(*lead, option, context);
  }
  uint32_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    throw UsageError(fmt::format("--{}: expected a whole number, got '{}'", option, text));
  }
  return v;
}

std::optional<uint32_t> ParseZoneCount(std::string_view text, std::string_view option) {
  if (text.empty() || text.back() != 'z') return std::nullopt;
  uint32_t zones = 0;
  const std::string_view digits = text.substr(0, text.size() - 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), zones);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    throw stats::UsageError(
        fmt::format("--{}: '{}' is no zone count (expected N zones as Nz, e.g. 8z)", option, text));
  }
  return zones;
}

uint64_t ParseSize(std::string_view text, std::string_view option, const ValueContext& context) {
  if (const auto lead = FioBareArithmetic(text, option, ValueSyntax::kSize, context)) {
    return ParseSize(*lead, option, context);
  }
  size_t used = 0;
  const double v = ParseNumber(text, option, &used);
  std::string suffix(text.substr(used));
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // fio's rule: "KiB" (the IEC form, with its 'b') is powers of 1000 under the default kb_base
  // of 1024 (fio's compatibility mode) and of 1024 under kb_base=1000; every other form (k, K, kB,
  // KB, ki) goes by its first letter, powers of kb_base.
  const bool iec = suffix.size() == 3 && suffix[1] == 'i' && suffix[2] == 'b';
  const double base = iec ? (context.kb_base == 1024 ? 1000.0 : 1024.0) : context.kb_base;
  int power = -1;
  if (suffix.empty() || suffix == "b") power = 0;
  if (!suffix.empty() &&
      (suffix.size() == 1 || iec || suffix.substr(1) == "b" || suffix.substr(1) == "i")) {
    const size_t at = std::string_view("kmgtp").find(suffix[0]);
    if (at != std::string_view::npos) power = static_cast<int>(at) + 1;
  }
  if (power < 0) {
    throw UsageError(
        fmt::format("--{}: unknown size suffix in '{}' (use k, m, g, t, p)", option, text));
  }
  const double mult = std::pow(base, power);
  // Whole numbers exactly (a double loses digits past 2^53), anything past 2^64 refused.
  uint64_t whole = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + used, whole);
  const bool exact = ec == std::errc() && end == text.data() + used;
  // A fraction goes through the double (2^64 - 1 itself rounds up to 2^64 there: exact only).
  if (ec == std::errc::result_out_of_range || (!exact && v * mult >= 18446744073709551616.0)) {
    throw UsageError(fmt::format("--{}: '{}' is too large (at most 2^64 - 1 bytes)", option, text));
  }
  if (exact) {
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(whole, static_cast<uint64_t>(mult), &bytes)) {
      throw UsageError(
          fmt::format("--{}: '{}' is too large (at most 2^64 - 1 bytes)", option, text));
    }
    return bytes;
  }
  return static_cast<uint64_t>(v * mult);
}

std::string FioValueList(std::string_view text) {
  std::string out;
  for (size_t from = 0;;) {
    // The value: up to its first separator of any kind (fio's number and suffix stop there).
    const std::string_view rest = text.substr(from);
    out += rest.substr(0, rest.find_first_of(",:-/"));
    size_t next = rest.find(',');
    if (next == std::string_view::npos) next = rest.find(':');
    if (next == std::string_view::npos) next = rest.find('-');
    if (next == std::string_view::npos) return out;
    out += ',';
    from += next + 1;
  }
}

void ParseRate(std::string_view given, std::string_view option, bool bytes, engine::JobSpec& spec,
               const ValueContext& context) {
  const std::string list = FioValueList(given);
  const std::string_view text = list;
  auto one = [&](std::string_view part) -> double {
    if (bytes) {
      if (part.ends_with("/s")) part.remove_suffix(2);
      return static_cast<double>(ParseSize(part, option, context));
    }
    size_t used = 0;
    const double v = ParseNumber(part, option, &used);
    if (used != part.size()) {
      throw UsageError(fmt::format("--{}: expected I/Os per second, got '{}'", option, part));
    }
    return v;
  };
  auto set = [&](engine::RateLimit& limit, double v) {
    (bytes ? limit.bytes_per_s : limit.iops) = v;
  };
  // fio's 0 is no limit: rate=0 (or a direction's 0 in R,W) leaves that rate unlimited.
  const PerDirectionText parts = SplitPerDirection(text, option);
  if (parts.one) {
    set(spec.rates.limit, one(text));
    return;
  }
  // fio's third value is the trims' rate: a job with trims refuses it (JobSpec::Validate); for
  // one without, it changes nothing, as in fio.
  if (!parts.dirs[2].empty() && one(parts.dirs[2]) > 0) spec.rates.trim_given = true;
  if (!parts.dirs[0].empty()) set(spec.rates.dir[0], one(parts.dirs[0]));
  if (!parts.dirs[1].empty()) set(spec.rates.dir[1], one(parts.dirs[1]));
}

PerDirectionText SplitPerDirection(std::string_view text, std::string_view option) {
  PerDirectionText out;
  size_t comma = text.find(',');
  if (comma == std::string_view::npos) {
    out.dirs[0] = text;
    return out;
  }
  out.one = false;
  for (size_t d = 0;; ++d) {
    if (d == out.dirs.size()) {
      throw UsageError(fmt::format(
          "--{}: expected N, R,W or R,W,T (one value, or reads, writes and trims), got '{}'",
          option, text));
    }
    out.dirs[d] = text.substr(0, comma);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    comma = text.find(',');
  }
  return out;
}

uint64_t ParseTimeNs(std::string_view text, std::string_view option, const ValueContext& context) {
  if (const auto lead = FioBareArithmetic(text, option, ValueSyntax::kTime, context)) {
    return ParseTimeNs(*lead, option, context);
  }
  size_t used = 0;
  const double v = ParseNumber(text, option, &used);
  const std::string_view unit = text.substr(used);
  double mult;
  if (unit.empty() || unit == "s" || unit == "sec")
    mult = 1e9;
  else if (unit == "ms" || unit == "msec")
    mult = 1e6;
  else if (unit == "us" || unit == "usec")
    mult = 1e3;
  else if (unit == "ns" || unit == "nsec")
    mult = 1;
  else if (unit == "m" || unit == "min")
    mult = 60e9;
  else if (unit == "h")
    mult = 3600e9;
  else
    throw UsageError(
        fmt::format("--{}: unknown time unit in '{}' (use ns, us, ms, s, m, h)", option, text));
  if (v * mult >= 9.2e18) {  // ~292 years: past what the ns clocks hold
    throw UsageError(fmt::format("--{}: '{}' is too long", option, text));
  }
  return static_cast<uint64_t>(std::llround(v * mult));
}

bool ParseBool(std::string_view text, std::string_view option) {
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return false;
  throw UsageError(fmt::format("--{}: expected 0 or 1, got '{}'", option, text));
}

std::vector<int> ParseCpuList(std::string_view text, std::string_view option,
                              const ValueContext& context) {
  std::vector<int> cpus;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view part = text.substr(start, comma - start);
    const size_t dash = part.find('-');
    const uint32_t lo = ParseU32(part.substr(0, dash), option, context);
    const uint32_t hi =
        dash == std::string_view::npos ? lo : ParseU32(part.substr(dash + 1), option, context);
    if (hi < lo || hi >= 1024)
      throw UsageError(fmt::format("--{}: bad CPU range '{}'", option, part));
    for (uint32_t c = lo; c <= hi; ++c) cpus.push_back(static_cast<int>(c));
    start = comma + 1;
  }
  return cpus;
}

engine::NumaNodes ParseNumaNodes(std::string_view text, std::string_view option,
                                 const ValueContext& context) {
  engine::NumaNodes n;
  if (text == "all") {
    n.all = true;
  } else {
    n.nodes = ParseCpuList(text, option, context);
  }
  return n;
}

engine::NumaMemPolicy ParseNumaMemPolicy(std::string_view text, std::string_view option,
                                         const ValueContext& context) {
  using engine::NumaMemMode;
  static constexpr stats::EnumName<NumaMemMode> kModes[] = {
      {NumaMemMode::kDefault, "default"},
      {NumaMemMode::kPrefer, "prefer"},
      {NumaMemMode::kBind, "bind"},
      {NumaMemMode::kInterleave, "interleave"},
      {NumaMemMode::kLocal, "local"}};
  const size_t colon = text.find(':');
  const std::string_view nodes = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  const std::optional<NumaMemMode> mode = stats::ValueNamed(kModes, text.substr(0, colon));
  if (!mode) {
    throw UsageError(fmt::format(
        "--{}: expected default, prefer:NODE, bind:NODES, interleave:NODES or local, got '{}'",
        option, text));
  }
  engine::NumaMemPolicy p;
  p.mode = *mode;
  const bool takes_nodes = *mode != NumaMemMode::kDefault && *mode != NumaMemMode::kLocal;
  if (takes_nodes == nodes.empty()) {
    throw UsageError(fmt::format("--{}: {} nodes with {}, got '{}'", option,
                                 takes_nodes ? "give the" : "no", text.substr(0, colon), text));
  }
  if (takes_nodes) p.nodes = ParseNumaNodes(nodes, option, context);
  if (*mode == NumaMemMode::kPrefer && (p.nodes.all || p.nodes.nodes.size() != 1)) {
    throw UsageError(fmt::format("--{}: prefer takes one node, got '{}'", option, nodes));
  }
  return p;
}

}  // namespace iotail::cli
