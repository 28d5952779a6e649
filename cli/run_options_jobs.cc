// Jobs and groups on the command line, with fio's meanings: options before the first --name are
// global, each --name starts a job, stonewall/new_group/group_reporting/startdelay/loops and fio's
// switches that need no work in iotail (thread, fixedbufs, registerfiles). See run_options.h.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cli/job_file.h"
#include "cli/option_suggest.h"
#include "cli/option_table.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"
#include "stats/core/percentiles.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

// fio's switches that iotail always behaves as if set: accepted, checked, and without effect.
void AlwaysOn(std::string_view option, const std::string& v) { (void)ParseBool(v, option); }

const std::vector<OptionDef>& Table() {
  static const std::vector<OptionDef> table = {
      {"stonewall", true, "wait for the jobs before this one to finish; starts a new group",
       [](RunOptions& o, const std::string& v) { o.stonewall = ParseBool(v, "stonewall"); }},
      {"wait_for_previous", true, "same as --stonewall",
       [](RunOptions& o, const std::string& v) {
         o.stonewall = ParseBool(v, "wait_for_previous");
       }},
      {"new_group", true, "start a new reporting group (jobs still run together)",
       [](RunOptions& o, const std::string& v) { o.new_group = ParseBool(v, "new_group"); }},
      {"group_reporting", true, "report each reporting group as one job (summed over its jobs)",
       [](RunOptions& o, const std::string& v) {
         o.group_reporting = ParseBool(v, "group_reporting");
       }},
      {"wait_for", false, "start when the named earlier job has ended (no forward references)",
       [](RunOptions& o, const std::string& v) {
         if (v.empty()) throw UsageError("--wait_for: expected a job name");
         o.spec.wait_for = v;
       }},
      {"startdelay", false, "start this job this long after the others (bare = seconds)",
       [](RunOptions& o, const std::string& v) {
         o.spec.startdelay_ns = ParseTimeNs(v, "startdelay");
       }},
      {"loops", false, "passes over the region (default 1; not with time_based)",
       [](RunOptions& o, const std::string& v) { o.spec.loops = ParseU32(v, "loops"); }},
      {"cpus_allowed_policy", false, "shared (default: every worker on all CPUs) or split",
       [](RunOptions& o, const std::string& v) {
         if (v != "shared" && v != "split") {
           throw UsageError(
               fmt::format("--cpus_allowed_policy: expected shared or split, got '{}'", v));
         }
         o.spec.cpus_allowed_split = v == "split";
       }},
      {"random_distribution", false,
       "random (default) | zipf:THETA | pareto:H | normal:SIGMA, with an optional :CENTRE 0..1",
       [](RunOptions& o, const std::string& v) {
         o.spec.random_distribution = engine::ParseDistribution(v);
       }},
      {"norandommap", true, "random offsets with replacement (default: every block once a pass)",
       [](RunOptions& o, const std::string& v) {
         o.spec.norandommap = ParseBool(v, "norandommap");
       }},
      {"randrepeat", true, "1 (default): the same random offsets every run; 0: seeded by the time",
       [](RunOptions& o, const std::string& v) { o.randrepeat = ParseBool(v, "randrepeat"); }},
      {"kb_base", false,
       "1024 (default: k = 1024, KiB = 1000, as fio) or 1000 (k = 1000, KiB = 1024)",
       [](RunOptions&, const std::string& v) {
         if (v != "1000" && v != "1024")
           throw UsageError(fmt::format("--kb_base: expected 1000 or 1024, got '{}'", v));
       }},
      {"eta", false, "always|auto: the live lines (default); never: none (fio's status line)",
       [](RunOptions& o, const std::string& v) {
         if (v == "never") {
           o.live_format = stats::LiveFormat::kNone;
         } else if (v != "always" && v != "auto") {
           throw UsageError(fmt::format("--eta: expected always, auto or never, got '{}'", v));
         }
       }},
      {"eta_newline", false, "a live line every T (as --status_interval)",
       [](RunOptions& o, const std::string& v) {
         const uint64_t ns = ParseTimeNs(v, "eta_newline");
         if (ns < 1'000'000 || ns % 1'000'000 != 0) {
           throw UsageError("--eta_newline: expected whole milliseconds, at least 1ms");
         }
         o.status_interval_ms = ns / 1'000'000;
       }},
      {"thread", true, "accepted: iotail's workers are always threads",
       [](RunOptions&, const std::string& v) { AlwaysOn("thread", v); }},
      {"fixedbufs", true, "accepted: io_uring buffers are always registered when possible",
       [](RunOptions&, const std::string& v) { AlwaysOn("fixedbufs", v); }},
      {"registerfiles", true, "accepted: io_uring files are always registered when possible",
       [](RunOptions&, const std::string& v) { AlwaysOn("registerfiles", v); }},
      {"clat_percentiles", true, "accepted: clat percentiles are always reported",
       [](RunOptions&, const std::string& v) { AlwaysOn("clat_percentiles", v); }},
      {"lat_percentiles", true, "accepted: lat percentiles are reported when lat is measured",
       [](RunOptions&, const std::string& v) { AlwaysOn("lat_percentiles", v); }},
  };
  return table;
}

