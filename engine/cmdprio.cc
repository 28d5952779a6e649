// fio's cmdprio (engine/cmdprio.h): the options' syntax and the per-I/O choice, as fio 3.33's
// engines/cmdprio.c and options.c (split_parse_prio_ddir) define them.
#include "engine/cmdprio.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

constexpr size_t kMaxCmdPrioEntries = 64;  // fio's BSSPLIT_MAX

[[noreturn]] void BadCmdPrioSplit(std::string_view entry, std::string_view why) {
  throw stats::UsageError(fmt::format("--cmdprio_bssplit: '{}': {}", entry, why));
}

// A block size with fio's suffixes (4k, 1M; powers of 1024, as bssplit's).
uint64_t ParseCmdPrioBs(std::string_view entry, std::string_view text) {
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p == text.data())
    BadCmdPrioSplit(entry, "expected a block size (4k, 1m)");
  std::string unit(p, text.data() + text.size());
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.ends_with("ib")) unit.erase(unit.size() - 2, 1);  // KiB: as KB (kb_base=1024)
  if (unit.ends_with("b") && unit.size() > 1) unit.pop_back();
  int shift = -1;
  if (unit.empty() || unit == "b") shift = 0;
  if (unit == "k") shift = 10;
  if (unit == "m") shift = 20;
  if (unit == "g") shift = 30;
  if (shift < 0) BadCmdPrioSplit(entry, "expected a block size (4k, 1m)");
  return v << shift;
}

// A number as sscanf's %u reads one: the digits at the front, the rest left; false: none.
bool ReadCmdPrioNumber(std::string_view& s, uint32_t& out) {
  size_t n = 0;
  while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
  if (n == 0) return false;
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + n, v);
  out = static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX));
  s.remove_prefix(n);
  return true;
}

// BS[/PERC[/CLASS/LEVEL]]: as fio's sscanf("%m[^/]/%u/%u/%u"): the fields read up to the first
// that does not match; three is an error, anything after the fourth is ignored.
CmdPrioSplit ParseCmdPrioEntry(std::string_view entry, const SizeParser& parse_size) {
  const size_t slash = entry.find('/');
  const std::string_view bs = entry.substr(0, slash);
  if (bs.empty()) BadCmdPrioSplit(entry, "expected BS/PERC or BS/PERC/CLASS/LEVEL");
  CmdPrioSplit out;
  out.bs = parse_size ? parse_size(bs, "cmdprio_bssplit") : ParseCmdPrioBs(entry, bs);
  uint32_t fields[3] = {};
  int matched = 0;
  std::string_view rest = slash == std::string_view::npos ? "" : entry.substr(slash);
  for (; matched < 3 && rest.starts_with('/'); ++matched) {
    rest.remove_prefix(1);
    if (!ReadCmdPrioNumber(rest, fields[matched])) break;
  }
  if (matched == 2) BadCmdPrioSplit(entry, "a class needs its level: BS/PERC/CLASS/LEVEL");
  // fio clamps a share over 100 to 100: refused here, a typo rather than a share.
  if (fields[0] > 100) BadCmdPrioSplit(entry, "a share over 100%");
  out.perc = fields[0];
  if (matched == 3)
    out.prio = IoprioValue(std::min<int>(fields[1], 3), std::min<int>(fields[2], 7));
  return out;
}

// One direction's list: its entries with a share, sorted by block size as fio sorts them (equal
// block sizes keep their order here).
std::vector<CmdPrioSplit> ParseCmdPrioList(std::string_view text, const SizeParser& parse_size) {
  std::vector<CmdPrioSplit> out;
  size_t count = 0;
  while (!text.empty()) {
    const size_t colon = text.find(':');
    const std::string_view entry = text.substr(0, colon);
    if (entry.empty() && count == 0) {
      throw stats::UsageError(
          "--cmdprio_bssplit: a direction's list is empty (expected BS/PERC[/CLASS/LEVEL][:...])");
    }
    if (entry.empty()) break;  // fio stops at an empty entry
    if (++count > kMaxCmdPrioEntries) BadCmdPrioSplit(entry, "more than 64 entries");
    const CmdPrioSplit e = ParseCmdPrioEntry(entry, parse_size);
    if (e.perc != 0) out.push_back(e);
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CmdPrioSplit& a, const CmdPrioSplit& b) { return a.bs < b.bs; });
  return out;
}

}  // namespace

