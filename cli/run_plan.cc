// Stage 1 of the run assembly (cli/run_assembly.h): PlanRun settles the parsed jobs into the
// JobSpecs that run.
#include <fmt/format.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "cli/replay_plan.h"
#include "cli/run_assembly.h"
#include "engine/clock.h"
#include "engine/io/io_engine.h"
#include "stats/core/errors.h"

namespace iotail::cli {

namespace {

constexpr uint64_t kMaxClones = 4096;
constexpr uint64_t kMaxDefaultFiles = 1 << 20;  // a job's default files, all its clones'.

// Without --ioengine: nbd when --uri is given; psync, as fio, so that a job file means what it
// means to fio (psync runs at depth 1: JobSpec::Normalize says so); but the zero-argument default
// benchmark, iotail's own, takes the best engine available here (io_uring).
void ChooseEngine(RunOptions& job, bool default_benchmark) {
  engine::JobSpec& spec = job.spec;
  if (job.Given("ioengine")) return;
  if (!spec.uri.empty()) {
    spec.ioengine = engine::EngineKind::kNbd;
    return;
  }
  if (!default_benchmark) {
    spec.ioengine = engine::EngineKind::kPsync;
    return;
  }
  const auto available = engine::AvailableEngines();
  if (available.empty()) throw std::runtime_error("no I/O engine can run here");
  spec.ioengine = available.front();
}

// fio's make_filename: a format with $jobname, $jobnum and $filenum replaced (matched in any
// case; $clientuid, the client's address under fio --client, is empty here). Cut into literal text
// and keywords once, so that naming a job's million files costs what their names are long.
class FilenameFormat {
 public:
  FilenameFormat(const std::string& format, const std::string& jobname) {
    static constexpr std::string_view kKeywords[] = {"$jobname", "$jobnum", "$filenum",
                                                     "$clientuid"};
    std::string literal;
    for (size_t at = 0; at < format.size();) {
      int found = -1;
      for (int k = 0; k < 4 && format[at] == '$'; ++k) {
        const std::string_view kw = kKeywords[k];
        if (at + kw.size() <= format.size() &&
            strncasecmp(format.c_str() + at, kw.data(), kw.size()) == 0) {
          found = k;
          break;
        }
      }
      if (found < 0) {
        literal += format[at++];
        continue;
      }
      // $jobname is known now; the numbers are filled in per file.
      if (found == 0) literal += jobname;
      if (found == 1 || found == 2) {
        parts_.push_back({std::move(literal), found == 1 ? Part::kJobnum : Part::kFilenum});
        literal.clear();
      }
      at += kKeywords[found].size();
    }
    tail_ = std::move(literal);
  }
  std::string Name(uint32_t jobnum, uint32_t filenum) const {
    std::string out;
    for (const Part& p : parts_) {
      out += p.before;
      out += std::to_string(p.number == Part::kJobnum ? jobnum : filenum);
    }
    return out + tail_;
  }