constexpr std::string_view kRunLevel[] = {
    "help", "output", "output_format", "minimal",    "live_format",      "status_interval",
    "sla",  "eta",    "eta_newline",   "prometheus", "prometheus_linger"};

struct Setting {
  std::string name, value;
  std::string origin;  // "FILE:LINE" in a job file, "" on the command line
};

[[noreturn]] void Unknown(const Setting& s) {
  const std::vector<std::string_view> names = RunOptionNames();
  const std::string why = UnknownOptionMessage(s.name, names);
  throw UsageError(s.origin.empty() ? why : s.origin + ": " + why);
}

// The command line in order: its settings (names normalised: dashes to underscores; values of
// flags filled in) and its job files.
struct CommandLine {
  std::vector<Setting> settings;
  std::vector<std::string> files;
  std::vector<std::string> sections;  // --section
  bool showcmd = false, parse_only = false;
};

CommandLine Tokenize(std::span<char* const> args) {
  CommandLine out;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "-h") arg = "--help";
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      out.files.push_back(arg);  // a job file
      continue;
    }
    arg = arg.substr(2);
    const size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    std::replace(name.begin(), name.end(), '-', '_');
    if (name == "showcmd" || name == "parse_only") {
      (name == "showcmd" ? out.showcmd : out.parse_only) = true;
      continue;
    }
    const OptionDef* def = FindRunOption(name);
    if (def == nullptr && name != "section") Unknown({name, "", ""});
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (def != nullptr && def->boolean) {
      value = "1";
    } else {
      if (i + 1 >= args.size()) throw UsageError(fmt::format("--{}: needs a value", name));
      value = args[++i];
    }
    if (name == "section") {
      out.sections.push_back(value);
      continue;
    }
    out.settings.push_back({std::move(name), std::move(value), ""});
  }
  return out;
}

RunOptions DefaultJob() {
  RunOptions o;
  o.percentiles.assign(stats::FioDefaultPercentiles().begin(),
                       stats::FioDefaultPercentiles().end());
  return o;
}

void Apply(RunOptions& o, const Setting& s) {
  const OptionDef* def = FindRunOption(s.name);
  if (def == nullptr) Unknown(s);
  if (s.origin.empty()) {
    def->apply(o, s.value);
  } else {
    try {
      def->apply(o, s.value);
    } catch (const UsageError& e) {
      throw UsageError(s.origin + ": " + e.what());
    }
  }
  o.given.emplace_back(s.name, s.value);
}

// One job from its settings in order (a later one wins); kb_base first, as fio parses it, so that
// it applies to every size of the job.
RunOptions BuildJob(const std::vector<const std::vector<Setting>*>& layers) {
  int kb_base = 1024;
  for (const auto* layer : layers) {
    for (const Setting& s : *layer) {
      if (s.name == "kb_base") kb_base = s.value == "1000" ? 1000 : 1024;
    }
  }
  ScopedKbBase scoped(kb_base);
  RunOptions job = DefaultJob();
  for (const auto* layer : layers) {
    for (const Setting& s : *layer) Apply(job, s);
  }
  return job;
}

}  // namespace

