// Tests of the enum name tables: lookups both ways, aliases, unknown names and values.
#include "stats/util/enum_names.h"

#include <gtest/gtest.h>

#include "stats/core/direction.h"

namespace iotail::stats {
namespace enum_names_test {

enum class Color { kRed, kGreen, kBlue };
constexpr EnumName<Color> kColorNames[] = {
    {Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kRed, "crimson"}};

TEST(EnumNamesTest, NameAndValueRoundTrip) {
  EXPECT_EQ(ValueNamed(kColorNames, "green"), Color::kGreen);
  EXPECT_EQ(NameOf(kColorNames, Color::kGreen), "green");
}

TEST(EnumNamesTest, AnAliasParsesButTheFirstNameIsPrinted) {
  EXPECT_EQ(ValueNamed(kColorNames, "crimson"), Color::kRed);
  EXPECT_EQ(NameOf(kColorNames, Color::kRed), "red");
}

TEST(EnumNamesTest, UnknownNamesAndValuesAreReported) {
  EXPECT_EQ(ValueNamed(kColorNames, "Red"), std::nullopt);
  EXPECT_EQ(ValueNamed(kColorNames, ""), std::nullopt);
  EXPECT_EQ(NameOf(kColorNames, Color::kBlue), "?");
}

TEST(EnumNamesTest, DirectionsUseFiosNames) {
  static_assert(DirectionName(Direction::kTrim) == "trim");
  static_assert(DirectionNamed("write") == Direction::kWrite);
  EXPECT_EQ(DirectionNamed("all"), std::nullopt);
}

}  // namespace enum_names_test
}  // namespace iotail::stats
