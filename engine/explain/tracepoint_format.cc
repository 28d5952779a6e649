#include "engine/explain/tracepoint_format.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace iotail::engine {
namespace {

// The number after `key` ("offset:") in `line`, if any.
std::optional<uint32_t> NumberAfter(std::string_view line, std::string_view key) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const char* begin = line.data() + at + key.size();
  uint32_t value = 0;
  const auto [end, ec] = std::from_chars(begin, line.data() + line.size(), value);
  if (ec != std::errc() || end == begin) return std::nullopt;
  return value;
}

}  // namespace

std::vector<TracepointField> ParseTracepointFormat(std::string_view text) {
  std::vector<TracepointField> fields;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    const size_t start = line.find("field:");
    const size_t semicolon = line.find(';');
    if (start == std::string_view::npos || semicolon == std::string_view::npos) continue;
    std::string_view declaration = line.substr(start + 6, semicolon - start - 6);
    // "char rwbs[10]" names rwbs; "__data_loc char[] cmd" names cmd.
    if (declaration.ends_with(']')) declaration = declaration.substr(0, declaration.rfind('['));
    const size_t space = declaration.find_last_of(" \t*");
    const std::string_view name =
        space == std::string_view::npos ? declaration : declaration.substr(space + 1);
    const auto offset = NumberAfter(line, "offset:");
    const auto size = NumberAfter(line, "size:");
    if (name.empty() || !offset || !size) continue;
    fields.push_back({std::string(name), *offset, *size});
  }
  return fields;
}

std::optional<TracepointField> FindField(const std::vector<TracepointField>& fields,
                                         std::string_view name) {
  for (const TracepointField& field : fields) {
    if (field.name == name) return field;
  }
  return std::nullopt;
}

std::string TracefsDir() {
  constexpr const char* kDebugfs = "/sys/kernel/debug/tracing";
  return ::access(kDebugfs, F_OK) == 0 ? kDebugfs : "/sys/kernel/tracing";
}

std::vector<TracepointField> ReadTracepointFormat(std::string_view group, std::string_view name) {
  const std::string path = fmt::format("{}/events/{}/{}/format", TracefsDir(), group, name);
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(
        fmt::format("cannot read {}: {} (is tracefs mounted?)", path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseTracepointFormat(text.str());
}

}  // namespace iotail::engine