 private:
  struct Part {
    enum Number { kJobnum, kFilenum };
    std::string before;
    Number number;
  };
  std::vector<Part> parts_;
  std::string tail_;
};

// A default file's name whose last part is longer than a file name may be (NAME_MAX, 255 bytes):
// refused naming the option that made it, rather than failing to open with "File name too long".
void CheckDefaultFileName(const std::string& name, const RunOptions& job) {
  const std::string base = std::filesystem::path(name).filename().string();
  if (base.size() <= 255) return;
  throw stats::UsageError(fmt::format(
      "--{}: the file name it gives, '{}...', is {} bytes long, more than the 255 a file name "
      "may have",
      job.filename_format.empty() ? "name" : "filename_format", base.substr(0, 40), base.size()));
}

// fio's zone units (size=8z, offset=524z, ...): N zones of --zonesize, as fio's
// zbd_recalc_options_with_zone_granularity turns them into bytes (before size is divided among
// the files). fio leaves them unset without a zone size (size=2z would then mean the whole file):
// iotail refuses that.
void ApplyZoneUnits(RunOptions& job) {
  engine::JobSpec& spec = job.spec;
  const std::pair<uint32_t, uint64_t*> units[] = {
      {job.size_zones, &spec.region.size},
      {job.offset_zones, &spec.region.offset},
      {job.io_size_zones, &spec.region.io_size},
      {job.offset_increment_zones, &spec.region.offset_increment},
      {job.zoneskip_zones, &spec.zones.skip}};
  const char* names[] = {"size", "offset", "io_size", "offset_increment", "zoneskip"};
  for (size_t i = 0; i < std::size(units); ++i) {
    if (units[i].first == 0) continue;
    if (spec.zones.size == 0) {
      throw stats::UsageError(
          fmt::format("--{}={}z: zone units need --zonesize (and --zonemode=zbd or strided)",
                      names[i], units[i].first));
    }
    *units[i].second = uint64_t{units[i].first} * spec.zones.size;
  }
}

// fio's files: a named job without a target uses NAME.CLONE.FILE (--filename_format; nrfiles per
// clone, each clone its own; NAME is the section's header in a job file, as fio, even where
// `name=` renames the job), in --directory when given; a --filename list is every clone's.
// Either way --size is a clone's total, divided among its files; --filesize gives each file's
// length, and without --size the I/O per file too (fio: the I/O per file is the smaller).
void NameTargets(RunOptions& job) {
  engine::JobSpec& spec = job.spec;
  if (!spec.uri.empty()) return;
  const auto in_directory = [&](const std::string& name) {
    return job.directory.empty() || (!name.empty() && name[0] == '/')
               ? name
               : (std::filesystem::path(job.directory) / name).string();
  };
  if (!spec.engine_options.e4defrag_donor.empty())
    spec.engine_options.e4defrag_donor = in_directory(spec.engine_options.e4defrag_donor);
  uint64_t files = spec.filenames.size();
  if (!spec.filenames.empty()) {
    for (std::string& f : spec.filenames) f = in_directory(f);
  } else {
    spec.files_per_clone = true;
    files = job.nrfiles;
    // Named before the run's clones are counted (PlanRun): bounded here, so that a huge numjobs
    // times nrfiles is refused rather than named file by file until memory runs out.
    if (uint64_t{spec.numjobs} * job.nrfiles > kMaxDefaultFiles) {
      throw stats::UsageError(fmt::format(
          "--nrfiles: {} files for each of {} clones (--numjobs) make more than {} files",
          job.nrfiles, spec.numjobs, kMaxDefaultFiles));
    }
    // Worker w takes files w, w + numjobs, ... (engine::RunJobs): its own NAME.w.k.
    const std::string format =
        job.filename_format.empty() ? "$jobname.$jobnum.$filenum" : job.filename_format;
    const FilenameFormat naming(format, job.section.empty() ? spec.name : job.section);
    for (uint32_t k = 0; k < job.nrfiles; ++k) {
      for (uint32_t w = 0; w < spec.numjobs; ++w) {
        const std::string name = naming.Name(w, k);
        CheckDefaultFileName(name, job);
        spec.filenames.push_back(in_directory(name));
      }
    }
  }
  if (job.filesize != 0) {
    const uint64_t per_file =
        job.Given("size") && spec.region.size != 0 ? spec.region.size / files : 0;
    spec.region.file_size = job.filesize;
    spec.region.size = per_file != 0 ? std::min(per_file, job.filesize) : job.filesize;
  } else if (files > 1 && spec.region.size != 0) {
    spec.region.size = spec.region.size / files;
  }
}

// The short default benchmark (a command line without --name, --filename or --uri): what the user
// gave keeps its fio meaning, and iotail's conveniences fill only what was not given: 4k random
// reads at QD32, O_DIRECT, logged every 500 ms, on a temporary 64 MiB file in the current
// directory (none with the null engine, which opens nothing); time_based unless the amount of I/O
// was given (size, io_size, number_ios or loops: then the job ends where fio's would, at --runtime
// if given), and a time_based job runs 3 s unless --runtime says otherwise.
void ApplyDefaultBenchmark(RunOptions& job, std::string& temp_path, std::ostream& err) {
  engine::JobSpec& spec = job.spec;
  const bool null_engine = spec.ioengine == engine::EngineKind::kNull;
  // The null engine's target is a name it never opens (as its named jobs' NAME.0.0). Named by host
  // and process: processes on hosts sharing a directory (iotail-mpi's ranks over NFS) may have
  // the same PID.
  char host[65] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "host");
  spec.filenames = {fmt::format("iotail-default.{}.{}.tmp", host, getpid())};
  if (!null_engine) temp_path = spec.filenames[0];
  if (!job.Given("size")) spec.region.size = 64 << 20;
  if (!job.Given("rw")) spec.rw = engine::RwMode::kRandRead;
  if (!job.Given("iodepth")) spec.queue.iodepth = 32;
  const bool amount_given =
      job.Given("size") || job.Given("io_size") || job.Given("number_ios") || job.Given("loops");
  if (!amount_given && !job.Given("time_based")) spec.time_based = true;
  if (spec.time_based && !job.Given("runtime")) spec.runtime_ns = 3'000'000'000;
  if (spec.logs.write_hist_log.empty()) {
    spec.logs.write_hist_log = "iotail";
    spec.logs.hist_msec = 500;
  }
  if (!job.Given("direct")) spec.direct = true;
  const std::string how_long =
      spec.time_based && spec.runtime_ns != 0
          ? fmt::format(" for {:g} s", static_cast<double>(spec.runtime_ns) / 1e9)
          : "";
  const std::string where =
      null_engine
          ? fmt::format("with the null engine over {} MiB (no file)", spec.region.size >> 20)
          : fmt::format("on a temporary {} MiB file '{}' (removed afterwards)",
                        spec.region.size >> 20, temp_path);
  err << fmt::format("iotail run: no --filename: default benchmark{} {}\n", how_long, where);
}

// The interval clock ticks at the log period; the status interval rides on it (the status
// interval's own period unless a log period was given: then it must be a multiple of it).
void SettleClock(RunOptions& job, uint64_t status_interval_ms, std::ostream& err) {
  engine::JobSpec& spec = job.spec;
  if (const std::string note = SettleLogPeriod(job); !note.empty()) err << note << "\n";
  if (status_interval_ms == 0) return;
  if (spec.logs.write_hist_log.empty() && !job.Given("log_hist_msec") && job.bw_avg_msec == 0 &&
      job.iops_avg_msec == 0) {
    spec.logs.hist_msec = static_cast<uint32_t>(status_interval_ms);
  } else if (status_interval_ms % spec.logs.hist_msec != 0) {
    throw stats::UsageError(fmt::format(
        "--status-interval: it must be a multiple of --log_hist_msec ({})", spec.logs.hist_msec));
  }
}

// fio's fixups that depend on what was given (its fixup_options): a buffer_compress_percentage
// under 100 refills the buffers for every write unless refill_buffers was set.
void ImpliedAsFio(RunOptions& job) {
  engine::JobSpec& spec = job.spec;
  if (spec.buffers.compress_percentage > 0 && spec.buffers.compress_percentage < 100 &&
      !job.Given("refill_buffers")) {
    spec.buffers.refill = true;
  }
  if (spec.buffers.dedupe.percentage > 0 && !job.Given("refill_buffers"))
    spec.buffers.refill = true;
  spec.engine_options.stat_type_given =
      job.Given("stat_type");  // an engine option: refused with other engines
}

// fio's switches that turn measurements off (gtod_reduce, disable_*): accepted, and said once, by
// name, that iotail measures anyway.
void NoteMeasuredAnyway(const std::vector<RunOptions>& jobs, std::ostream& err) {
  std::vector<std::string_view> names;
  for (const RunOptions& job : jobs) {
    for (const std::string& name : job.measured_anyway) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
      }
    }
  }
  if (!names.empty()) {
    std::string text;
    for (const std::string_view n : names) text += (text.empty() ? "--" : ", --") + std::string(n);
    err << fmt::format(
        "iotail run: {}: iotail measures latencies and bandwidth regardless, so every figure it "
        "reports is measured\n",
        text);
  }
}