std::span<const OptionDef> JobControlOptionTable() { return Table(); }

bool IsRunLevelOption(std::string_view name) {
  return std::find(std::begin(kRunLevel), std::end(kRunLevel), name) != std::end(kRunLevel);
}

RunPlan ParseRunPlan(std::span<char* const> args) {
  RunPlan plan;
  plan.run = DefaultJob();
  const CommandLine cl = Tokenize(args);
  plan.parse_only = cl.parse_only;
  const JobFileEnvironment env = JobFileEnvironment::System();
  if (cl.showcmd) {
    if (cl.files.empty()) throw UsageError("--showcmd: give the job files to show");
    plan.showcmd = ShowCommand(cl.files, env, "iotail run");
    return plan;
  }
  std::vector<Setting> global;
  std::vector<std::vector<Setting>> jobs;
  for (const Setting& s : cl.settings) {
    if (IsRunLevelOption(s.name)) {
      Apply(plan.run, s);
    } else if (s.name == "name") {
      jobs.push_back({s});
    } else if (jobs.empty()) {
      global.push_back(s);
    } else {
      jobs.back().push_back(s);
    }
  }
  // Without --name and without job files, the command line is one job.
  plan.named_jobs = !jobs.empty() || !cl.files.empty();
  if (jobs.empty() && cl.files.empty()) jobs.emplace_back();
  for (const Setting& s : global) plan.global.emplace_back(s.name, s.value);
  for (const auto& own : jobs) {
    RunOptions job = BuildJob({&global, &own});
    for (const Setting& s : own) job.own.emplace_back(s.name, s.value);
    plan.jobs.push_back(std::move(job));
  }
  // Job files: the command line's global settings are the defaults beneath each file's own; a
  // file's global sections apply to the jobs after them in that file; the first job of every file
  // after the first waits for the jobs before it (fio's implicit stonewall).
  for (size_t f = 0; f < cl.files.size(); ++f) {
    std::vector<Setting> file_global;
    bool first_of_file = true;
    for (const JobFileSection& section : ParseJobFile(cl.files[f], env)) {
      std::vector<Setting> own;
      for (const JobFileSetting& js : section.settings) {
        if (IsRunLevelOption(js.name)) {
          throw UsageError(fmt::format(
              "{}: --{} is a setting of the whole run, given on the command line, not in a job "
              "file",
              js.origin, js.name));
        }
        own.push_back({js.name, js.value, js.origin});
      }
      if (section.global) {
        file_global.insert(file_global.end(), own.begin(), own.end());
        continue;
      }
      if (!cl.sections.empty() &&
          std::find(cl.sections.begin(), cl.sections.end(), section.name) == cl.sections.end()) {
        continue;
      }
      std::vector<Setting> head = {{"name", section.name, section.origin}};
      if (f > 0 && first_of_file) head.push_back({"stonewall", "1", section.origin});
      first_of_file = false;
      std::vector<Setting> all = head;
      all.insert(all.end(), own.begin(), own.end());
      RunOptions job = BuildJob({&global, &file_global, &all});
      for (const Setting& s : own) job.own.emplace_back(s.name, s.value);
      plan.jobs.push_back(std::move(job));
    }
  }
  if (plan.jobs.empty()) {
    throw UsageError(cl.sections.empty() ? "no job: the job files define no job section"
                                         : "no job: no section of the job files matches --section");
  }
  return plan;
}

RunOptions ParseRunOptions(std::span<char* const> args) {
  RunPlan plan = ParseRunPlan(args);
  if (plan.jobs.size() != 1) {
    throw UsageError(fmt::format("expected one job, got {}", plan.jobs.size()));
  }
  RunOptions job = std::move(plan.jobs.front());
  job.help = plan.run.help;
  job.output = plan.run.output;
  job.output_format = plan.run.output_format;
  job.live_format = plan.run.live_format;
  job.status_interval_ms = plan.run.status_interval_ms;
  job.sla = plan.run.sla;
  for (auto& g : plan.run.given) job.given.push_back(g);
  return job;
}

}  // namespace iotail::cli
