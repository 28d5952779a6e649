// The option table of `iotail run`: one row per option, declared once with its name (fio's
// spelling, underscores), its aliases, its value type, its default, its help line in fio's terms
// and where it applies (one job, or the whole run). Everything else comes from the rows: the parse
// of the command line and of job files (ParseOptionValue turns the text into a value by the row's
// type, with one shared parser per type, then the row's setter stores it), `iotail run --help`, the
// did-you-mean suggestions, and docs/run-options.md (OptionsMarkdown; a test keeps that file equal
// to it). The rows are split by concept across files (run_options.cc: what, where and when;
// run_options_engine.cc: the engine and its queue; run_options_io.cc: how a job does its I/O
// beyond that; run_options_files.cc: its files, their layout and what its writes carry;
// run_options_replay.cc: trace replay;
// run_options_verify.cc: verified writes (verify, its pattern, interval and read-backs);
// run_options_jobs.cc: jobs, groups and fio's reporting switches;
// run_options_logs.cc: outputs, fio's logs and the metrics endpoint; run_options_accepted.cc: fio's
// options that change nothing in iotail, and why).
//
// A row's setter only stores: value checks that need no other option belong to the type (a range,
// a list of choices) or to the setter (which reads sizes and times in the value's context:
// ParseSize(v.text, v.option, v.context)); checks across options belong to JobSpec::Validate. Built
// once, immutable, thread-safe to read.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cli/option_values.h"
#include "cli/run_options.h"
#include "engine/io/engine_table.h"

