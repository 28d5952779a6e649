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

namespace iotail::cli {

using stats::UsageError;

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The length of the printable UTF-8 character `s` starts with, or 0 for a control character
// (C0, DEL, C1) or a byte that does not start a well-formed UTF-8 sequence.
size_t PrintableLength(std::string_view s) {
  const auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = byte(0);
  if (c < 0x20 || c == 0x7f) return 0;
  if (c < 0x80) return 1;
  // The length and the range of the second byte (which excludes overlong forms, surrogates and
  // code points above U+10FFFF); later bytes are 0x80-0xbf.
  size_t n = 0;
  unsigned char low = 0x80, high = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    if (c == 0xc2) low = 0xa0;  // U+0080-U+009F are the C1 controls
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) low = 0xa0;
    if (c == 0xed) high = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) low = 0x90;
    if (c == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return n;
}

// Where `s` has its first byte that is not printable UTF-8 (tabs are), or npos.
size_t FindUnprintable(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = s[i] == '\t' ? 1 : PrintableLength(s.substr(i));
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

// `text` as an error message may show it: what is not printable UTF-8 as \xNN, and no more than
// 120 bytes of it.
std::string Printable(std::string_view text) {
  constexpr size_t kShown = 120;
  std::string out;
  size_t i = 0;
  while (i < text.size() && out.size() < kShown) {
    const size_t n = PrintableLength(text.substr(i));
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
    } else {
      out += text.substr(i, n);
      i += n;
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

// A recursive-descent evaluator: expr = term {(+|-) term}; term = power {(*|/|%) power};
// power = unary [^ power]; unary = [-|+] unary | primary; primary = number[suffix] | (expr).
class Arithmetic {
 public:
  Arithmetic(std::string_view text, const std::string& where) : text_(text), where_(where) {}
  int64_t Evaluate() {
    const int64_t v = Expr();
    Skip();
    if (pos_ != text_.size()) Fail(fmt::format("unexpected '{}'", Printable(text_.substr(pos_))));
    return v;
  }

 private:
  // Every recursion eats a '(', a sign or a '^' and holds one of these while it lasts, so the
  // stack is bounded whatever the text.
  class Nested {
   public:
    explicit Nested(Arithmetic& a) : a_(a) {
      if (++a_.depth_ > kArithmeticMaxNesting) {
        a_.Fail(fmt::format("nested deeper than {} (parentheses, signs and '^')",
                            kArithmeticMaxNesting));
      }
    }
    ~Nested() { --a_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Arithmetic& a_;
  };

  [[noreturn]] void Fail(const std::string& why) const {
    throw UsageError(fmt::format("{}: bad arithmetic '{}': {}", where_, Printable(text_), why));
  }
  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // The next character if it is one of `operators` (eaten), else 0.
  char EatOneOf(std::string_view operators) {
    Skip();
    if (pos_ == text_.size() || operators.find(text_[pos_]) == std::string_view::npos) return 0;
    return text_[pos_++];
  }
  void Check(bool overflow) const {
    if (overflow) Fail("overflows 64 bits");
  }
  // `a op b`, checked: an overflow or a division by zero is an error, never a trap.
  int64_t Apply(char op, int64_t a, int64_t b) const {
    int64_t r = 0;
    switch (op) {
      case '+':
        Check(__builtin_add_overflow(a, b, &r));
        return r;
      case '-':
        Check(__builtin_sub_overflow(a, b, &r));
        return r;
      case '*':
        Check(__builtin_mul_overflow(a, b, &r));
        return r;
      default:  // '/' or '%'
        if (b == 0) Fail("division by zero");
        // INT64_MIN / -1 overflows, and the processor traps (SIGFPE) on its remainder too.
        if (b == -1) return op == '%' ? 0 : Apply('-', 0, a);
        return op == '%' ? a % b : a / b;
    }
  }
  // One level of left-associative operators over `operand`.
  int64_t LeftAssociative(std::string_view operators, int64_t (Arithmetic::*operand)()) {
    int64_t v = (this->*operand)();
    for (char op; (op = EatOneOf(operators)) != 0;) v = Apply(op, v, (this->*operand)());
    return v;
  }
  int64_t Expr() { return LeftAssociative("+-", &Arithmetic::Term); }
  int64_t Term() { return LeftAssociative("*/%", &Arithmetic::Power); }
  int64_t Power() {
    const int64_t base = Unary();
    if (!Eat('^')) return base;
    const Nested nested(*this);
    const int64_t exp = Power();
    if (exp < 0) Fail("negative exponent");
    // By squaring: 1^(2^62) must not take 2^62 steps. A square that overflows is needed only
    // while bits of the exponent remain, and then the result overflows too.
    int64_t v = 1, square = base;
    for (int64_t rest = exp; rest != 0; rest >>= 1) {
      if (rest & 1) v = Apply('*', v, square);
      if (rest > 1) square = Apply('*', square, square);
    }
    return v;
  }
  int64_t Unary() {
    if (Eat('-')) {
      const Nested nested(*this);
      return Apply('-', 0, Unary());
    }
    if (Eat('+')) {
      const Nested nested(*this);
      return Unary();
    }
    return Primary();
  }
  int64_t Primary() {
    if (Eat('(')) {
      const Nested nested(*this);
      const int64_t v = Expr();
      if (!Eat(')')) Fail("missing ')'");
      return v;
    }
    Skip();
    const size_t start = pos_;
    int64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      v = Apply('+', Apply('*', v, 10), text_[pos_] - '0');
      ++pos_;
    }
    if (pos_ == start) {
      Fail(pos_ < text_.size() ? fmt::format("unexpected '{}'", Printable(text_.substr(pos_, 1)))
                               : std::string("a number is missing"));
    }
    if (pos_ < text_.size()) {
      const char s = static_cast<char>(std::tolower(static_cast<unsigned char>(text_[pos_])));
      const size_t at = std::string_view("kmgt").find(s);
      if (at != std::string_view::npos) {
        ++pos_;
        for (size_t i = 0; i <= at; ++i) v = Apply('*', v, 1024);
      }
    }
    return v;
  }

  std::string_view text_;
  const std::string& where_;
  size_t pos_ = 0;
  size_t depth_ = 0;  // Nested levels open
};

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
        const std::optional<std::string> v = env_.getenv(name);
        if (!v) {
          throw UsageError(
              fmt::format("{}: ${{{}}} is not set in the environment (fio would drop this job)",
                          where, Printable(name)));
        }
        out += *v;
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
        if (!found) {
          throw UsageError(fmt::format(
              "{}: unknown variable in '{}' (fio's are $ncpus, $mb_memory, $pagesize; ${{VAR}} "
              "for the environment)",
              where, Printable(value)));
        }
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

int64_t EvaluateArithmetic(std::string_view text, const std::string& where) {
  return Arithmetic(text, where).Evaluate();
}

}  // namespace iotail::cli
