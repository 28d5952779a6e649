#include "engine/buffer_fill.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "engine/io_pattern.h"
#include "stats/core/errors.h"

namespace iotail::engine {

namespace {

void FillRandom(char* buf, size_t len, FastRandom& rng) {
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    const uint64_t v = rng.Next();
    std::memcpy(buf + i, &v, 8);
  }
  if (i < len) {
    const uint64_t v = rng.Next();
    std::memcpy(buf + i, &v, len - i);
  }
}

// The pattern repeated from its start (zeros without one).
void FillPattern(char* buf, size_t len, const std::string& pattern) {
  if (pattern.empty()) {
    std::memset(buf, 0, len);
    return;
  }
  for (size_t i = 0; i < len;) {
    const size_t n = std::min(pattern.size(), len - i);
    std::memcpy(buf + i, pattern.data(), n);
    i += n;
  }
}

}  // namespace

void BufferContent::Fill(char* buf, size_t len, FastRandom& rng) const {
  if (compress_percentage == 0) {
    if (!pattern.empty() || zeros) {
      FillPattern(buf, len, pattern);  // zeros without a pattern
    } else {
      FillRandom(buf, len, rng);
    }
    return;
  }
  // fio's fill_random_buf_percentage, chunk by chunk.
  const size_t chunk = compress_chunk != 0 ? compress_chunk : len;  // 0: the whole buffer
  for (size_t at = 0; at < len;) {
    const size_t segment = std::min(chunk, len - at);
    const size_t random = segment * (100 - std::min<uint32_t>(compress_percentage, 100)) / 100;
    FillRandom(buf + at, random, rng);
    FillPattern(buf + at + random, segment - random, pattern);
    at += segment;
  }
}

std::string ParseBufferPattern(std::string_view text, std::string_view option) {
  const auto bad = [&](std::string_view why) {
    return stats::UsageError(fmt::format(
        "--{}: {} in '{}' (a pattern is \"text\", 0x hex bytes or a decimal number, one after "
        "another)",
        option, why, text));
  };
  const auto digit = [](char c, int base) {
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : 99;
    return d < base ? d : -1;
  };
  std::string bytes;
  for (size_t at = 0; at < text.size();) {
    if (text[at] == '"') {
      const size_t close = text.find('"', at + 1);
      if (close == std::string_view::npos) throw bad("a \" without its end");
      bytes += text.substr(at + 1, close - at - 1);
      at = close + 1;
    } else if (text.substr(at, 2) == "0x" || text.substr(at, 2) == "0X") {
      size_t end = at + 2;
      while (end < text.size() && digit(text[end], 16) >= 0) ++end;
      std::string digits(text.substr(at + 2, end - at - 2));
      if (digits.empty()) throw bad("0x without hex digits");
      if (digits.size() % 2) digits.insert(digits.begin(), '0');
      for (size_t i = 0; i < digits.size(); i += 2) {
        bytes += static_cast<char>(digit(digits[i], 16) * 16 + digit(digits[i + 1], 16));
      }
      at = end;
    } else if (digit(text[at], 10) >= 0) {
      // fio: a decimal number is its bytes, least significant first, as few as hold it.
      size_t end = at;
      uint64_t value = 0;
      for (; end < text.size() && digit(text[end], 10) >= 0; ++end) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, static_cast<uint64_t>(digit(text[end], 10)), &value)) {
          throw bad("a number past 2^64 - 1");
        }
      }
      do {
        bytes += static_cast<char>(value & 0xff);
        value >>= 8;
      } while (value != 0);
      at = end;
    } else {
      throw bad(fmt::format("unexpected '{}'", text[at]));
    }
  }
  if (bytes.empty()) throw bad("an empty pattern");
  return bytes;
}

}  // namespace iotail::engine
