#include "cli/sweep_options.h"

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/option_values.h"
#include "stats/core/errors.h"

namespace iotail::cli {
namespace {

using stats::UsageError;
using enum ValueType;

double ParsePositive(const OptionValue& v) {
  size_t used = 0;
  const double n = ParseNumber(v.text, v.option, &used);
  if (used != v.text.size() || !(n > 0)) {
    throw UsageError(fmt::format("--{}: expected a positive number, got '{}'", v.option, v.text));
  }
  return n;
}

template <double SweepSettings::*Field>
void SetRate(RunSettings& o, const OptionValue& v) {
  o.driver.sweep.*Field = ParsePositive(v);
}

const std::vector<OptionDef>& SweepRows() {
  static const std::vector<OptionDef> rows = {
      {"step_time", kTime,
       [](RunSettings& o, const OptionValue& v) {
         if (v.number < 100'000'000) {
           throw UsageError(
               fmt::format("--{}: expected at least 100ms, got '{}'", v.option, v.text));
         }
         o.driver.sweep.step_ns = static_cast<uint64_t>(v.number);
       },
       "recorded time of each step", "4s", Also(), Choices(), OptionScope::kRun},
      {"ramp_time", kTime,
       [](RunSettings& o, const OptionValue& v) {
         o.driver.sweep.ramp_ns = static_cast<uint64_t>(v.number);
       },
       "run but record nothing before each step (the job's ramp_time)", "1s", Also(), Choices(),
       OptionScope::kRun},
      {"resolution", kText,
       [](RunSettings& o, const OptionValue& v) {
         OptionValue number = v;
         if (number.text.ends_with('%')) number.text.pop_back();
         const double pct = ParsePositive(number);
         if (pct >= 100) {
           throw UsageError(
               fmt::format("--{}: expected a percentage below 100, got '{}'", v.option, v.text));
         }
         o.driver.sweep.resolution = pct / 100;
       },
       "stop bisecting when the bounds are this close", "2%", Also(), Choices(), OptionScope::kRun,
       0, UINT32_MAX, "PCT"},
      {"start_rate", kText, SetRate<&SweepSettings::start_rate>, "first rate of the probe", "100",
       Also(), Choices(), OptionScope::kRun, 0, UINT32_MAX, "IOPS"},
      {"min_rate", kText, SetRate<&SweepSettings::min_rate>,
       "lowest rate tried when the first step fails", "10", Also(), Choices(), OptionScope::kRun, 0,
       UINT32_MAX, "IOPS"},
      {"max_rate", kText, SetRate<&SweepSettings::max_rate>, "highest rate tried", "10000000",
       Also(), Choices(), OptionScope::kRun, 0, UINT32_MAX, "IOPS"},
      {"retries", kCount,
       [](RunSettings& o, const OptionValue& v) {
         o.driver.sweep.retries = static_cast<int>(v.number);
       },
       "run a step whose latency failed again, N times at most; the rate fails only if every run "
       "fails (a stall of the host does not end the probe)",
       "1", Also(), Choices(), OptionScope::kRun, 0, 100},
  };
  return rows;
}

constexpr const char* kSweepDescription =
    "Finds the highest rate (IOPS, open loop, latency from each I/O's intended start) at which "
    "every --sla target holds over a whole step: an exponential probe (doubling from --start_rate "
    "until a step fails, or quartering while the first fails, down to --min_rate), a bisection, a "
    "confirming step. The workload and the target are iotail run's options (iotail run --help), "
    "--sla TARGET ([read|write|trim|all:]p99<=10ms, mean<2ms, max<1s; repeatable) among them; "
    "each step sets rate_iops (the rate R split over the job clones, per direction as fio's), "
    "runtime, time_based and ramp_time. --output-format=json gives one JSON document instead of "
    "the table (--output FILE: to FILE); --write_hist_log=P writes each step's histogram logs as "
    "P.stepN_clat_hist.1.log. A stopped sweep (a signal, a step's I/O errors) still reports every "
    "finished step and the highest rate that passed so far.\n"
    "Exit status: 0 with a capacity; 3 when no rate meets the SLA; 2 on bad options; 1 when a "
    "step counted I/O errors or an output failed; 128 + signal when stopped.";

}  // namespace

std::span<const OptionGroup> SweepOptionGroups() {
  static const std::vector<OptionGroup> groups = {{"iotail sweep's own options", SweepRows()}};
  return groups;
}

void SweepOrderCheck(const SweepSettings& s) {
  if (s.min_rate > s.start_rate || s.start_rate > s.max_rate) {
    throw UsageError(
        fmt::format("--min_rate ({}), --start_rate ({}) and --max_rate ({}) must be in that order",
                    s.min_rate, s.start_rate, s.max_rate));
  }
}

namespace {

// `text`'s paragraphs (lines) wrapped before column 100.
std::string WrapSweepText(std::string_view text) {
  std::string out;
  size_t column = 0;
  while (!text.empty()) {
    const size_t end = text.find_first_of(" \n");
    const std::string_view word = text.substr(0, end);
    if (column > 0 && column + 1 + word.size() >= 100) {
      out += '\n';
      column = 0;
    } else if (column > 0) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    if (end != std::string_view::npos && text[end] == '\n') {
      out += '\n';
      column = 0;
    }
    text = end == std::string_view::npos ? "" : text.substr(end + 1);
  }
  return out + "\n";
}

}  // namespace

std::string SweepUsage() {
  return fmt::format(
      "usage: iotail sweep --sla TARGET [sweep options] [iotail run options] [JOBFILE.fio...]\n\n"
      "{}{}\nand every option of iotail run (iotail run --help).\n",
      WrapSweepText(kSweepDescription), OptionsHelp(SweepOptionGroups()));
}

CommandDoc SweepDoc() {
  CommandDoc head;
  head.page = "iotail-sweep";
  head.summary = std::string(Commands()[1].summary);
  head.synopsis = {"iotail sweep --sla TARGET [options] [JOBFILE.fio...]"};
  head.description = kSweepDescription;
  return DriverDoc(std::move(head), SweepOptionGroups());
}

}  // namespace iotail::cli