void ParseCmdPrioBssplit(std::string_view text, CmdPrioOptions& out, const SizeParser& parse_size) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.empty()) {
    throw stats::UsageError(
        "--cmdprio_bssplit: empty (expected BS/PERC[/CLASS/LEVEL][:...], or R,W per direction)");
  }
  const size_t comma = text.find(',');
  if (comma == std::string_view::npos) {
    out.bssplit[0] = out.bssplit[1] = ParseCmdPrioList(text, parse_size);
  } else {
    out.bssplit[0] = ParseCmdPrioList(text.substr(0, comma), parse_size);
    std::string_view w = text.substr(comma + 1);
    w = w.substr(0, w.find(','));  // a third part is the trims': fio ignores it for cmdprio
    out.bssplit[1] = ParseCmdPrioList(w, parse_size);
  }
  out.bssplit_given = !text.empty();
  // fio checks each block size's total when it builds its tables: the same error, earlier.
  for (const auto& list : out.bssplit) {
    for (size_t i = 0; i < list.size();) {
      uint32_t total = 0;
      size_t k = i;
      for (; k < list.size() && list[k].bs == list[i].bs; ++k) total += list[k].perc;
      if (total > 100) {
        throw stats::UsageError(fmt::format(
            "--cmdprio_bssplit: the shares of block size {} add up to {}%, more than 100",
            list[i].bs, total));
      }
      i = k;
    }
  }
}

uint16_t CmdPrio::IndexOf(Dir& dir, uint16_t value) {
  for (size_t i = 0; i < dir.values.size(); ++i) {
    if (dir.values[i] == value) return static_cast<uint16_t>(i);
  }
  dir.values.push_back(value);
  return static_cast<uint16_t>(dir.values.size() - 1);
}

CmdPrio::CmdPrio(const CmdPrioOptions& o, uint16_t job_ioprio, bool reads, bool writes)
    : bssplit_(o.bssplit_given), job_ioprio_(job_ioprio) {
  for (int d = 0; d < 2; ++d) {
    if ((d == 0 && !reads) || (d == 1 && !writes)) continue;
    Dir& dir = dirs_[static_cast<size_t>(d)];
    // As fio: an unset class is the real-time class, for a direction that has cmdprio at all.
    const uint16_t implicit =
        IoprioValue(o.cls[d] != 0 ? static_cast<int>(o.cls[d]) : 1, static_cast<int>(o.level[d]));
    if (bssplit_) {
      const std::vector<CmdPrioSplit>& list = o.bssplit[static_cast<size_t>(d)];
      if (list.empty()) continue;
      dir.values.push_back(job_ioprio);
      for (const CmdPrioSplit& e : list) {
        if (dir.bs.empty() || dir.bs.back().bs != e.bs) dir.bs.push_back({e.bs, 0, {}});
        BsPrios& b = dir.bs.back();
        const uint16_t value = e.prio < 0 ? implicit : static_cast<uint16_t>(e.prio);
        b.total += e.perc;
        b.prios.push_back({b.total, value, IndexOf(dir, value)});
      }
    } else {
      if (o.percentage[d] == 0) continue;
      dir.values.push_back(job_ioprio);
      dir.percentage = o.percentage[d];
      dir.perc_prio = {dir.percentage, implicit, IndexOf(dir, implicit)};
    }
    active_ = true;
  }
}

CmdPrio::Choice CmdPrio::Choose(stats::Direction d, uint64_t bs, uint32_t percent) const {
  const Choice own{job_ioprio_, 0, false};
  if (d == stats::Direction::kTrim) return own;
  const Dir& dir = dirs_[static_cast<size_t>(d)];
  if (!bssplit_) {
    if (percent >= dir.percentage) return own;
    return {dir.perc_prio.ioprio, dir.perc_prio.index, true};
  }
  for (const BsPrios& b : dir.bs) {
    if (b.bs != bs) continue;
    if (percent >= b.total) return own;
    for (const Prio& p : b.prios) {
      if (percent < p.perc) return {p.ioprio, p.index, true};
    }
  }
  return own;
}

std::span<const uint16_t> CmdPrio::Priorities(stats::Direction d) const {
  if (d == stats::Direction::kTrim) return {};
  return dirs_[static_cast<size_t>(d)].values;
}

}  // namespace iotail::engine
