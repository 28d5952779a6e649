// FioNumber against what fio 3.33 printed, in the same run, for the numbers its JSON holds (null
// engine, 2 s runs, e.g. `fio --name=x --ioengine=null --size=1g --runtime=2 --time_based
// --rate_iops=100 --bs=4k --output-format=normal,json`: bw_bytes 409395, iops 99.950025,
// io_bytes 819200 printed as "read: IOPS=99, BW=400KiB/s (409kB/s)" and "io=800KiB (819kB)").
#include "stats/core/fio_numbers.h"

#include <gtest/gtest.h>

#include <cmath>

namespace iotail::stats {
namespace fio_numbers_test {

TEST(FioNumberTest, RatesAsFioPrintsThem) {
  struct Case {
    double bw_bytes, iops, io_bytes;
    const char *bw, *bw_decimal, *iops_text, *io, *io_decimal;
  };
  const Case cases[] = {
      {409395, 99.950025, 819200, "400KiB", "409kB", "99", "800KiB", "819kB"},
      {1535, 2.998501, 3072, "1535B", "1535B", "2", "3072B", "3072B"},
      {10236929, 2499.250375, 20484096, "9997KiB", "10.2MB", "2499", "19.5MiB", "20.5MB"},
      {163760167, 39980.509745, 327684096, "156MiB", "164MB", "40.0k", "313MiB", "328MB"},
      {20467251430, 4996887.556222, 40954970112, "19.1GiB", "20.5GB", "4997k", "38.1GiB", "41.0GB"},
      {10234, 9.995002, 20480, "9.99KiB", "10.2kB", "9", "20.0KiB", "20.5kB"},
      {458522, 6.996502, 917504, "448KiB", "459kB", "6", "896KiB", "918kB"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FioNumber(c.bw_bytes, FioUnits::kBinaryBytes), c.bw) << c.bw_bytes;
    EXPECT_EQ(FioNumber(c.bw_bytes, FioUnits::kDecimalBytes), c.bw_decimal) << c.bw_bytes;
    EXPECT_EQ(FioNumber(c.iops, FioUnits::kCount), c.iops_text) << c.iops;
    EXPECT_EQ(FioNumber(c.io_bytes, FioUnits::kBinaryBytes), c.io) << c.io_bytes;
    EXPECT_EQ(FioNumber(c.io_bytes, FioUnits::kDecimalBytes), c.io_decimal) << c.io_bytes;
  }
}

TEST(FioNumberTest, NothingAndNonsenseReadAsZero) {
  EXPECT_EQ(FioNumber(0, FioUnits::kBinaryBytes), "0B");
  EXPECT_EQ(FioNumber(-5, FioUnits::kCount), "0");
  EXPECT_EQ(FioNumber(std::nan(""), FioUnits::kDecimalBytes), "0B");
  EXPECT_EQ(FioNumber(0.4, FioUnits::kBinaryBytes), "0B");  // under a byte per second
  // 4 I/Os over 1.00002 s: fio, dividing by whole milliseconds, says 4.
  EXPECT_EQ(FioNumber(4 / 1.00002, FioUnits::kCount), "4");
}

// Latency minima and maxima as fio 3.33 printed them in its text (`clat (nsec): min=1436,
// max=41539`, `max=3944.3k` for 3944347 ns).
TEST(FioWholeNumberTest, LatencyBoundsAsFioPrintsThem) {
  EXPECT_EQ(FioWholeNumber(0), "0");
  EXPECT_EQ(FioWholeNumber(1436), "1436");
  EXPECT_EQ(FioWholeNumber(999999), "999999");
  EXPECT_EQ(FioWholeNumber(3944347), "3944.3k");
  EXPECT_EQ(FioWholeNumber(3900712), "3900.7k");
  EXPECT_EQ(FioWholeNumber(1234567), "1234.6k");
  EXPECT_EQ(FioWholeNumber(9999999), "10000.0k");    // fio's carry into the whole part
  EXPECT_EQ(FioWholeNumber(12345678901), "12346M");  // no room for a decimal: rounded
  EXPECT_EQ(FioWholeNumber(123456789012), "123457M");
}

}  // namespace fio_numbers_test
}  // namespace iotail::stats
