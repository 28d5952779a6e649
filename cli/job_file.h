// JobFile: reads a fio job file into its sections, with fio's rules.
//
// `[name]` starts a section; a section whose name starts with "global" holds settings for the
// jobs after it in the file (a later global section adds to them). Settings are `key=value` or a
// bare `key` (a flag; names of letters, digits, '_' and '-'), blanks around the key and value
// trimmed; key names take dashes or underscores. `;` and `#` start a comment, on a line of its own
// or after a setting (everything from the first one on). `include FILE` reads another file's
// settings in place, within the current section (FILE as given, else relative to the including
// file's directory; as in fio, an included file holds no sections; an include loop is an error).
// In values, `${VAR}` is the environment variable VAR (unset: the empty string, as in fio),
// and `$ncpus`, `$mb_memory` and `$pagesize` are this machine's; a value that used one of fio's
// `$` variables, or that is wrapped in parentheses, is integer arithmetic (+ - * / % ^ and
// parentheses, numbers with k/m/g/t suffixes in powers of 1024), evaluated natively in 64 bits
// (fio pipes the first form to bc and lacks the second; an overflow or a division by zero is an
// error naming the option).
//
// A job file, included or not, is a regular file of at most kJobFileMaxBytes (a device, a FIFO or
// a directory is refused unopened) of UTF-8 text without control characters (tabs aside; a byte
// order mark and carriage returns at line ends are skipped). What a file holds is echoed in an
// error only once the file has shown a good line: a file whose first line is not one is "not a
// fio job file", so that `include /etc/shadow` says nothing of what it holds; and what is echoed
// shows what is not printable as \xNN. The limits below bound the time and memory any file
// costs. Every error is a stats::UsageError whose message starts with `FILE:LINE: `
// (`job file 'FILE': ` for what is wrong with a job file named on the command line as a whole).
// Pure parsing but for reading the files (JobFileEnvironment::read_file); thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iotail::cli {

// Bytes read: a job file, an included one, and all of them together, a file read again counting
// again (16 MiB, a thousand times the largest job files seen in practice).
inline constexpr size_t kJobFileMaxBytes = size_t{16} << 20;
// Files included within each other (fio has no limit but its open files).
inline constexpr size_t kJobFileMaxIncludeDepth = 64;
// Include lines followed in all, each time anew: an include bomb (each file including the next
// twice) of tiny files is bounded by this, of large ones by the bytes. Four for each of the most
// jobs.
inline constexpr size_t kJobFileMaxIncludes = 16384;
// Job sections ([global] ones aside): fio's limit on jobs (REAL_MAX_JOBS).
inline constexpr size_t kJobFileMaxJobSections = 4096;
// What the sections and settings take in memory: their names, values and origins (FILE:LINE,
// which repeats the file's path) and the structures that hold them. Bounds what `${VAR}`
// repeated, long include paths and many short lines would make of 16 MiB.
inline constexpr size_t kJobFileMaxSettingsBytes = size_t{64} << 20;
// The settings the jobs are made of, each job counting its own and every global setting before
// it (what `iotail run` applies: 10,000 global settings over 4,096 jobs took it 25 s and 2.6 GB).
// 256 for each of the most jobs.
inline constexpr size_t kJobFileMaxJobSettings = size_t{1} << 20;
// Parentheses, signs and `^` nested in one arithmetic value (each is a recursion).
inline constexpr size_t kArithmeticMaxNesting = 256;
// ShowCommand's output: fio's repeats every global setting so far at each global section, so it
// grows with the square of their number.
inline constexpr size_t kShowCommandMaxBytes = size_t{64} << 20;

struct JobFileSetting {
  std::string name;    // dashes as underscores
  std::string value;   // "1" for a bare flag
  bool bare = false;   // written without '=' (a flag)
  std::string origin;  // "FILE:LINE"
};

struct JobFileSection {
  std::string name;
  bool global = false;
  std::string origin;  // "FILE:LINE" of its header
  std::vector<JobFileSetting> settings;
};

// A job file's bytes as the environment read them.
struct JobFileContents {
  std::string text;      // at most `limit` + 1 bytes: more than `limit` means the file is larger
  std::string identity;  // the same for every path to one file (include loops)
};

// Reads a job file of at most `limit` bytes: nullopt when nothing is at `path` (an include then
// looks beside the including file); throws UsageError saying what is wrong, without the path, when
// it is not a regular file or cannot be read.
using JobFileReader =
    std::function<std::optional<JobFileContents>(const std::string& path, size_t limit)>;

// The file system's reader: `path` must be a regular file, checked before it is opened (never a
// device, and never blocking on a FIFO) and again on what was opened; its identity is its device
// and inode.
std::optional<JobFileContents> ReadJobFileFromDisk(const std::string& path, size_t limit);

// What a job file may refer to: environment variables, the machine's figures and the files
// (injectable for tests and the fuzzer).
struct JobFileEnvironment {
  std::function<std::optional<std::string>(const std::string&)> getenv;
  JobFileReader read_file = ReadJobFileFromDisk;
  uint64_t ncpus = 1, mb_memory = 1, pagesize = 4096;
  static JobFileEnvironment System();
};

std::vector<JobFileSection> ParseJobFile(const std::string& path, const JobFileEnvironment& env);

// The files as one command line per file, as `fio --showcmd FILE...` prints them: "PROGRAM" then,
// section by section, a global section's accumulated settings or a job's `--name=NAME` and its
// own settings, each as ` --key=value` (` --key` for a flag), the line ending in a blank. More than
// kShowCommandMaxBytes is a UsageError naming the global section where it passes the limit.
std::string ShowCommand(const std::vector<std::string>& files, const JobFileEnvironment& env,
                        std::string_view program);

// Integer arithmetic as fio's job files write it ("4*2", "(1k+512)/2", "2^10"); `where` prefixes
// the error message. Throws UsageError, also when a result overflows 64 bits and for nesting
// deeper than kArithmeticMaxNesting.
int64_t EvaluateArithmetic(std::string_view text, const std::string& where);

}  // namespace iotail::cli
