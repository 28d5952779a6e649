// Options of `iotail run`, in fio's spellings: `--name=value` or `--name value`, booleans bare or
// `=0/1`, sizes with suffixes (4k, 64M, 1g; powers of 1024 as fio's default kb_base), times with
// units (3s, 500ms, 100us, 2m, 1h; bare numbers are seconds). Dashes and underscores in option
// names are interchangeable (--cpus-allowed == --cpus_allowed). ParseRunOptions throws UsageError
// naming the option on bad input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/driver_options.h"
#include "cli/option_values.h"
#include "engine/job_spec.h"
#include "stats/report/live_report.h"

namespace iotail::cli {

enum class OutputFormat { kNormal, kJson, kJsonPlus, kTerse };

// The settings of the run as a whole: the rows of scope run, given on the command line only
// (wherever they appear), never in a job file; a driver's own rows store into `driver`.
struct RunSettings {
  int help = 0;  // --help: 1 the usage, 2 every option as markdown (docs/run-options.md), 3 man
  OutputFormat output_format = OutputFormat::kNormal;
  std::vector<OutputFormat> output_formats;  // --output-format=normal,json: each, in this order
  std::string output;                        // --output FILE ("" = stdout)
  uint64_t status_interval_ms = 0;           // --status-interval (0 = the log period)
  stats::LiveFormat live_format = stats::LiveFormat::kText;  // --live-format
  std::vector<std::string> sla;                              // --sla targets, as given
  std::string prometheus;             // --prometheus=[ADDR:]PORT ("" = no metrics endpoint)
  uint64_t prometheus_linger_ns = 0;  // --prometheus_linger: serve this long after the run
  DriverSettings driver;              // the options of sweep and iotail-mpi (cli/driver_options.h)
  // fio's command-line switches for job files: --showcmd (print them as one command line),
  // --parse-only (check, run nothing), --section=NAME (run only these sections; repeatable).
  bool showcmd = false;
  bool parse_only = false;
  std::vector<std::string> sections;
  std::vector<std::pair<std::string, std::string>> given;  // as given, for the summary
  std::vector<std::string> value_notes;  // what fio reads of values it does not evaluate (PlanRun)
};

// One job's settings: the rows of scope job, from the command line (before the first --name: every
// job's) and from job files.
struct RunOptions {
  engine::JobSpec spec;
  uint32_t log_avg_msec = 0;                               // --log_avg_msec (0: not given)
  std::vector<double> percentiles;                         // --percentile_list (default fio's list)
  std::vector<std::pair<std::string, std::string>> given;  // options as given, for the summary
  std::vector<std::string_view> given_names;               // their table names (not aliases)
  // Whether the option named `name` in the table (not an alias) was given for this job.
  bool Given(std::string_view name) const {
    return std::find(given_names.begin(), given_names.end(), name) != given_names.end();
  }

