// engine/shared_library.h: a library loaded with dlopen, its symbols bound into typed pointers,
// and the errors that name who needs what from which Debian package.
#include "engine/shared_library.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace iotail::engine {
namespace shared_library_test {

constexpr LibraryName kLibc{"libc.so.6", "libc6", "glibc"};

TEST(SharedLibraryTest, BindsFunctionsAndObjects) {
  const SharedLibrary<std::runtime_error> libc(kLibc, "the test");
  size_t (*length)(const char*) = nullptr;
  libc.Bind(length, "strlen");
  ASSERT_NE(length, nullptr);
  EXPECT_EQ(length("hello"), 5u);
  // An object: glibc's program_invocation_short_name (not named in this program, so that the
  // binary holds no copy of it), the name this test runs under.
  char** name = nullptr;
  libc.Bind(name, "program_invocation_short_name");
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(std::string(*name), std::filesystem::read_symlink("/proc/self/exe").filename());
}

TEST(SharedLibraryTest, AMissingLibraryNamesWhoNeedsItAndItsPackage) {
  try {
    SharedLibrary<std::invalid_argument>({"libiotail-none.so.9", "libiotail-none9", "none"},
                                         "--some_option");
    FAIL() << "loaded a library that is not there";
  } catch (const std::invalid_argument& e) {  // the caller's error type
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--some_option needs libiotail-none.so.9 (Debian package "
                         "libiotail-none9): ",
                         0),
              0u)
        << what;
    EXPECT_NE(what.find("cannot open shared object file"), std::string::npos) << what;  // dlerror
  }
}

TEST(SharedLibraryTest, AMissingSymbolSaysTheLibraryIsTooOld) {
  const SharedLibrary<std::runtime_error> libc(kLibc, "the test");
  void (*missing)() = nullptr;
  try {
    libc.Bind(missing, "iotail_no_such_symbol");
    FAIL() << "bound a symbol that is not there";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the test: libc.so.6 has no iotail_no_such_symbol: too old a glibc?");
  }
  EXPECT_EQ(missing, nullptr);
}

}  // namespace shared_library_test
}  // namespace iotail::engine
