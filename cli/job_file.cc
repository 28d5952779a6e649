#include "cli/job_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "stats/core/errors.h"
#include "stats/util/printable_text.h"

namespace iotail::cli {

using stats::FindUnprintable;
using stats::Printable;
using stats::UsageError;

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

class Parser {
 public:
  explicit Parser(const JobFileEnvironment& env) : env_(env) {}

  // The job file named on the command line.
  void ReadJobFile(const std::string& path) {
    const std::string what = fmt::format("job file '{}'", Printable(path));
    std::optional<JobFileContents> file = Read(path, what);
    if (!file) throw UsageError(what + ": cannot open it (no such file)");
    ReadText(path, *file, what);
  }

  std::vector<JobFileSection> Take() { return std::move(sections_); }

 private:
  struct OpenFile {
    std::string path;
    std::string identity;
    bool recognised = false;  // a good line was seen: the file's content may be echoed
  };

  std::optional<JobFileContents> Read(const std::string& path, const std::string& what) {
    try {
      return env_.read_file(path, kJobFileMaxBytes);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", what, e.what()));
    }
  }

  void ReadText(const std::string& path, const JobFileContents& file, const std::string& what) {
    if (file.text.size() > kJobFileMaxBytes) {
      throw UsageError(fmt::format("{}: larger than {} MiB (the most a job file may be)", what,
                                   kJobFileMaxBytes >> 20));
    }
    bytes_read_ += file.text.size();
    if (bytes_read_ > kJobFileMaxBytes) {
      throw UsageError(fmt::format("{}: the job file and its includes exceed {} MiB in all", what,
                                   kJobFileMaxBytes >> 20));
    }
    open_.push_back({path, file.identity});
    std::string_view text = file.text;
    if (text.starts_with("\xef\xbb\xbf")) text.remove_prefix(3);  // a UTF-8 byte order mark
    uint64_t number = 1;
    for (size_t start = 0; start < text.size(); ++number) {
      const size_t end = std::min(text.find('\n', start), text.size());
      Line(number, text.substr(start, end - start));
      start = end + 1;
    }
    open_.pop_back();
  }

  // The error for a line of a file that has shown no good line yet: it names no content.
  UsageError NotAJobFile(const std::string& where) const {
    return UsageError(where + (open_.size() > 1
                                   ? ": not a fio job file to include (one holds settings, "
                                     "'name=value')"
                                   : ": not a fio job file (one starts with a [section] header)"));
  }

  // A line that is not what a job file holds: `detail` (which may show the line) once the file has
  // shown a good line, else NotAJobFile.
  [[noreturn]] void Malformed(const std::string& where, const std::string& detail) const {
    if (!open_.back().recognised) throw NotAJobFile(where);
    throw UsageError(fmt::format("{}: {}", where, detail));
  }

  // What the sections and settings take, against kJobFileMaxSettingsBytes.
  void Charge(size_t bytes, const std::string& where) {
    settings_bytes_ += bytes;
    if (settings_bytes_ > kJobFileMaxSettingsBytes) {
      throw UsageError(fmt::format(
          "{}: the settings take more than {} MiB (their names, values and where each was set)",
          where, kJobFileMaxSettingsBytes >> 20));
    }
  }

  // The settings the jobs are made of, against kJobFileMaxJobSettings: each job's own and every
  // global setting before it.
  void CountJobSettings(size_t settings, const std::string& where) {
    job_settings_ += settings;
    if (job_settings_ > kJobFileMaxJobSettings) {
      throw UsageError(fmt::format(
          "{}: the jobs come to more than {} settings (each job counts its own and every global "
          "setting before it)",
          where, kJobFileMaxJobSettings));
    }
  }

  void Line(uint64_t number, std::string_view raw) {
    const std::string_view line = Trim(raw.substr(0, raw.find_first_of(";#")));
    if (line.empty()) return;  // before formatting FILE:LINE: 16 MiB may be 16 million of these
    const std::string where = fmt::format("{}:{}", open_.back().path, number);
    if (const size_t at = FindUnprintable(line); at != std::string_view::npos) {
      Malformed(where, fmt::format("'{}' in the line (a job file is UTF-8 text without control "
                                   "characters)",
                                   Printable(line.substr(at, 1))));
    }
    if (line.front() == '[') return Section(where, line);
    if (line.starts_with("include") && line.size() > 7 &&
        std::isspace(static_cast<unsigned char>(line[7]))) {
      open_.back().recognised = true;
      return Include(where, Trim(line.substr(7)));
    }
    Setting(where, line);
  }

