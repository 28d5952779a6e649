#include "stats/util/json.h"

#include <fmt/format.h>

namespace iotail::stats {

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::string JsonString(std::string_view s) { return '"' + JsonEscape(s) + '"'; }

}  // namespace iotail::stats
