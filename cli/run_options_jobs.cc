// Jobs and groups on the command line, with fio's meanings: options before the first --name are
// global, each --name starts a job; the rows of
// stonewall/new_group/group_reporting/description/startdelay/loops, of fio's switches that need no
// work in iotail (thread, fixedbufs, registerfiles), of those that turn fio's measurements off
// (gtod_reduce, disable_*: iotail measures regardless) and of the options of fio's profiles, which
// fio accepts in any job file and ignores there. See run_options.h.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cli/job_file.h"
#include "cli/option_suggest.h"
#include "cli/option_table.h"
#include "cli/option_values.h"
#include "cli/run_options.h"
#include "stats/core/errors.h"
#include "stats/core/percentiles.h"
#include "stats/core/steady_state.h"
#include "stats/util/option_text.h"

namespace iotail::cli {

using stats::UsageError;

namespace {

// fio's blockalign=int[,int][,int] (reads, writes, trims): iotail's random offsets have one
// alignment, so the values given must agree.
void ParseBlockAlign(RunOptions& o, const OptionValue& v) {
  uint32_t align = 0;
  const std::string args[] = {FioValueList(v.text)};
  stats::ForEachListItem(args, ",", [&](std::string_view item, const std::string&) {
    if (item.empty()) return;
    const uint64_t a = ParseSize(item, v.option, v.context);
    if (a == 0 || a > UINT32_MAX) {
      throw UsageError(fmt::format("--{}: expected a size above 0, got '{}'", v.option, item));
    }
    if (align != 0 && a != align) {
      throw UsageError(fmt::format(
          "--{}: iotail aligns every direction's random offsets alike; give one value, got '{}'",
          v.option, v.text));
    }
    align = static_cast<uint32_t>(a);
  });
  o.spec.blocks.blockalign = align;
}

using engine::JobSpec;
using enum ValueType;

// The rows of JobControlRows from steadystate on: steady state, random offsets, the job-file
// switches.
const std::vector<OptionDef>& SteadyStateRandomAndSwitchRows() {
  static const std::vector<OptionDef> table = {
      Labeled(
          "METRIC:LIMIT",
          {"steadystate", kText,
           [](RunOptions& o, const OptionValue& v) {
             o.spec.steady.criterion =
                 stats::ParseSteadyStateCriterion(v.text, v.option, SizeReader(v.context));
           },
           "iops|iops_slope|bw|bw_slope|lat|lat_slope:LIMIT, LIMIT a number (IOPS, bytes/s, ns) or "
           "N% of the window's mean: end the job (the group with group_reporting) once the last "
           "--ss_dur of measurements stays within it",
           "iops_slope:0.01%", Also("ss")}),
      {"steadystate_duration", kTime,
       [](RunOptions& o, const OptionValue& v) {
         o.spec.steady.dur_ns = static_cast<uint64_t>(v.number) / 1'000'000'000 * 1'000'000'000;
       },
       "the rolling window of --steadystate, in whole seconds as fio (0: no detection)", "0",
       Also("ss_dur")},
      {"steadystate_ramp_time", kTime, JobField<&JobSpec::steady, &SteadyStateOptions::ramp_ns>,
       "measure for --steadystate only after this long (from the recording start)", "0",
       Also("ss_ramp")},
      {"steadystate_check_interval", kTime,
       JobField<&JobSpec::steady, &SteadyStateOptions::interval_ns>,
       "measure for --steadystate this often (whole seconds)", "1s", Also("ss_interval")},
      Row<kChoice, &JobSpec::placement, &PlacementOptions::cpus_allowed_split>(
          "cpus_allowed_policy",
          "shared: every worker on all the CPUs; split: worker i on CPU i mod n", "shared",
          {{"shared", 0}, {"split", 1}}),
      Labeled("KIND[:ARGS]",
              {"random_distribution", kText,
               [](RunOptions& o, const OptionValue& v) {
                 o.spec.random_distribution =
                     engine::ParseDistribution(v.text, SizeReader(v.context));
               },
               "random | zipf:THETA | pareto:H | normal:SIGMA, with an optional :CENTRE 0..1 | "
               "zoned:A/S:... (A% of the I/Os to the next S% of each file) | zoned_abs:A/SIZE:...",
               "random"}),
      Row<kFlag, &JobSpec::norandommap>(
          "norandommap", "random offsets with replacement (default: every block once a pass)"),
      Labeled("SIZE[,SIZE]",
              {"blockalign", kText, ParseBlockAlign,
               "random offsets are multiples of this (R,W as fio, one value); not the minimum bs: "
               "norandommap",
               "the minimum bs", Also("ba")}),
      Row<kChoice, &JobSpec::random_generator>(
          "random_generator",
          "tausworthe, tausworthe64: fio's random map (every block once a pass); lfsr: every block "
          "once a pass even with norandommap, mixed sizes untrimmed. iotail's own generator either "
          "way: offsets are not fio's",
          "tausworthe",
          {{"tausworthe", engine::RandomGenerator::kTausworthe},
           {"lfsr", engine::RandomGenerator::kLfsr},
           {"tausworthe64", engine::RandomGenerator::kTausworthe64}}),
      Row<kFlag, &RunOptions::randrepeat>(
          "randrepeat", "1: the same random offsets every run; 0: seeded by the time", "1"),
      // Applied before the job's other options (BuildJob), so that it applies to all its sizes.
      {"kb_base",
       kChoice,
       AcceptOnly,
       "1024: k = 1024, KiB = 1000 (as fio); 1000: the reverse",
       "1024",
       Also(),
       {{"1000", 1000}, {"1024", 1024}}},
      {"showcmd", kFlag, [](RunSettings& o, const OptionValue& v) { o.showcmd = v.number != 0; },
       "print each job file as the one iotail command line that runs it, as fio's --showcmd", "0",
       Also(), Choices(), OptionScope::kRun},
      {"parse_only", kFlag,
       [](RunSettings& o, const OptionValue& v) { o.parse_only = v.number != 0; },
       "read and check the options and job files, then end without running (fio's)", "0", Also(),
       Choices(), OptionScope::kRun},
      Labeled("NAME", {"section", kName,
                       [](RunSettings& o, const OptionValue& v) { o.sections.push_back(v.text); },
                       "run only the job files' sections of this name (repeatable), as fio", "",
                       Also(), Choices(), OptionScope::kRun}),
      {"eta",
       kChoice,
       [](RunSettings& o, const OptionValue& v) {
         if (v.number == 0) o.live_format = stats::LiveFormat::kNone;
       },
       "always|auto: the live lines; never: none (fio's status line)",
       "auto",
       Also(),
       {{"always", 1}, {"auto", 1}, {"never", 0}},
       OptionScope::kRun},
  };
  return table;
}

const std::vector<OptionDef>& JobControlRows() {
  static const std::vector<OptionDef> table = JoinRows(
      {
          {"stonewall", kFlag, RunField<&RunOptions::stonewall>,
           "wait for the jobs before this one to finish; starts a new group", "0",
           Also("wait_for_previous")},
          Row<kFlag, &JobSpec::ending, &EndingOptions::exitall>(
              "exitall",
              "when a clone ends, end the jobs of --exit_what (set by any job, it "
              "holds for every job, as "
              "fio's)"),
          Row<kFlag, &JobSpec::ending, &EndingOptions::exitall_on_error>(
              "exitall_on_error",
              "when a clone of this job ends with an error, end the jobs of --exit_what"),
          Row<kChoice, &JobSpec::ending, &EndingOptions::exit_what_group>(
              "exit_what",
              "what --exitall ends: group (its reporting group) or "
              "stonewall|all (every job running with "
              "it)",
              "group", {{"group", 1}, {"stonewall", 0}, {"all", 0}}),
          Row<kFlag, &RunOptions::new_group>(
              "new_group", "start a new reporting group (jobs still run together)"),
          Row<kFlag, &RunOptions::group_reporting>(
              "group_reporting", "report each reporting group as one job (summed over its jobs)"),
          {"disk_util", kFlag, RunField<&RunOptions::disk_util>,
           "report the utilisation of this job's disks (fio's Disk stats; 0: leave them out)", "1"},
          Labeled("TEXT",
                  {"description", kText, RunField<&RunOptions::description>,
                   "text shown with the job's report, as given (`Description  : [TEXT]`, JSON "
                   "desc, terse's "
                   "last field)"}),
          Labeled("JOB", Row<kName, &JobSpec::wait_for>(
                             "wait_for",
                             "start when the named earlier job has ended (no forward references)")),
          Row<kTime, &JobSpec::startdelay_ns>(
              "startdelay", "start this job this long after the others (bare = seconds)", "0"),
          Row<kCount, &JobSpec::loops>("loops", "passes over the region (not with time_based)",
                                       "1"),
          Row<kSize, &JobSpec::number_ios>(
              "number_ios",
              "end the job after N I/Os issued (x loops; ignored with time_based, as fio 3.33)",
              "0"),
      },
      SteadyStateRandomAndSwitchRows());

  return table;
}

struct Setting {
  std::string name, value;
  std::string origin;   // "FILE:LINE" in a job file, "" on the command line
  std::string spelled;  // the name as the user wrote it (--live-format), for messages; "": name
  const OptionDef* def = nullptr;  // its row (a command-line setting); nullptr: run's, by name
  std::string_view Spelled() const { return spelled.empty() ? name : spelled; }
};

[[noreturn]] void Unknown(const Setting& s, std::span<const OptionGroup> driver = {}) {
  const std::vector<std::string_view> names = RunOptionNames(driver);
  const std::string why = UnknownOptionMessage(s.name, names);
  throw UsageError(s.origin.empty() ? why : s.origin + ": " + why);
}

// The command line in order: its settings (names normalised: dashes to underscores; values of
// flags filled in; the context's words replaced) and its job files.
struct CommandLine {
  std::vector<Setting> settings;
  std::vector<std::string> files;
};

CommandLine Tokenize(std::span<char* const> args, const ParseContext& context) {
  CommandLine out;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "-h") arg = "--help";
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      out.files.push_back(context.Substitute(arg));  // a job file
      continue;
    }
    arg = arg.substr(2);
    const size_t eq = arg.find('=');
    std::string spelled = arg.substr(0, eq);
    std::string name = spelled;
    std::replace(name.begin(), name.end(), '-', '_');
    const OptionDef* def = FindRunOption(name, context.driver);
    if (def == nullptr) Unknown({name, "", "", "", nullptr}, context.driver);
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (TakesBareValue(*def)) {
      value = "1";
    } else {
      if (i + 1 >= args.size()) throw UsageError(fmt::format("--{}: needs a value", name));
      value = args[++i];
    }
    out.settings.push_back(
        {std::move(name), context.Substitute(value), "", std::move(spelled), def});
  }
  return out;
}