  void Section(const std::string& where, std::string_view line) {
    if (open_.size() > 1) {
      throw UsageError(
          fmt::format("{}: a section in an included file (fio allows only settings there)", where));
    }
    JobFileSection s;
    if (line.size() >= 3 && line.back() == ']') s.name = Trim(line.substr(1, line.size() - 2));
    if (s.name.empty()) {
      Malformed(where, fmt::format("a section header is '[name]', got '{}'", Printable(line)));
    }
    open_.back().recognised = true;
    s.global = s.name.starts_with("global");
    s.origin = where;
    if (!s.global && ++job_sections_ > kJobFileMaxJobSections) {
      throw UsageError(fmt::format("{}: more than {} job sections (fio's limit on jobs)", where,
                                   kJobFileMaxJobSections));
    }
    Charge(sizeof(JobFileSection) + s.name.size() + s.origin.size(), where);
    if (!s.global) CountJobSettings(global_settings_, where);
    sections_.push_back(std::move(s));
  }

  void Include(const std::string& where, std::string_view target) {
    const std::string what = fmt::format("{}: include '{}'", where, Printable(target));
    if (open_.size() > kJobFileMaxIncludeDepth) {
      throw UsageError(
          fmt::format("{}: includes nested deeper than {} files", what, kJobFileMaxIncludeDepth));
    }
    if (++includes_ > kJobFileMaxIncludes) {
      throw UsageError(
          fmt::format("{}: more than {} includes in all (each one counts, of the same file too)",
                      what, kJobFileMaxIncludes));
    }
    // As given, else beside the including file (fio's rule).
    std::string path(target);
    std::optional<JobFileContents> file = Read(path, what);
    if (!file) {
      path = (std::filesystem::path(open_.back().path).parent_path() / target).string();
      file = Read(path, what);
    }
    if (!file) throw UsageError(what + ": cannot open it (no such file)");
    for (const OpenFile& open : open_) {
      if (open.identity == file->identity) {
        throw UsageError(
            fmt::format("{}: include loop: '{}' includes itself", where, Printable(target)));
      }
    }
    ReadText(path, *file, what);
  }

  void Setting(const std::string& where, std::string_view line) {
    const size_t eq = line.find('=');
    JobFileSetting setting;
    setting.name = Trim(line.substr(0, eq));
    const bool name_ok =
        !setting.name.empty() && std::all_of(setting.name.begin(), setting.name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
        });
    if (!name_ok) {
      Malformed(where, fmt::format("a setting is 'name=value' or a flag 'name', got '{}'",
                                   Printable(line)));
    }
    if (sections_.empty()) {
      if (open_.size() == 1 && !open_.back().recognised) throw NotAJobFile(where);
      throw UsageError(fmt::format(
          "{}: a setting outside any [section] (a job file starts with a [section] header)",
          where));
    }
    std::replace(setting.name.begin(), setting.name.end(), '-', '_');
    setting.bare = eq == std::string_view::npos;
    setting.origin = where;
    try {
      setting.value = setting.bare ? "1" : Expand(Trim(line.substr(eq + 1)), where, setting.name);
    } catch (const UsageError&) {
      if (!open_.back().recognised) throw NotAJobFile(where);
      throw;
    }
    open_.back().recognised = true;
    Charge(
        sizeof(JobFileSetting) + setting.name.size() + setting.value.size() + setting.origin.size(),
        where);
    sections_.back().settings.push_back(std::move(setting));
    if (sections_.back().global) {
      ++global_settings_;
    } else {
      CountJobSettings(1, where);
    }
  }

