// Tests of the JSON string escaper shared by every JSON writer.
#include "stats/util/json.h"

#include <gtest/gtest.h>

#include <string>

namespace iotail::stats {
namespace json_test {

TEST(JsonTest, PlainTextIsCopied) {
  EXPECT_EQ(JsonEscape("read:p99<=2ms"), "read:p99<=2ms");
  EXPECT_EQ(JsonEscape(""), "");
  EXPECT_EQ(JsonEscape("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 passes through
}

TEST(JsonTest, QuotesBackslashesAndControlCharactersAreEscaped) {
  EXPECT_EQ(JsonEscape("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(JsonEscape(std::string("\n\t\x1f\0", 4)), "\\u000a\\u0009\\u001f\\u0000");
  EXPECT_EQ(JsonEscape("\x7f"), "\x7f");
}

TEST(JsonTest, JsonStringAddsTheQuotes) {
  EXPECT_EQ(JsonString("x\"y"), "\"x\\\"y\"");
  EXPECT_EQ(JsonString(""), "\"\"");
}

}  // namespace json_test
}  // namespace iotail::stats
