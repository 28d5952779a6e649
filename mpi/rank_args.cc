#include "mpi/rank_args.h"

#include <fmt/format.h>

#include <charconv>

#include "cli/option_values.h"
#include "stats/core/errors.h"

namespace iotail::mpi {

namespace {

// "--log-hist-msec" and "--log_hist_msec" alike.
std::string Canonical(std::string name) {
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

uint64_t WholeMs(const std::string& value, const char* option) {
  const uint64_t ns = cli::ParseTimeNs(value, option);
  if (ns < 1'000'000 || ns % 1'000'000 != 0) {
    throw stats::UsageError(fmt::format("--{}: expected whole milliseconds", option));
  }
  return ns / 1'000'000;
}

}  // namespace

std::string Substitute(std::string text, int rank, const std::string& host) {
  for (const auto& [key, value] :
       {std::pair<std::string, std::string>{"{rank}", std::to_string(rank)}, {"{host}", host}}) {
    for (size_t p = text.find(key); p != std::string::npos; p = text.find(key, p + value.size())) {
      text.replace(p, key.size(), value);
    }
  }
  return text;
}

RankArgs MakeRankArgs(const std::vector<std::string>& args, int rank, const std::string& host) {
  RankArgs out;
  if (args.empty() || args[0] != "run") {
    throw stats::UsageError("usage: mpirun -np N iotail-mpi run [the options of iotail run]");
  }
  out.run_args.push_back("run");
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string arg = Substitute(args[i], rank, host);
    if (arg.rfind("--", 0) != 0) {
      out.run_args.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = Canonical(arg.substr(2, eq == std::string::npos ? eq : eq - 2));
    // The value: after '=', or the next word for the options that take one.
    auto value = [&]() -> std::string {
      if (eq != std::string::npos) return arg.substr(eq + 1);
      if (i + 1 >= args.size())
        throw stats::UsageError(fmt::format("--{}: expected a value", name));
      return Substitute(args[++i], rank, host);
    };
    if (name == "help" || name == "h") {
      out.help = true;
    } else if (name == "log_per_rank") {
      out.log_per_rank = eq == std::string::npos || arg.substr(eq + 1) != "0";
    } else if (name == "write_hist_log") {
      out.hist_prefix = value();
    } else if (name == "sla") {
      out.sla.push_back(value());
    } else if (name == "live_format") {
      out.live_format = value();
      if (out.live_format != "text" && out.live_format != "json" && out.live_format != "none") {
        throw stats::UsageError(
            fmt::format("--live-format: expected text, json or none, got '{}'", out.live_format));
      }
    } else if (name == "status_interval") {
      out.status_interval_ms = WholeMs(value(), "status_interval");
    } else if (name == "prometheus") {
      out.prometheus = value();
    } else if (name == "prometheus_linger") {
      out.prometheus_linger_ns = cli::ParseTimeNs(value(), "prometheus_linger");
    } else if (name == "setup_timeout") {
      out.setup_timeout_ns = cli::ParseTimeNs(value(), "setup_timeout");
      if (out.setup_timeout_ns == 0)
        throw stats::UsageError("--setup_timeout: expected more than 0");
    } else if (name == "start_at") {
      throw stats::UsageError("--start_at: iotail-mpi chooses the common start itself");
    } else {
      if (name == "log_hist_msec") {
        const std::string v = eq != std::string::npos ? arg.substr(eq + 1)
                              : i + 1 < args.size()   ? args[i + 1]
                                                      : "";
        uint64_t ms = 0;
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
        if (ec != std::errc() || p != v.data() + v.size() || ms == 0) {
          throw stats::UsageError(
              fmt::format("--log_hist_msec: expected milliseconds, got '{}'", v));
        }
        out.log_hist_msec = ms;
      }
      out.run_args.push_back(arg);
    }
  }
  if (out.log_per_rank && out.hist_prefix.empty()) {
    throw stats::UsageError("--log_per_rank: give --write_hist_log=PREFIX too");
  }
  if (out.status_interval_ms % out.log_hist_msec != 0) {
    throw stats::UsageError(fmt::format(
        "--status-interval: it must be a multiple of --log_hist_msec ({})", out.log_hist_msec));
  }
  // Each rank: its own logs only when asked, under PREFIX.rank<R>; no live lines of its own (rank
  // 0 shows the cluster's); --log_hist_msec given so the clock keeps the cluster's period.
  // Global options: before any --name, so they apply to every job.
  std::vector<std::string> global = {"--live_format=none",
                                     fmt::format("--log_hist_msec={}", out.log_hist_msec)};
  if (out.log_per_rank) {
    global.push_back(fmt::format("--write_hist_log={}.rank{}", out.hist_prefix, rank));
  }
  out.run_args.insert(out.run_args.begin() + 1, global.begin(), global.end());
  return out;
}

}  // namespace iotail::mpi
