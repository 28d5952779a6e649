// fio's verify_pattern (engine/verify.h): its syntax as fio 3.33 reads it (lib/pattern.c's
// pieces: hex, decimal, "text", 'file', %o), and the pattern laid over and compared with a block.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/verify.h"
#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

constexpr uint32_t kPatternOffsetBytes = 8;  // %o: the block's offset, 8 bytes little-endian

[[noreturn]] void BadPattern(std::string_view text, std::string_view why) {
  throw stats::UsageError(fmt::format("--verify_pattern={}: {}", text, why));
}

bool IsPatternHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// Appends bytes to the pattern, refusing to pass fio's 512.
struct PatternBuilder {
  std::string_view text;
  VerifyPattern p;
  void Put(uint8_t b) {
    if (p.size == p.bytes.size()) BadPattern(text, "longer than 512 bytes");
    p.bytes[p.size++] = b;
  }
};

// 0x/0X and hex digits, in the order written (an odd count: the first digit alone is a byte);
// "0xff0x14" is two numbers, as in fio.
size_t ParsePatternHex(std::string_view s, PatternBuilder& b) {
  size_t n = 2;
  while (n < s.size() && IsPatternHex(s[n])) ++n;
  if (n == 2) BadPattern(b.text, "0x without hex digits");
  if (n < s.size() && (s[n] == 'x' || s[n] == 'X') && s[n - 1] == '0') --n;
  std::string_view digits = s.substr(2, n - 2);
  auto nibble = [](char c) {
    return static_cast<uint8_t>(
        std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c | 0x20) - 'a' + 10);
  };
  if (digits.size() % 2 == 1) {
    b.Put(nibble(digits[0]));
    digits.remove_prefix(1);
  }
  for (size_t i = 0; i < digits.size(); i += 2) {
    b.Put(static_cast<uint8_t>(nibble(digits[i]) << 4 | nibble(digits[i + 1])));
  }
  return n;
}

// A decimal integer up to the next "0x" (fio reads "-100xab" as -10 then 0xab): its significant
// bytes, least significant first (0 is one zero byte; a negative number its four bytes).
size_t ParsePatternDecimal(std::string_view s, PatternBuilder& b) {
  std::string head(s);
  for (size_t i = 0; i + 1 < head.size(); ++i) {
    if (head[i] == '0' && (head[i + 1] == 'x' || head[i + 1] == 'X')) {
      head.resize(i);
      break;
    }
  }
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(head.c_str(), &end, 10);
  if (end == head.c_str() || errno == ERANGE || v > INT_MAX || v < INT_MIN) {
    BadPattern(b.text, fmt::format("'{}' is not a hex number (0x...), a decimal integer, \"text\", "
                                   "'file' or %o",
                                   s));
  }
  if (v == 0) {
    b.Put(0);
  } else {
    for (auto u = static_cast<uint32_t>(v); u != 0; u >>= 8) b.Put(static_cast<uint8_t>(u & 0xff));
  }
  return static_cast<size_t>(end - head.c_str());
}

// 'name': the file's first bytes, as many as the pattern has room for.
size_t ParsePatternFile(std::string_view s, PatternBuilder& b) {
  const size_t end_quote = s.find('\'', 1);
  if (end_quote == std::string_view::npos) BadPattern(b.text, "a 'file' without its closing quote");
  const std::string name(s.substr(1, end_quote - 1));
  const int fd = open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) BadPattern(b.text, fmt::format("cannot open '{}': {}", name, std::strerror(errno)));
  const ssize_t got = read(fd, b.p.bytes.data() + b.p.size, b.p.bytes.size() - b.p.size);
  close(fd);
  if (got <= 0) BadPattern(b.text, fmt::format("nothing read from '{}'", name));
  b.p.size += static_cast<uint32_t>(got);
  return end_quote + 1;
}

}  // namespace

VerifyPattern ParseVerifyPattern(std::string_view text) {
  PatternBuilder b{text, {}};
  if (text.empty()) BadPattern(text, "empty");
  for (std::string_view s = text; !s.empty();) {
    size_t used;
    if (s[0] == '"') {
      const size_t close = s.find('"', 1);
      if (close == std::string_view::npos)
        BadPattern(text, "a \"string\" without its closing quote");
      if (close == 1) BadPattern(text, "an empty \"string\"");
      for (size_t i = 1; i < close; ++i) b.Put(static_cast<uint8_t>(s[i]));
      used = close + 1;
    } else if (s[0] == '\'') {
      used = ParsePatternFile(s, b);
    } else if (s[0] == '%') {
      if (!s.starts_with("%o")) BadPattern(text, "the only format is %o (the block's offset)");
      if (b.p.offsets == b.p.offset_at.size()) BadPattern(text, "more than 8 %o");
      b.p.offset_at[b.p.offsets++] = b.p.size;
      for (uint32_t i = 0; i < kPatternOffsetBytes; ++i) b.Put(0);
      used = 2;
    } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && IsPatternHex(s[2])) {
      used = ParsePatternHex(s, b);
    } else {
      used = ParsePatternDecimal(s, b);
    }
    s.remove_prefix(used);
  }
  return b.p;
}

namespace {

// The pattern's one period with the offset pasted at each %o (cut where the pattern ends).
void PatternPeriod(const VerifyPattern& p, uint64_t offset, uint8_t* out) {
  std::memcpy(out, p.bytes.data(), p.size);
  for (uint32_t i = 0; i < p.offsets; ++i) {
    for (uint32_t k = 0; k < kPatternOffsetBytes && p.offset_at[i] + k < p.size; ++k) {
      out[p.offset_at[i] + k] = static_cast<uint8_t>(offset >> (8 * k));
    }
  }
}

}  // namespace

void FillPattern(char* buf, uint32_t len, uint64_t offset, const VerifyPattern& pattern) {
  uint8_t period[512];
  PatternPeriod(pattern, offset, period);
  for (uint32_t at = 0; at < len; at += pattern.size) {
    std::memcpy(buf + at, period, std::min(pattern.size, len - at));
  }
}

PatternMismatch FindPatternMismatch(const char* buf, uint32_t len, uint32_t phase, uint64_t offset,
                                    const VerifyPattern& pattern) {
  uint8_t period[512];
  PatternPeriod(pattern, offset, period);
  const auto* p = reinterpret_cast<const uint8_t*>(buf);
  uint32_t at = 0;
  uint32_t k = phase % pattern.size;
  while (at < len) {
    const uint32_t n = std::min(pattern.size - k, len - at);
    if (std::memcmp(p + at, period + k, n) != 0) {
      for (uint32_t i = 0; i < n; ++i) {
        if (p[at + i] != period[k + i]) return {at + i, p[at + i], period[k + i]};
      }
    }
    at += n;
    k = 0;
  }
  return {len, 0, 0};
}

}  // namespace iotail::engine