// Values fio reads other than as written (bare arithmetic): each said once, where it was given
// (a [global] setting is every job's).
void NoteValuesAsFio(const RunPlan& plan, std::ostream& err) {
  std::vector<std::string_view> said;
  auto say = [&](const std::vector<std::string>& notes) {
    for (const std::string& note : notes) {
      if (std::find(said.begin(), said.end(), note) != said.end()) continue;
      said.push_back(note);
      err << "iotail run: " << note << "\n";
    }
  };
  say(plan.run.value_notes);
  for (const RunOptions& job : plan.jobs) say(job.value_notes);
}

}  // namespace

std::vector<engine::JobSpec> PlannedRun::Specs() const {
  std::vector<engine::JobSpec> specs;
  for (const RunOptions& job : plan.jobs) specs.push_back(job.spec);
  return specs;
}

PlannedRun::TempFile::~TempFile() {
  if (!path.empty()) unlink(path.c_str());
}

PlannedRun PlanRun(RunPlan plan, std::ostream& err) {
  PlannedRun run;
  run.plan = std::move(plan);
  std::vector<RunOptions>& jobs = run.plan.jobs;
  run.default_benchmark = !run.plan.named_jobs && jobs[0].spec.filenames.empty() &&
                          jobs[0].spec.uri.empty() && !jobs[0].spec.replay.Active();
  for (RunOptions& job : jobs) {
    try {
      ChooseEngine(job, run.default_benchmark);
      ApplyZoneUnits(job);
      SettleReplay(job);
      if (run.default_benchmark) {
        ApplyDefaultBenchmark(job, run.temp->path, err);
      } else {
        NameTargets(job);
      }
      ImpliedAsFio(job);
      SettleFioMiscOptions(job);
      engine::JobSpec& spec = job.spec;
      if (!job.randrepeat && !job.allrandrepeat)
        spec.randseed ^= engine::Clock::RealtimeNs() * 0x9e3779b97f4a7c15ull;
      SettleClock(job, run.plan.run.status_interval_ms, err);
      if (const std::string note = spec.Normalize(); !note.empty()) err << note << "\n";
      spec.Validate();
    } catch (const stats::UsageError& e) {
      // What the job's options mean together: named by the job (and its section in a job file).
      const std::string what = e.what();
      if (what.starts_with("job '") || (jobs.size() == 1 && job.origin.empty())) throw;
      throw stats::UsageError(fmt::format("{}{}job '{}': {}", job.origin,
                                          job.origin.empty() ? "" : ": ", job.spec.name, what));
    }
  }
  NoteMeasuredAnyway(jobs, err);
  NoteValuesAsFio(run.plan, err);
  NoteDeprecated(jobs, err);
  // fio runs at most 4,096 jobs, clones included (its REAL_MAX_JOBS): so does iotail, rather
  // than start thousands of workers a run cannot hold.
  uint64_t& clones = run.clones;
  for (const RunOptions& job : jobs) clones += job.spec.numjobs;
  if (clones > kMaxClones) {
    throw stats::UsageError(
        fmt::format("--numjobs: {} jobs with their clones in all; fio and iotail run at most {}",
                    clones, kMaxClones));
  }
  run.groups = PlanGroups(jobs);
  // fio's exitall is one flag for the whole run, set by any job that names it.
  const bool exitall = std::any_of(jobs.begin(), jobs.end(),
                                   [](const RunOptions& job) { return job.spec.ending.exitall; });
  for (size_t j = 0; j < jobs.size(); ++j) {
    jobs[j].spec.ending.exitall = exitall;
    jobs[j].spec.report_group = run.groups.groupid[j];
    jobs[j].spec.steady.group = jobs[j].group_reporting;  // steady state per group, as fio's
  }
  run.entries = PlanEntries(jobs, run.groups);
  return run;
}

}  // namespace iotail::cli