RunOptions DefaultJob() {
  RunOptions o;
  o.percentiles.assign(stats::FioDefaultPercentiles().begin(),
                       stats::FioDefaultPercentiles().end());
  return o;
}

// The setting stored by its row: into the job's options, or (a row of scope run) the run's.
template <class Target>
void Apply(Target& o, const Setting& s, int kb_base) {
  const OptionDef* def = s.def != nullptr ? s.def : FindRunOption(s.name);
  if (def == nullptr) Unknown(s);
  try {
    if (s.origin.empty() && s.value.empty() && IsLogPrefixOption(def->name)) {
      throw UsageError(fmt::format(
          "--{}: needs a prefix, as in fio (in a job file, a bare {} names the logs after the "
          "job)",
          s.Spelled(), def->name));
    }
    // What fio reads of a value it does not evaluate, said where it was given (PlanRun).
    std::vector<std::string> notes;
    const OptionValue value = ParseOptionValue(*def, s.Spelled(), s.value, {kb_base, &notes});
    if constexpr (std::is_same_v<Target, RunSettings>) {
      def->set.run(o, value);
    } else {
      def->set.job(o, value);
      o.given_names.emplace_back(def->name);
    }
    for (const std::string& note : notes) {
      o.value_notes.push_back(s.origin.empty() ? note : s.origin + ": " + note);
    }
  } catch (const UsageError& e) {
    if (s.origin.empty()) throw;
    throw UsageError(s.origin + ": " + e.what());
  }
  o.given.emplace_back(s.name, s.value);
}

