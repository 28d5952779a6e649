#include "stats/util/printable_text.h"

#include <fmt/format.h>

namespace iotail::stats {

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

size_t FindUnprintable(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = s[i] == '\t' ? 1 : PrintableLength(s.substr(i));
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

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

}  // namespace iotail::stats