namespace iotail::cli {

enum class ValueType {
  kFlag,    // 1/0, true/false, yes/no, on/off; bare on the command line or in a job file: 1
  kCount,   // a whole number, within [min, max]
  kSize,    // bytes with fio's suffixes under kb_base (4k, 64M, 1g)
  kTime,    // a duration with units; a bare number is seconds (fio's runtime)
  kTimeUs,  // a duration with units; a bare number is microseconds (fio's thinktime)
  kMillis,  // a duration in whole milliseconds, at least 1 ms (bare: seconds); stored in ms
  kChoice,  // one of the row's choices (its value is stored)
  kText,    // free text, or a syntax of its own that the setter parses
  kName,    // text that may not be empty: a name, a path, a URI (stored as given)
};

// Where an option applies: to the job it is given for (and, before the first --name or in a
// [global] section, to every job), or to the run as a whole wherever it is given on the command
// line (never in a job file).
enum class OptionScope { kJob, kRun };

struct OptionChoice {
  constexpr OptionChoice(const char* n, int64_t v) : name(n), value(v) {}
  // An enumerator as the stored value: {"direct", engine::NbdPath::kDirect}.
  template <class E>
  requires std::is_enum_v<E>
  constexpr OptionChoice(const char* n, E e) : name(n), value(static_cast<int64_t>(e)) {}
  const char* name;
  int64_t value;
};

// A value parsed by its row's type: `text` as given, `number` for every type but kText and kName (a
// flag's 0/1, a count, bytes, ns, ms, a choice's value); `option` is the name it was given under,
// for the setter's messages.
struct OptionValue {
  std::string_view option;
  std::string text;
  int64_t number = 0;
  ValueContext context;  // the job's kb_base and notes, for a setter that parses `text` further
};

// A row's setter: into one job's options (a row of scope job) or into the run's settings (scope
// run); written as a plain function or a lambda of either signature, which picks the member.
using JobSetter = void (*)(RunOptions&, const OptionValue&);
using RunSetter = void (*)(RunSettings&, const OptionValue&);
struct OptionSetter {
  JobSetter job = nullptr;
  RunSetter run = nullptr;
  constexpr OptionSetter() = default;
  template <class F>
  constexpr OptionSetter(F f) {  // NOLINT(google-explicit-constructor): rows are brace lists
    if constexpr (std::is_invocable_v<F, RunOptions&, const OptionValue&>) {
      job = static_cast<JobSetter>(f);
    } else if constexpr (std::is_invocable_v<F, RunSettings&, const OptionValue&>) {
      run = static_cast<RunSetter>(f);
    }
  }
};

struct OptionDef {
  const char* name;
  ValueType type;
  OptionSetter set;
  const char* help;                     // fio's meaning, in a line
  const char* default_value = "";       // as the user would write it; "" = none, or see help
  std::vector<const char*> aliases{};   // fio's other names for it
  std::vector<OptionChoice> choices{};  // kChoice
  OptionScope scope = OptionScope::kJob;
  int64_t min = 0, max = UINT32_MAX;  // kCount
  const char* label = "";             // the value as --help shows it ("IOPS"); "": by its type
};

// A row's aliases and empty choices, written as calls rather than nested braces so that
// clang-format keeps a row on a line or two: {"stonewall", kFlag, ..., "0", Also("x")}.
template <class... Names>
std::vector<const char*> Also(Names... names) {
  return {names...};
}
inline std::vector<OptionChoice> Choices() { return {}; }
// A table written as parts (each a function small enough to read), in order.
inline std::vector<OptionDef> JoinRows(std::vector<OptionDef> first,
                                       const std::vector<OptionDef>& rest) {
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
}
// A row with the label --help shows for its value (every row of type kText and kName has one:
// a test checks it): Labeled("FILE", {"output", kName, ...}), Labeled("N", Row<...>(...)).
inline OptionDef Labeled(const char* label, OptionDef row) {
  row.label = label;
  return row;
}

// The setters of plain fields: JobField<&engine::JobSpec::numjobs> stores the parsed value into
// that field of the job's spec, JobField<&JobSpec::queue, &QueueOptions::iodepth> into a field of
// one of its groups (a chain of members, outermost first), RunField<&RunOptions::nrfiles> into the
// job's options, RunField<&RunSettings::output> into the run's settings.
namespace detail {
template <class M>
struct MemberOf;
template <class T, class C>
struct MemberOf<T C::*> {
  using type = C;
};
// obj.*First.*Rest...: the field a chain of members names.
template <auto First, auto... Rest, class T>
auto& At(T& obj) {
  if constexpr (sizeof...(Rest) == 0) {
    return obj.*First;
  } else {
    return At<Rest...>(obj.*First);
  }
}
inline void Store(bool& field, const OptionValue& v) { field = v.number != 0; }
inline void Store(std::string& field, const OptionValue& v) { field = v.text; }
template <class T>
requires std::is_arithmetic_v<T> || std::is_enum_v<T>
void Store(T& field, const OptionValue& v) { field = static_cast<T>(v.number); }
}  // namespace detail
template <auto... Fields>
void JobField(RunOptions& o, const OptionValue& v) {
  detail::Store(detail::At<Fields...>(o.spec), v);
}
template <auto Field>
void RunField(typename detail::MemberOf<decltype(Field)>::type& o, const OptionValue& v) {
  detail::Store(o.*Field, v);
}

// JobSpec's option groups (engine/job_options.h), for the rows' member chains.
using engine::BlockOptions;
using engine::BufferOptions;
using engine::EndingOptions;
using engine::EngineOptions;
using engine::ErrorOptions;
using engine::ExplainOptions;
using engine::FileOptions;
using engine::FlowOptions;
using engine::LatencyTargetOptions;
using engine::LogOptions;
using engine::NbdOptions;
using engine::PlacementOptions;
using engine::PrioOptions;
using engine::QueueOptions;
using engine::RateOptions;
using engine::RegionOptions;
using engine::SteadyStateOptions;
using engine::SyncOptions;
using engine::ThinkTimeOptions;
using engine::VerifyOptions;
using engine::ZoneOptions;

// A size, or fio's "Nz" (N zones of --zonesize, settled by PlanRun): into the option's zone count
// or the job's bytes (a chain of members; the other cleared).
// SizeOrZones<&RunOptions::io_size_zones, &JobSpec::region, &RegionOptions::io_size>.
template <uint32_t RunOptions::*Zones, auto... Bytes>
void SizeOrZones(RunOptions& o, const OptionValue& v) {
  const std::optional<uint32_t> zones = ParseZoneCount(v.text, v.option);
  o.*Zones = zones.value_or(0);
  detail::At<Bytes...>(o.spec) = zones ? 0 : ParseSize(v.text, v.option, v.context);
}

// Rows of the commonest kind, a value of one type stored into a plain field of the job's spec (or
// of one of its groups, by a chain of members) or of RunOptions, written as one call:
// Row<kFlag, &JobSpec::engine_options, &EngineOptions::hipri>("hipri", "polled completions") (a
// flag is off unless a default is given), Row<kCount, &JobSpec::loops>("loops", "passes", "1").
namespace detail {
template <auto Field, auto... Rest>
OptionSetter FieldSetter() {
  if constexpr (std::is_same_v<typename MemberOf<decltype(Field)>::type, engine::JobSpec>) {
    return JobField<Field, Rest...>;
  } else {
    static_assert(sizeof...(Rest) == 0, "RunOptions and RunSettings rows name one member");
    return RunField<Field>;
  }
}
}  // namespace detail
template <ValueType Type, auto... Fields>
struct Row : OptionDef {
  Row(const char* name, const char* help,
      const char* default_value = Type == ValueType::kFlag ? "0" : "",
      std::vector<OptionChoice> choices = {})
      : OptionDef{name,
                  Type,
                  detail::FieldSetter<Fields...>(),
                  help,
                  default_value,
                  {},
                  std::move(choices)} {}
};

// "io_uring, pvsync2: HELP": an engine option's help after the engines whose rows take it
// (engine/io/engine_table.h), for its row; kept for the process's life (cli/run_options_engine.cc).
const char* EngineOptionHelp(engine::EngineOption option, std::string_view help);

// For fio's switches that iotail always behaves as if set: the value is checked, nothing stored.
inline void AcceptOnly(RunOptions&, const OptionValue&) {}

std::span<const OptionDef> CoreOptionTable();         // cli/run_options.cc
std::span<const OptionDef> EngineOptionTable();       // cli/run_options_engine.cc
std::span<const OptionDef> IoBehaviourOptionTable();  // cli/run_options_io.cc
std::span<const OptionDef> FileOptionTable();         // cli/run_options_files.cc
std::span<const OptionDef> OpenOptionTable();         // cli/run_options_files.cc
std::span<const OptionDef> ZoneOptionTable();         // cli/run_options_zones.cc
std::span<const OptionDef> ReplayOptionTable();       // cli/run_options_replay.cc
std::span<const OptionDef> VerifyOptionTable();       // cli/run_options_verify.cc
std::span<const OptionDef> JobControlOptionTable();   // cli/run_options_jobs.cc
std::span<const OptionDef> LogOptionTable();          // cli/run_options_logs.cc
std::span<const OptionDef> AcceptedOptionTable();     // cli/run_options_accepted.cc
std::span<const OptionDef> FioMiscOptionTable();      // cli/run_options_fio_misc.cc
// All of them, in the order --help lists them, each with its title.
struct OptionGroup {
  const char* title;
  std::span<const OptionDef> rows;
};
std::vector<OptionGroup> AllOptionTables();

// The row whose name or alias is `name` (underscores), or nullptr; with `driver`, a driver's rows
// are looked up first (sweep's --ramp_time is the step's, not the job's).
const OptionDef* FindRunOption(std::string_view name, std::span<const OptionGroup> driver = {});
// Every name and alias (the driver's rows' first), for suggestions.
std::vector<std::string_view> RunOptionNames(std::span<const OptionGroup> driver = {});

// How a command that runs jobs reads its command line beyond `iotail run`'s table: its own rows
// (`driver`: scope run, given on the command line only, never in a job file; their setters store
// into RunOptions::driver), and words replaced in every value before its row parses it, on the
// command line and in job files alike (iotail-mpi's {rank} and {host}), and in job file names.
struct ParseContext {
  std::span<const OptionGroup> driver;
  std::vector<std::pair<std::string, std::string>> substitutions;
  // `text` with every substitution's word replaced by its value.
  std::string Substitute(std::string text) const;
};
RunPlan ParseRunPlan(std::span<char* const> args, const ParseContext& context);
// Whether a bare --name (or a bare key in a job file) is allowed, meaning 1: flags, and choices
// that include "1".
bool TakesBareValue(const OptionDef& def);
// `text` parsed by the row's type (UsageError naming --`given_as` on a bad value).
OptionValue ParseOptionValue(const OptionDef& def, std::string_view given_as,
                             const std::string& text, const ValueContext& context);

// What the value looks like, as --help shows it: "N", "SIZE", "a|b", "[=a|b]" (a bare --name is
// allowed too); "" for a flag.
std::string OptionValueLabel(const OptionDef& def);
// The values a shell completes for the row: a choice's names (besides "1" and "0"), or the a|b|c
// words a text row's help starts with (--rw, --ioengine, --output_format); empty when the value is
// free (a file, a size, a time).
std::vector<std::string> OptionValueWords(const OptionDef& def);

// The options part of `iotail run --help`: a line or two per row (of `groups`: a driver's).
std::string OptionsHelp();
std::string OptionsHelp(std::span<const OptionGroup> groups);
// docs/run-options.md: a table per concept (option, aliases, value, default, meaning, scope).
std::string OptionsMarkdown();

}  // namespace iotail::cli