// One job from its settings in order (a later one wins); kb_base first, as fio parses it, so that
// it applies to every size of the job.
RunOptions BuildJob(const std::vector<const std::vector<Setting>*>& layers) {
  int kb_base = kFioKbBase;
  for (const auto* layer : layers) {
    for (const Setting& s : *layer) {
      if (s.name == "kb_base") kb_base = s.value == "1000" ? 1000 : 1024;
    }
  }
  RunOptions job = DefaultJob();
  for (const auto* layer : layers) {
    for (const Setting& s : *layer) Apply(job, s, kb_base);
  }
  NameLogsAfterJob(job);
  return job;
}

// A job file's jobs (fio's rules; see ParseRunPlan) appended to the plan's.
void AddJobFile(RunPlan& plan, const CommandLine& cl, size_t f,
                const std::vector<std::string>& sections, const std::vector<Setting>& global,
                const JobFileEnvironment& env, const ParseContext& context) {
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
      // A bare log option has no prefix (the job's name, as fio), not the "1" of a bare flag.
      const bool no_prefix = js.bare && IsLogPrefixOption(js.name);
      own.push_back(
          {js.name, no_prefix ? "" : context.Substitute(js.value), js.origin, "", nullptr});
    }
    if (section.global) {
      file_global.insert(file_global.end(), own.begin(), own.end());
      continue;
    }
    if (!sections.empty() &&
        std::find(sections.begin(), sections.end(), section.name) == sections.end()) {
      continue;
    }
    std::vector<Setting> head = {{"name", section.name, section.origin, "", nullptr}};
    if (f > 0 && first_of_file) head.push_back({"stonewall", "1", section.origin, "", nullptr});
    first_of_file = false;
    std::vector<Setting> all = head;
    all.insert(all.end(), own.begin(), own.end());
    RunOptions job = BuildJob({&global, &file_global, &all});
    job.origin = section.origin;
    job.section = section.name;
    for (const Setting& s : own) job.own.emplace_back(s.name, s.value);
    plan.jobs.push_back(std::move(job));
  }
}

}  // namespace