  // Jobs and groups, with fio's meanings (cli/run_options_jobs.cc).
  bool stonewall = false;        // --stonewall: wait for the jobs before, start a new group
  bool new_group = false;        // --new_group: start a new reporting group
  bool group_reporting = false;  // --group_reporting: report each group as one job
  std::string description;       // --description: shown with the job's report, as given
  std::string origin;            // "FILE:LINE" of its section in a job file ("": command line)
  // The header of its section in a job file ("": command line): fio's $jobname in the names of
  // the job's default files, whatever `name=` inside the section says (that names the job only).
  std::string section;
  bool disk_util = true;  // --disk_util=0: leave this job's disks out of the disk stats
  // fio's switches that turn measurements off (gtod_reduce, disable_lat, ...), as given when on:
  // iotail measures regardless, and says so once (PlanRun).
  std::vector<std::string> measured_anyway;
  bool randrepeat = true;       // --randrepeat=0: seed the random offsets from the time
  std::string directory;        // --directory: where the files are (fio's default names too)
  uint32_t nrfiles = 1;         // --nrfiles: files per clone, fio's NAME.CLONE.FILE names
  std::string filename_format;  // --filename_format: their names ("": $jobname.$jobnum.$filenum)
  uint64_t filesize = 0;        // --filesize: size of each file (default size / nrfiles)
  // fio's zone units (size=8z): these options given in zones of --zonesize (0: not in zones),
  // turned into bytes when the run is planned (PlanRun), as fio does once the zone size is known.
  uint32_t size_zones = 0, offset_zones = 0, io_size_zones = 0, offset_increment_zones = 0,
           zoneskip_zones = 0;
  std::vector<std::pair<std::string, std::string>> own;  // this job's own settings ("job options")
  // fio's options of cli/run_options_fio_misc.cc, settled by SettleFioMiscOptions.
  uint32_t bw_avg_msec = 0, iops_avg_msec = 0;  // --bwavgtime, --iopsavgtime (0: not given)
  bool allrandrepeat = false;                   // --allrandrepeat: seeded the same every run
  std::string file_service_type;                // --file_service_type ("": not given)
  bool verify_only = false;                     // --verify_only: read and check, write nothing
  std::vector<std::string> deprecated;          // deprecated options given (ignored, as fio)
  // What fio 3.33 reads of values written as it does not evaluate (FioBareArithmetic's notes),
  // each with its FILE:LINE in a job file: iotail reads the same, and PlanRun says so once each.
  std::vector<std::string> value_notes;
  // Logs whose prefix is the job's name (a bare write_bw_log in a job file, as fio): set by
  // NameLogsAfterJob once the job's name is final.
  std::vector<std::string engine::LogOptions::*> logs_named_after_job;
};

// What one `iotail run` command line (and its job files) asks for: the jobs in order and the
// settings of the run as a whole (--output, --output_format, --live_format, --status_interval,
// --sla, --help: in `run`, wherever they appear).
struct RunPlan {
  std::vector<RunOptions> jobs;
  RunSettings run;
  std::string showcmd;      // --showcmd: the job files as command lines (then nothing is run)
  bool parse_only = false;  // --parse-only: check everything, run nothing
  bool named_jobs = false;  // jobs came from --name or job files (not a bare command line)
  std::vector<std::pair<std::string, std::string>> global;  // settings every job shares
};

// Options before the first --name are global (they apply to every job); each --name starts a job.
// Arguments that are not options are fio job files (cli/job_file.h), read with fio's rules
// (--section=NAME selects their jobs); the command line's global options are the defaults beneath
// a file's own settings, as in fio. Without --name and job files, the command line is one job.
// Throws UsageError naming the option (and FILE:LINE in a job file) on bad input, with the
// closest valid name for a typo. A driver's own options and the words replaced in values:
// ParseRunPlan with a ParseContext (cli/option_table.h).
RunPlan ParseRunPlan(std::span<char* const> args);
// Whether `name` is one of the log options taking a prefix (write_bw_log, write_iops_log,
// write_lat_log, write_hist_log): bare in a job file, their prefix is the job's name, as fio's.
bool IsLogPrefixOption(std::string_view name);
// The prefix of each log given bare (RunOptions::logs_named_after_job) set to the job's name.
void NameLogsAfterJob(RunOptions& options);
// Settles the window of fio's bw/iops/lat logs: --log_avg_msec sets the job's log period (it must
// agree with an explicit --log_hist_msec when both logs are written). Returns a note for the user
// when these logs are asked for without --log_avg_msec, else "". Throws UsageError.
std::string SettleLogPeriod(RunOptions& options);
// Once the job's files are named: file_service_type checked against the order iotail takes the
// files in, verify_only's write job turned into its checked reads (cli/run_options_fio_misc.cc).
// Throws UsageError.
void SettleFioMiscOptions(RunOptions& options);
// Says once that fio's deprecated options given were ignored.
void NoteDeprecated(const std::vector<RunOptions>& jobs, std::ostream& err);
// Whether `name` (underscores) is a setting of the whole run rather than of one job.
bool IsRunLevelOption(std::string_view name);
// One job as the only job of a plan (for tests and single-job callers; the run's settings dropped).
RunOptions ParseRunOptions(std::span<char* const> args);
std::string RunUsage();
// The usage's text between its first line and the options (the man page's DESCRIPTION).
std::string RunDescription();

}  // namespace iotail::cli
