// `iotail pctiles --compat fio-histo-log-pctiles ARGS`: the arguments of fio's
// fio-histo-log-pctiles.py, parsed as its argparse parser does, then stats::RunFioPctilesCompat.
//
// Accepted: --fio-version {2,3}, --bucket-groups N, --bucket-bits N, --percentiles P [P ...],
// --time-quantum N (seconds), --log-hist-msec N, --output-unit msec|usec|nsec, -h/--help, and one
// or more files. As in argparse: `--opt value` or `--opt=value`, unique prefixes of option names
// (`--perc`), the last of a repeated option wins, `--percentiles` takes every following
// non-option argument (so `--` must separate it from the files), `-5` counts as a value, the files
// form one run of arguments (a second run is an "unrecognized arguments" error). Errors throw
// UsageError with argparse's wording (exit status 2).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "stats/compat/fio_pctiles_compat.h"
#include "stats/core/errors.h"

namespace iotail::cli {
namespace {

using stats::UsageError;

constexpr const char* kCompatUsage =
    "usage: iotail pctiles --compat fio-histo-log-pctiles [-h] [--fio-version {2,3}]\n"
    "         [--bucket-groups BUCKET_GROUPS] [--bucket-bits BUCKET_BITS]\n"
    "         [--percentiles PCTILES_WANTED [PCTILES_WANTED ...]]\n"
    "         [--time-quantum TIME_QUANTUM] [--log-hist-msec LOG_HIST_MSEC]\n"
    "         [--output-unit OUTPUT_UNIT]\n"
    "         file_list [file_list ...]\n";

constexpr const char* kHelp =
    "\nEmulates fio's fio-histo-log-pctiles.py exactly (same output, same numbers), and also\n"
    "reads the inputs that script fails on (trim, coarse and per_job_logs=0 logs, bursts).\n\n"
    "positional arguments:\n"
    "  file_list             list of files, preceded by \" -- \" if necessary\n\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  --fio-version {2,3}   fio version (default=3)\n"
    "  --bucket-groups N     fio histogram bucket groups (default=29)\n"
    "  --bucket-bits N       fio histogram buckets-per-group bits (default=6)\n"
    "  --percentiles P [P ...]\n"
    "                        percentiles to report (default 0 50 95 99 100)\n"
    "  --time-quantum N      time quantum in seconds (default=1)\n"
    "  --log-hist-msec N     log_hist_msec value in fio job file\n"
    "  --output-unit UNIT    msec|usec|nsec (default usec)\n";

constexpr const char* kOptions[] = {"--help",          "--fio-version", "--bucket-groups",
                                    "--bucket-bits",   "--percentiles", "--time-quantum",
                                    "--log-hist-msec", "--output-unit"};

std::string Strip(std::string_view s) {
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// std::from_chars over all of `text`: whether it read the whole of it into `value`.
template <typename Number>
bool ReadWhole(std::string_view text, Number& value) {
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

// argparse's error for a value its type function refuses ("invalid int value: '1x'").
[[noreturn]] void ThrowInvalidValue(std::string_view option, std::string_view type,
                                    std::string_view text) {
  throw UsageError("argument " + std::string(option) + ": invalid " + std::string(type) +
                   " value: '" + std::string(text) + "'");
}

// Python int(): optional sign, digits with single underscores between them, outer whitespace.
int64_t ParsePyInt(std::string_view option, std::string_view text) {
  std::string s = Strip(text), digits;
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  bool ok = i < s.size();
  for (; i < s.size() && ok; ++i) {
    if (s[i] >= '0' && s[i] <= '9') {
      digits.push_back(s[i]);
    } else {
      ok = s[i] == '_' && !digits.empty() && i + 1 < s.size() && s[i + 1] != '_';
    }
  }
  int64_t v = 0;
  if (!ok || !ReadWhole(digits, v)) ThrowInvalidValue(option, "int", text);
  return negative ? -v : v;
}

// Python float(): decimal or exponent form, inf/infinity/nan, outer whitespace, '+' sign.
double ParsePyFloat(std::string_view option, std::string_view text) {
  std::string s = Strip(text);
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  size_t start = 0;
  bool negative = false;
  if (!lower.empty() && (lower[0] == '+' || lower[0] == '-')) {
    negative = lower[0] == '-';
    start = 1;
  }
  std::string_view body(lower.data() + start, lower.size() - start);
  double v = 0;
  bool ok = false;
  if (body == "inf" || body == "infinity") {
    v = HUGE_VAL, ok = true;
  } else if (body == "nan") {
    v = std::nan(""), ok = true;
  } else if (!body.empty() && body.find_first_not_of("0123456789.e+-_") == std::string::npos) {
    std::string clean;
    for (size_t i = 0; i < body.size(); ++i) {
      if (body[i] != '_') {
        clean.push_back(body[i]);
      } else if (i == 0 || i + 1 == body.size() || !std::isdigit(body[i - 1]) ||
                 !std::isdigit(body[i + 1])) {
        clean.assign(1, 'x');  // an underscore not between digits
        break;
      }
    }
    ok = ReadWhole(clean, v);
  }
  if (!ok) ThrowInvalidValue(option, "float", text);
  return negative ? -v : v;
}

// argparse's classification: a value ('A') or an option string ('O').
bool IsValue(std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-') return true;
  if (arg.find(' ') != std::string_view::npos) return true;
  // A negative number: -\d+ or -\d*\.\d+ (the parser has no options that look like numbers).
  std::string_view rest = arg.substr(1);
  const size_t dot = rest.find('.');
  auto all_digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dot == std::string_view::npos) return all_digits(rest);
  return all_digits(rest.substr(0, dot)) && dot + 1 < rest.size() &&
         all_digits(rest.substr(dot + 1));
}

// The full option name for `name` (exact, or a unique prefix of a long option).
std::string ResolveOption(std::string_view name) {
  if (name == "-h") return "--help";
  std::vector<std::string> matches;
  for (const char* o : kOptions) {
    if (name == o) return o;
    if (name.size() > 2 && std::string_view(o).starts_with(name)) matches.emplace_back(o);
  }
  if (matches.size() == 1) return matches[0];
  if (matches.size() > 1) {
    std::string list;
    for (const auto& m : matches) list += (list.empty() ? "" : ", ") + m;
    throw UsageError("ambiguous option: " + std::string(name) + " could match " + list);
  }
  throw UsageError("unrecognized arguments: " + std::string(name));
}

}  // namespace

int PctilesCompatCommand(CommandArgs args, std::ostream& out, std::ostream& err) {
  stats::FioPctilesCompatOptions options;
  std::vector<std::string> files;
  std::vector<std::string> unrecognized;
  bool files_taken = false, after_dashdash = false;
  for (size_t i = 1; i < args.size();) {
    const std::string_view arg = args[i];
    if (after_dashdash || IsValue(arg)) {
      // A run of values: the file list (once), else unrecognized.
      std::vector<std::string> run;
      while (i < args.size()) {
        const std::string_view a = args[i];
        if (!after_dashdash && a == "--") {
          after_dashdash = true;
          ++i;
          continue;
        }
        if (!after_dashdash && !IsValue(a)) break;
        run.emplace_back(a);
        ++i;
      }
      if (!files_taken && !run.empty()) {
        files = std::move(run);
        files_taken = true;
      } else {
        unrecognized.insert(unrecognized.end(), run.begin(), run.end());
      }
      continue;
    }
    if (arg == "--") {
      after_dashdash = true;
      ++i;
      continue;
    }
    ++i;
    const size_t eq = arg.find('=');
    const std::string name = ResolveOption(
        arg.starts_with("--") && eq != std::string_view::npos ? arg.substr(0, eq) : arg);
    std::optional<std::string> inline_value;
    if (arg.starts_with("--") && eq != std::string_view::npos) inline_value = arg.substr(eq + 1);
    if (name == "--help") {
      out << kCompatUsage << kHelp;
      return 0;
    }
    // Values of this option: one (or, for --percentiles, all that follow up to an option or --).
    std::vector<std::string> values;
    if (inline_value) {
      values.push_back(*inline_value);
    } else {
      while (i < args.size() && args[i] != std::string_view("--") && IsValue(args[i])) {
        values.emplace_back(args[i++]);
        if (name != "--percentiles") break;
      }
    }
    if (values.empty()) {
      throw UsageError("argument " + name + ": expected " +
                       (name == "--percentiles" ? "at least one argument" : "one argument"));
    }
    if (name == "--percentiles") {
      options.percentiles.clear();
      for (const auto& v : values) options.percentiles.push_back(ParsePyFloat(name, v));
    } else if (name == "--output-unit") {
      options.output_unit = stats::ParseFioPctilesUnit(Strip(values[0]));
    } else {
      const int64_t v = ParsePyInt(name, values[0]);
      if (name == "--fio-version") {
        if (v != 2 && v != 3) {
          throw UsageError("argument --fio-version: invalid choice: " + std::to_string(v) +
                           " (choose from 2, 3)");
        }
        options.fio_version = static_cast<int>(v);
      } else if (name == "--bucket-groups" || name == "--bucket-bits") {
        if (v < -1000 || v > 1000) throw UsageError("argument " + name + ": out of range");
        (name == "--bucket-groups" ? options.bucket_groups : options.bucket_bits) =
            static_cast<int>(v);
      } else if (name == "--time-quantum") {
        options.time_quantum_s = v;
      } else if (name == "--log-hist-msec") {
        options.log_hist_msec = v;
      }
    }
  }
  if (!unrecognized.empty()) {
    std::string list;
    for (const auto& u : unrecognized) list += (list.empty() ? "" : " ") + u;
    throw UsageError("unrecognized arguments: " + list);
  }
  if (files.empty()) throw UsageError("the following arguments are required: file_list");
  options.files = std::move(files);
  return stats::RunFioPctilesCompat(options, out, err);
}

}  // namespace iotail::cli
