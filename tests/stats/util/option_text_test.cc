// Tests of the option-text helpers: list items and finite numbers.
#include "stats/util/option_text.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace iotail::stats {
namespace option_text_test {

std::vector<std::pair<std::string, std::string>> Items(const std::vector<std::string>& args,
                                                       std::string_view separators) {
  std::vector<std::pair<std::string, std::string>> items;
  ForEachListItem(args, separators, [&](std::string_view item, const std::string& arg) {
    items.emplace_back(item, arg);
  });
  return items;
}

TEST(OptionTextTest, ItemsOfEveryArgumentInOrderWithTheirArgument) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Items({"50:99,99.9", "1"}, ":,"),
            (std::vector<P>{
                {"50", "50:99,99.9"}, {"99", "50:99,99.9"}, {"99.9", "50:99,99.9"}, {"1", "1"}}));
  EXPECT_EQ(Items({"a:b"}, ","), (std::vector<P>{{"a:b", "a:b"}}));
}

TEST(OptionTextTest, EmptyItemsArePassedOn) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Items({"a,,b"}, ","), (std::vector<P>{{"a", "a,,b"}, {"", "a,,b"}, {"b", "a,,b"}}));
  EXPECT_EQ(Items({"a,"}, ","), (std::vector<P>{{"a", "a,"}, {"", "a,"}}));
  EXPECT_EQ(Items({""}, ","), (std::vector<P>{{"", ""}}));
  EXPECT_TRUE(Items({}, ",").empty());
}

TEST(OptionTextTest, FiniteDoublesOnlyAndTheWholeText) {
  EXPECT_EQ(ParseFiniteDouble("99.9"), 99.9);
  EXPECT_EQ(ParseFiniteDouble("-2e3"), -2000.0);
  EXPECT_EQ(ParseFiniteDouble(""), std::nullopt);
  EXPECT_EQ(ParseFiniteDouble("1ms"), std::nullopt);
  EXPECT_EQ(ParseFiniteDouble(" 1"), std::nullopt);
  EXPECT_EQ(ParseFiniteDouble("+1"), std::nullopt);
  EXPECT_EQ(ParseFiniteDouble("inf"), std::nullopt);
  EXPECT_EQ(ParseFiniteDouble("nan"), std::nullopt);
}

}  // namespace option_text_test
}  // namespace iotail::stats
