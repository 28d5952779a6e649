#include "engine/replay/iolog_reader.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <limits>

namespace iotail::engine::replay {

namespace {

constexpr std::string_view kVersion2 = "fio version 2 iolog";
constexpr std::string_view kVersion3 = "fio version 3 iolog";

// Splits `line` at blanks into at most `max` fields; returns how many (max + 1: too many).
size_t SplitFields(std::string_view line, std::string_view* fields, size_t max) {
  size_t n = 0;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i == line.size()) break;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (n == max) return max + 1;
    fields[n++] = line.substr(i, j - i);
    i = j;
  }
  return n;
}

bool ParseU64(std::string_view s, uint64_t* v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

struct Action {
  std::string_view name;
  TraceOp op;
  bool io;  // takes OFFSET LENGTH
};
constexpr Action kActions[] = {
    {"read", TraceOp::kRead, true},         {"write", TraceOp::kWrite, true},
    {"trim", TraceOp::kTrim, true},         {"sync", TraceOp::kSync, true},
    {"datasync", TraceOp::kDatasync, true}, {"wait", TraceOp::kWait, true},
    {"open", TraceOp::kOpen, false},        {"close", TraceOp::kClose, false},
};

}  // namespace

bool LooksLikeIolog(std::string_view head) {
  return head.starts_with(kVersion2) || head.starts_with(kVersion3);
}

IologReader::IologReader(std::unique_ptr<ByteSource> source)
    : source_(std::move(source)), buf_(std::make_unique<std::array<char, 65536>>()) {
  std::string_view first;
  if (!NextLine(&first)) Fail("empty file, expected fio's \"fio version 3 iolog\" line");
  if (first.starts_with(kVersion2)) {
    version_ = 2;
  } else if (first.starts_with(kVersion3)) {
    version_ = 3;
  } else {
    Fail(
        "not a fio iolog of version 2 or 3 (the first line must be \"fio version 2 iolog\" or "
        "\"fio version 3 iolog\"; fio no longer reads version 1 either)");
  }
}

void IologReader::Fail(std::string_view what) const {
  throw TraceFormatError(fmt::format("{}:{}: {}", source_->name(), line_no_, what));
}

bool IologReader::NextLine(std::string_view* line) {
  for (;;) {
    const char* from = buf_->data() + begin_;
    const void* nl = std::memchr(from, '\n', end_ - begin_);
    if (nl != nullptr) {
      const size_t len = static_cast<const char*>(nl) - from;
      *line = std::string_view(from, len);
      begin_ += len + 1;
      ++line_no_;
      if (len > kMaxLine) Fail(fmt::format("line longer than {} bytes", kMaxLine));
      return true;
    }
    if (eof_) {
      if (begin_ == end_) return false;
      *line = std::string_view(from, end_ - begin_);  // a last line without its newline
      begin_ = end_;
      ++line_no_;
      if (line->size() > kMaxLine) Fail(fmt::format("line longer than {} bytes", kMaxLine));
      return true;
    }
    if (end_ - begin_ > kMaxLine) {
      ++line_no_;
      Fail(fmt::format("line longer than {} bytes", kMaxLine));
    }
    std::memmove(buf_->data(), from, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    const size_t got = source_->Read(buf_->data() + end_, buf_->size() - end_);
    if (got == 0) eof_ = true;
    end_ += got;
  }
}

uint32_t IologReader::DeviceIndex(std::string_view name) {
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i] == name) return static_cast<uint32_t>(i);
  }
  devices_.emplace_back(name);
  return static_cast<uint32_t>(devices_.size() - 1);
}

bool IologReader::ParseLine(std::string_view line, TraceEvent* ev) {
  std::string_view f[6];
  const size_t n = SplitFields(line, f, 5);
  size_t at = 0;  // where FILE is
  uint64_t us = 0;
  if (version_ == 3) {
    if (n == 0) Fail("empty line, expected \"TIME FILE ACTION [OFFSET LENGTH]\"");
    if (!ParseU64(f[0], &us)) {
      Fail(fmt::format("'{}' is not a timestamp (microseconds, a whole number)", f[0]));
    }
    at = 1;
  }
  const std::string_view form =
      version_ == 3 ? "TIME FILE ACTION [OFFSET LENGTH]" : "FILE ACTION [OFFSET LENGTH]";
  if (n != at + 2 && n != at + 4) {
    Fail(fmt::format("{} fields, expected \"{}\"",
                     n > 5 ? std::string("too many") : std::to_string(n), form));
  }
  const std::string_view file = f[at];
  const std::string_view act = f[at + 1];
  if (n == at + 2 && act == "add") {
    DeviceIndex(file);
    return false;
  }
  const Action* a = nullptr;
  for (const Action& x : kActions) {
    if (x.name == act) a = &x;
  }
  if (a == nullptr || (a->io != (n == at + 4)) || (act == "add")) {
    Fail(
        fmt::format("'{}' with {} fields: expected add, open or close without OFFSET LENGTH, "
                    "or read, write, trim, sync, datasync{} with them",
                    act, n, version_ == 2 ? " or wait" : ""));
  }
  if (a->op == TraceOp::kWait && version_ == 3) {
    Fail("'wait' is not allowed in a version 3 iolog (its timestamps pace it)");
  }
  *ev = TraceEvent{};
  ev->op = a->op;
  ev->device = DeviceIndex(file);
  if (a->io) {
    uint64_t off = 0, len = 0;
    if (!ParseU64(f[at + 2], &off)) Fail(fmt::format("'{}' is not an offset in bytes", f[at + 2]));
    if (!ParseU64(f[at + 3], &len) || len > std::numeric_limits<uint32_t>::max()) {
      Fail(fmt::format("'{}' is not a length in bytes (at most 4 GiB - 1)", f[at + 3]));
    }
    if (a->op == TraceOp::kWait) {
      // fio holds until OFFSET milliseconds after its start (mtime_since_genesis).
      ev->time_ns = off * 1'000'000;
    } else {
      ev->offset = off;
      ev->length = static_cast<uint32_t>(len);
    }
  }
  if (version_ == 3) {
    if (!have_origin_) {
      have_origin_ = true;
      origin_us_ = us;
    }
    uint64_t ns = us >= origin_us_ ? (us - origin_us_) * 1000 : 0;
    if (us < origin_us_ || ns < last_ns_) {
      ++backwards_;
      ns = last_ns_;
    }
    last_ns_ = ns;
    ev->time_ns = ns;
    ev->timed = true;
  }
  return true;
}

size_t IologReader::Next(TraceEvent* out, size_t n) {
  size_t got = 0;
  std::string_view line;
  while (got < n && NextLine(&line)) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank
    if (ParseLine(line, &out[got])) ++got;
  }
  return got;
}

}  // namespace iotail::engine::replay