std::span<const OptionDef> JobControlOptionTable() { return JobControlRows(); }

bool IsRunLevelOption(std::string_view name) {
  const OptionDef* def = FindRunOption(name);
  return def != nullptr && def->scope == OptionScope::kRun;
}

RunPlan ParseRunPlan(std::span<char* const> args) { return ParseRunPlan(args, ParseContext{}); }

RunPlan ParseRunPlan(std::span<char* const> args, const ParseContext& context) {
  RunPlan plan;
  const CommandLine cl = Tokenize(args, context);
  // The run's settings first, wherever they were given: --showcmd and --section change what the
  // job files give.
  for (const Setting& s : cl.settings) {
    if (s.def->scope == OptionScope::kRun) {
      Apply(plan.run, s, kFioKbBase);  // a run's setting is no size of a job's
    }
  }
  const std::vector<std::string>& sections = plan.run.sections;
  if (!sections.empty() && cl.files.empty()) {
    throw UsageError(
        fmt::format("--section={}: selects sections of job files, and no job file is "
                    "given",
                    sections.front()));
  }
  plan.parse_only = plan.run.parse_only;
  const JobFileEnvironment env = JobFileEnvironment::System();
  if (plan.run.showcmd) {
    if (cl.files.empty()) throw UsageError("--showcmd: give the job files to show");
    // Each value read as a run reads it first: one that is refused (an expression that comes to
    // bs=0) is refused here too, naming its line, as fio's --showcmd drops such a job, rather
    // than shown as a command line that would be refused.
    RunPlan checked;
    for (size_t f = 0; f < cl.files.size(); ++f) {
      AddJobFile(checked, cl, f, sections, {}, env, context);
    }
    plan.showcmd = ShowCommand(cl.files, env, "iotail run");
    return plan;
  }
  std::vector<Setting> global;
  std::vector<std::vector<Setting>> jobs;
  for (const Setting& s : cl.settings) {
    if (s.def->scope == OptionScope::kRun) continue;  // applied above
    if (s.name == "name") {
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
    AddJobFile(plan, cl, f, sections, global, env, context);
  }
  if (plan.jobs.empty()) {
    throw UsageError(sections.empty() ? "no job: the job files define no job section"
                                      : "no job: no section of the job files matches --section");
  }
  return plan;
}

RunOptions ParseRunOptions(std::span<char* const> args) {
  RunPlan plan = ParseRunPlan(args);
  if (plan.jobs.size() != 1) {
    throw UsageError(fmt::format("expected one job, got {}", plan.jobs.size()));
  }
  return std::move(plan.jobs.front());
}

}  // namespace iotail::cli
