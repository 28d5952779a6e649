// Reading option text: the list arguments that percentile lists and SLA targets share ("50:99",
// "read:p99<=2ms,p50<=300us", or several arguments), and the numbers inside them. The callers
// keep their own error messages: these helpers only split and convert. Header-only free
// functions; thread-safe.
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace iotail::stats {

// Calls fn(item, arg) for every item of every argument in `args`, an item being the text between
// any two of the `separators` ("50:99,99.9" with ":," gives "50", "99", "99.9"). Empty items
// ("a,,b", a trailing ',', an empty argument) are passed on for the caller to reject.
template <typename Fn>
void ForEachListItem(std::span<const std::string> args, std::string_view separators, Fn&& fn) {
  for (const std::string& arg : args) {
    size_t start = 0;
    while (start <= arg.size()) {
      size_t end = arg.find_first_of(separators, start);
      if (end == std::string::npos) end = arg.size();
      fn(std::string_view(arg).substr(start, end - start), arg);
      start = end + 1;
    }
  }
}

// `text` split at every `separator`, empty items kept ("a,,b" gives "a", "", "b"): views into
// `text`, for lists whose positions mean something (fio's R,W,V lists, compare's REP,REP).
inline std::vector<std::string_view> SplitList(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The whole of `text` read as a finite double (std::from_chars' syntax: no spaces, no '+'), or
// nullopt.
inline std::optional<double> ParseFiniteDouble(std::string_view text) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

}  // namespace iotail::stats