  // ${VAR} from the environment, fio's $ncpus, $mb_memory and $pagesize, then the arithmetic
  // (its errors name the option).
  std::string Expand(std::string_view value, const std::string& where, const std::string& option) {
    std::string out;
    bool machine_variable = false;
    for (size_t i = 0; i < value.size();) {
      if (value.compare(i, 2, "${") == 0) {
        const size_t close = value.find('}', i + 2);
        if (close == std::string_view::npos) {
          throw UsageError(
              fmt::format("{}: '${{' without its '}}' in '{}'", where, Printable(value)));
        }
        const std::string name(value.substr(i + 2, close - i - 2));
        // An unset variable is the empty string, as fio's (filename=${UNSET}data is "data").
        out += env_.getenv(name).value_or("");
        // A variable repeated is the one way a line grows: what it takes counts from here.
        if (settings_bytes_ + out.size() > kJobFileMaxSettingsBytes) Charge(out.size(), where);
        i = close + 1;
        continue;
      }
      if (value[i] == '$') {
        bool found = false;
        for (const auto& [name, figure] :
             {std::pair<std::string_view, uint64_t>{"ncpus", env_.ncpus},
              {"mb_memory", env_.mb_memory},
              {"pagesize", env_.pagesize}}) {
          if (value.compare(i + 1, name.size(), name) == 0) {
            out += std::to_string(figure);
            i += 1 + name.size();
            found = machine_variable = true;
            break;
          }
        }
        // fio's other $words stay as they are: $jobname, $jobnum, $filenum in filename_format
        // are replaced when files are named, and "cost $5" is text.
        if (!found) out += value[i++];
        continue;
      }
      out += value[i++];
    }
    const bool wrapped = out.size() >= 2 && out.front() == '(' && out.back() == ')';
    if (machine_variable || wrapped) {
      return std::to_string(EvaluateArithmetic(out, fmt::format("{}: --{}", where, option)));
    }
    return out;
  }

  const JobFileEnvironment& env_;
  std::vector<OpenFile> open_;  // the files being read, each included by the one before
  std::vector<JobFileSection> sections_;
  size_t bytes_read_ = 0, includes_ = 0, job_sections_ = 0, settings_bytes_ = 0;
  size_t global_settings_ = 0, job_settings_ = 0;
};

// Closes a file descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::optional<JobFileContents> ReadJobFileFromDisk(const std::string& path, size_t limit) {
  const auto failed = [](std::string_view doing) {
    return UsageError(fmt::format("cannot {} it: {}", doing, std::strerror(errno)));
  };
  const UsageError not_regular("not a regular file (a job file must be one)");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw failed("open");
  }
  // Checked before opening (a device is never opened) and after (the file may have changed); the
  // open does not block on a FIFO put there between the two.
  if (!S_ISREG(st.st_mode)) throw not_regular;
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) throw failed("open");
  if (::fstat(fd.get(), &st) != 0) throw failed("read");
  if (!S_ISREG(st.st_mode)) throw not_regular;
  JobFileContents file;
  file.identity = fmt::format("{}:{}", st.st_dev, st.st_ino);
  // At most limit + 1 bytes, whatever the size says (files in /proc say 0).
  file.text.resize(std::min<uint64_t>(limit + 1, std::max<int64_t>(st.st_size, 0) + 1));
  size_t got = 0;
  for (;;) {
    if (got == file.text.size()) {
      if (got > limit) break;
      file.text.resize(std::min(limit + 1, got * 2 + 4096));
    }
    const ssize_t n = ::read(fd.get(), file.text.data() + got, file.text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw failed("read");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  file.text.resize(got);
  return file;
}

JobFileEnvironment JobFileEnvironment::System() {
  JobFileEnvironment env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  env.ncpus = cpus > 0 ? static_cast<uint64_t>(cpus) : 1;
  env.pagesize = page > 0 ? static_cast<uint64_t>(page) : 4096;
  env.mb_memory = pages > 0 ? static_cast<uint64_t>(pages) * env.pagesize / (1024 * 1024) : 1;
  return env;
}

std::vector<JobFileSection> ParseJobFile(const std::string& path, const JobFileEnvironment& env) {
  Parser parser(env);
  parser.ReadJobFile(path);
  return parser.Take();
}

std::string ShowCommand(const std::vector<std::string>& files, const JobFileEnvironment& env,
                        std::string_view program) {
  std::string out;
  for (const std::string& file : files) {
    out += program;
    std::vector<JobFileSetting> global;
    for (const JobFileSection& section : ParseJobFile(file, env)) {
      const auto add = [&out, &section](const JobFileSetting& s) {
        out += s.bare ? fmt::format(" --{}", s.name) : fmt::format(" --{}={}", s.name, s.value);
        if (out.size() > kShowCommandMaxBytes) {
          throw UsageError(fmt::format(
              "{}: --showcmd: the command lines would take more than {} MiB (each global section "
              "repeats the global settings before it, as in fio)",
              section.origin, kShowCommandMaxBytes >> 20));
        }
      };
      if (section.global) {
        global.insert(global.end(), section.settings.begin(), section.settings.end());
        for (const JobFileSetting& s : global) add(s);
        continue;
      }
      out += fmt::format(" --name={}", section.name);
      for (const JobFileSetting& s : section.settings) add(s);
    }
    out += " \n";
  }
  return out;
}

}  // namespace iotail::cli
