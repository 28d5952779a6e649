#include "stats/logs/log_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

#include "stats/core/errors.h"

namespace iotail::stats {
namespace {

constexpr size_t kFixedFields = 3;

// A compression format: its magic number, name and the command that undoes it.
struct Compression {
  std::string_view magic;
  const char* name;
  const char* undo;
};

// The compression format whose magic number `begin` starts with, or nullptr.
const Compression* CompressedFormat(const char* begin, const char* end) {
  static constexpr Compression kFormats[] = {{"\x1f\x8b", "gzip", "gunzip -k"},
                                             {"\xfd"
                                              "7zXZ",
                                              "xz", "unxz -k"},
                                             {"\x28\xb5\x2f\xfd", "zstd", "unzstd"},
                                             {"BZh", "bzip2", "bunzip2 -k"},
                                             {"\x04\x22\x4d\x18", "lz4", "unlz4"},
                                             {"PK\x03\x04", "zip", "unzip"}};
  const std::string_view text(begin, static_cast<size_t>(end - begin));
  for (const Compression& c : kFormats) {
    if (text.starts_with(c.magic)) return &c;
  }
  return nullptr;
}

[[noreturn]] void Fail(LogLinePlace place, const std::string& what) {
  throw LogFormatError(std::string(place.path), place.line, what);
}

[[noreturn]] void FailTime(LogLinePlace place, uint64_t time) {
  Fail(place, fmt::format("field 1: time {} ms is out of range (at most {})", time, kMaxLogTimeMs));
}

[[noreturn]] void FailDdir(LogLinePlace place, uint64_t ddir) {
  Fail(place, fmt::format("field 2: ddir {} is not 0 (read), 1 (write) or 2 (trim)", ddir));
}

std::string Excerpt(const char* begin, const char* end) {
  const char* stop = begin;
  while (stop < end && *stop != ',' && *stop != '\n' && stop - begin < 24) ++stop;
  return std::string(begin, stop);
}

// Eight bytes as the word that a little-endian load of them gives (the first byte lowest).
constexpr uint64_t Word(std::string_view bytes) {
  uint64_t word = 0;
  for (size_t k = 8; k-- > 0;) word = word << 8 | static_cast<unsigned char>(bytes[k]);
  return word;
}
// "0, 0, 0, 0, 0, 0, 0, 0, " as three words: eight empty fields.
constexpr uint64_t kEmptyFields[3] = {Word("0, 0, 0,"), Word(" 0, 0, 0"), Word(", 0, 0, ")};

uint64_t Load64(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

// How many of the (at most max) fields at p are "0, ": a real log's lines are mostly runs of
// them. On a little-endian machine eight at a time, three words compared with the pattern at
// once; the first byte that differs ends the run, so a run of any length costs a compare per 8
// bytes and no branch per field.
inline __attribute__((always_inline)) size_t ZeroFields(const char* p, const char* end,
                                                        size_t max) {
  size_t fields = 0;
  while (std::endian::native == std::endian::little && max - fields >= 8 && end - p >= 24) {
    size_t matched = 0;  // bytes equal to the pattern before the first that differs
    if (const uint64_t x = Load64(p) ^ kEmptyFields[0]; x != 0) {
      matched = static_cast<size_t>(std::countr_zero(x)) / 8;
    } else if (const uint64_t y = Load64(p + 8) ^ kEmptyFields[1]; y != 0) {
      matched = 8 + static_cast<size_t>(std::countr_zero(y)) / 8;
    } else if (const uint64_t z = Load64(p + 16) ^ kEmptyFields[2]; z != 0) {
      matched = 16 + static_cast<size_t>(std::countr_zero(z)) / 8;
    } else {
      fields += 8;
      p += 24;
      continue;
    }
    return fields + matched / 3;
  }
  while (fields < max && end - p >= 3 && p[0] == '0' && p[1] == ',' && p[2] == ' ') {
    ++fields;
    p += 3;
  }
  return fields;
}

// Fast path for the common, canonical line: `n, n, ..., n`, fields separated by one comma and one
// space, no other blanks, at most 15 digits per number (so no overflow). Most fields of a real log
// are "0, ". Parses n fields; the last one must end the line if `last`, else be followed by ", ".
// Returns the position after them, or nullptr on anything else, leaving the line to the careful
// parse, which accepts the same values and reports every error.
//
// Dense (kSparse false): every field is written to out. Sparse: out must be all zeros on entry;
// runs of empty fields (most of a line) are skipped without a store, and the indices of the
// non-zero values are listed in nonzero.
template <bool kSparse>
const char* ParseCanonicalFields(const char* p, const char* end, uint64_t* out, size_t n, bool last,
                                 uint64_t* big_sum, uint32_t* nonzero = nullptr,
                                 size_t* nonzero_count = nullptr) {
  size_t nz = 0;
  for (size_t i = 0; i < n; ++i) {
    // A run of empty buckets, whole (never the last field, which ends differently).
    if (i + 1 < n && end - p >= 3 && p[0] == '0' && p[1] == ',') {
      const size_t zeros = ZeroFields(p, end, n - 1 - i);
      if constexpr (!kSparse) std::memset(out + i, 0, zeros * sizeof(uint64_t));
      i += zeros;
      p += 3 * zeros;
    }
    // One digit: "0, " to "9, " (most of the others).
    if (end - p >= 3 && static_cast<unsigned char>(*p) - unsigned{'0'} <= 9 && p[1] == ',' &&
        p[2] == ' ') {
      const uint64_t digit = static_cast<unsigned char>(*p) - unsigned{'0'};
      out[i] = digit;  // a zero on a zero (sparse): cheaper than a branch that mispredicts
      if constexpr (kSparse) {
        nonzero[nz] = static_cast<uint32_t>(i);
        nz += digit != 0;
      }
      p += 3;
      if (last && i + 1 == n) {                      // a trailing field more than expected
        if constexpr (kSparse) *nonzero_count = nz;  // what was written, for the caller to clear
        return nullptr;
      }
      continue;
    }
    const char* start = p;
    uint64_t value = 0;
    for (unsigned digit; p < end && (digit = static_cast<unsigned char>(*p) - unsigned{'0'}) <= 9;
         ++p) {
      value = value * 10 + digit;
    }
    // Values of 15 digits or more are left to the careful parse, which checks them against
    // kMaxIntervalCount; the sum of the others cannot overflow.
    bool ok = p != start && p - start <= 15;
    if (ok) {
      *big_sum += value;
      out[i] = value;
      if constexpr (kSparse) {
        nonzero[nz] = static_cast<uint32_t>(i);
        nz += value != 0;
      }
      if (last && i + 1 == n) {
        if constexpr (kSparse) *nonzero_count = nz;
        return p == end ? p : nullptr;
      }
      ok = end - p >= 2 && p[0] == ',' && p[1] == ' ';
    }
    if (!ok) {
      if constexpr (kSparse) *nonzero_count = nz;
      return nullptr;
    }
    p += 2;
  }
  if constexpr (kSparse) *nonzero_count = nz;
  return p;
}

}  // namespace

std::optional<HistogramLayout> LayoutOfFieldCount(size_t fields) {
  if (fields <= kFixedFields) return std::nullopt;
  return HistogramLayout::FromColumnCount(fields - kFixedFields);
}

bool LogLineMayBeOfDirection(std::string_view line, Direction d) {
  const char* p = line.data();
  const char* end = p + line.size();
  const char* comma = static_cast<const char*>(std::memchr(p, ',', end - p));
  if (comma == nullptr) return true;
  p = comma + 1;
  while (p < end && *p == ' ') ++p;
  if (p + 1 >= end || *p < '0' || *p > '2' || (p[1] != ',' && p[1] != ' ')) return true;
  return *p - '0' == static_cast<int>(d);
}

void LogLineParser::SetLayout(const HistogramLayout& layout) {
  layout_ = layout;
  counts_.assign(layout.size(), 0);
  nonzero_.resize(layout.size());
  nonzero_count_ = 0;
}

// counts_ is zero but where nonzero_ lists (the canonical parse writes only non-zero counts).
void LogLineParser::ClearCounts() {
  // Through locals: a store to counts_ could alias the members, which were reloaded every time.
  uint64_t* counts = counts_.data();
  const uint32_t* index = nonzero_.data();
  for (size_t j = 0, n = nonzero_count_; j < n; ++j) counts[index[j]] = 0;
  nonzero_count_ = 0;
}

ParsedLogLine LogLineParser::Parse(std::string_view line, LogLineEnd end, LogLinePlace place) {
  const char* begin = line.data();
  const char* stop = begin + line.size();
  // Once the layout is known, most lines take the canonical fast path.
  if (layout_) {
    if (const std::optional<LogLineFields> fields = ParseCanonical(begin, stop, place)) {
      return {*fields, {}};
    }
  }
  const bool torn_allowed = end == LogLineEnd::kEndOfInput;
  // Count fields first: cheap (one vectorised pass; a memchr per comma cost more than the parse
  // on a first line, mostly commas) and lets every error name the real count.
  const size_t fields = 1 + static_cast<size_t>(std::count(begin, stop, ','));
  if (!layout_) {
    const auto layout = LayoutOfFieldCount(fields);
    if (!layout) {
      if (const Compression* c = CompressedFormat(begin, stop)) {
        Fail(place, fmt::format("the file is compressed ({}): histogram logs are read as text; "
                                "decompress it first ({} {})",
                                c->name, c->undo, place.path));
      }
      if (torn_allowed) {
        return {{},
                fmt::format("{}:{}: torn last line ({} fields) ignored", place.path, place.line,
                            fields)};
      }
      if (fields == 5) {
        Fail(place,
             "5 fields: this looks like a compressed (log_compression) or non-histogram fio log, "
             "not a histogram log");
      }
      Fail(place,
           fmt::format("{} fields: not a fio histogram log (expected 3 + 1856, 928, 464, 232, 116, "
                       "58 or 29 columns for fio 3, 3 + 1216 >> c for fio 2, or 3 + 3776 >> c for "
                       "iotail's wide --log_hist_groups=59 logs)",
                       fields));
    }
    SetLayout(*layout);
    // The first line too (a merge of thousands of small logs reads thousands of first lines).
    if (const std::optional<LogLineFields> parsed = ParseCanonical(begin, stop, place)) {
      return {*parsed, {}};
    }
  }
  const size_t expected = layout_->size() + kFixedFields;
  if (fields != expected) {
    if (torn_allowed && fields < expected) {
      return {{},
              fmt::format("{}:{}: torn last line ({} of {} fields) ignored", place.path, place.line,
                          fields, expected)};
    }
    Fail(place, fmt::format("{} fields, expected {} as on the first line ({})", fields, expected,
                            layout_->Describe()));
  }
  return {ParseCarefully(begin, stop, place), {}};
}

// The canonical fast path (the layout known): one pass, no field count first. Returns nullopt for
// anything unusual (blanks, a wrong field count, a non-number, a huge number), which the careful
// parse then takes, so values, errors and their order stay the same.
std::optional<LogLineFields> LogLineParser::ParseCanonical(const char* begin, const char* end,
                                                           LogLinePlace place) {
  uint64_t fixed[kFixedFields];
  uint64_t fixed_sum = 0, sum = 0;
  const char* p = ParseCanonicalFields<false>(begin, end, fixed, kFixedFields, false, &fixed_sum);
  if (p == nullptr) return std::nullopt;
  ClearCounts();
  const bool parsed = ParseCanonicalFields<true>(p, end, counts_.data(), counts_.size(), true, &sum,
                                                 nonzero_.data(), &nonzero_count_) != nullptr;
  if (!parsed || sum + 9 * counts_.size() > kMaxIntervalCount) {
    ClearCounts();        // the careful parse writes every count
    return std::nullopt;  // the careful parse checks (and names) a count too large
  }
  if (fixed[0] > kMaxLogTimeMs) FailTime(place, fixed[0]);
  if (fixed[1] > 2) FailDdir(place, fixed[1]);
  return LogLineFields{fixed[0], fixed[1], fixed[2]};
}

// The careful parse of a line with the right field count: blanks around fields, every error named.
LogLineFields LogLineParser::ParseCarefully(const char* begin, const char* end,
                                            LogLinePlace place) {
  const char* p = begin;
  size_t field = 0;
  auto parse = [&]() -> uint64_t {
    ++field;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    const char* start = p;
    uint64_t value = 0;
    while (p < end) {
      const unsigned digit = static_cast<unsigned char>(*p) - unsigned{'0'};
      if (digit > 9) break;
      if (__builtin_mul_overflow(value, uint64_t{10}, &value) ||
          __builtin_add_overflow(value, uint64_t{digit}, &value)) {
        Fail(place,
             fmt::format("field {}: number '{}' is out of range", field, Excerpt(start, end)));
      }
      ++p;
    }
    if (p == start) {
      if (p < end && *p == '-')
        Fail(place, fmt::format("field {}: negative value '{}'", field, Excerpt(start, end)));
      Fail(place, fmt::format("field {}: expected a non-negative integer, got '{}'", field,
                              Excerpt(start, end)));
    }
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (p < end) {
      if (*p != ',') {
        Fail(place, fmt::format("field {}: expected a non-negative integer, got '{}'", field,
                                Excerpt(start, end)));
      }
      ++p;
    }
    return value;
  };

  LogLineFields fields;
  fields.time_ms = parse();
  if (fields.time_ms > kMaxLogTimeMs) FailTime(place, fields.time_ms);
  fields.ddir = parse();
  if (fields.ddir > 2) FailDdir(place, fields.ddir);
  fields.block_size = parse();
  uint64_t total = 0;
  ClearCounts();
  for (size_t i = 0; i < counts_.size(); ++i) {
    counts_[i] = parse();
    nonzero_[nonzero_count_] = static_cast<uint32_t>(i);
    nonzero_count_ += counts_[i] != 0;
    if (__builtin_add_overflow(total, counts_[i], &total) || total > kMaxIntervalCount) {
      Fail(place,
           fmt::format("the counts add up to more than {} I/Os in one interval (past bucket {}): "
                       "more than any device completes; the log is damaged",
                       kMaxIntervalCount, i));
    }
  }
  return fields;
}

}  // namespace iotail::stats
