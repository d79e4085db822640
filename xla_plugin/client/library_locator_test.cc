// LibraryLocator: the environment variable first, then the packages beside pjrtkit's library.
#include "xla_plugin/client/library_locator.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace {

// A fresh directory under the test's temporary directory.
std::string MakeTempDir() {
  std::string pattern =
      std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") + "/locator_XXXXXX";
  char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  char resolved[PATH_MAX];
  EXPECT_NE(realpath(pattern.c_str(), resolved), nullptr);
  return resolved;
}

// Creates `path` (and its parent directories below `root`) as an empty file.
void Touch(const std::string& root, const std::string& relative) {
  std::string dir = root;
  size_t start = 0;
  for (size_t slash = relative.find('/'); slash != std::string::npos;
       slash = relative.find('/', start)) {
    dir = root + "/" + relative.substr(0, slash);
    mkdir(dir.c_str(), 0755);
    start = slash + 1;
  }
  std::ofstream(root + "/" + relative) << "";
}

const LibrarySearch kSearch{
    "PJRTKIT_TEST_PLUGIN",
    {"jax_plugins/xla_cuda13/xla_cuda_plugin.so", "jax_plugins/xla_cuda12/xla_cuda_plugin.so"}};

TEST(LibraryLocatorTest, TheEnvironmentVariableWins) {
  const std::string root = MakeTempDir();
  Touch(root, "lib/plugin.so");
  Touch(root, "site/jax_plugins/xla_cuda13/xla_cuda_plugin.so");
  StatusOr<LocatedLibrary> located = LibraryLocator::Locate(
      kSearch, (root + "/lib/../lib/plugin.so").c_str(), root + "/site/jax_plugins/pjrtkit");
  ASSERT_TRUE(located.ok()) << located.status().ToString();
  EXPECT_EQ(located->path, root + "/lib/plugin.so");  // Resolved.
  EXPECT_EQ(located->how, "environment variable PJRTKIT_TEST_PLUGIN");
}

TEST(LibraryLocatorTest, AVariableNamingNothingIsFailedPrecondition) {
  StatusOr<LocatedLibrary> located = LibraryLocator::Locate(kSearch, "/nonexistent/p.so", "");
  EXPECT_EQ(located.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(located.status().message(),
            "environment variable PJRTKIT_TEST_PLUGIN is '/nonexistent/p.so', which does not "
            "exist");
}

TEST(LibraryLocatorTest, FindsThePackagesBesidePjrtkitInOrder) {
  const std::string root = MakeTempDir();
  Touch(root, "site/jax_plugins/pjrtkit/pjrtkit_plugin.so");
  Touch(root, "site/jax_plugins/xla_cuda12/xla_cuda_plugin.so");
  const std::string library_dir = root + "/site/jax_plugins/pjrtkit";
  StatusOr<LocatedLibrary> located = LibraryLocator::Locate(kSearch, nullptr, library_dir);
  ASSERT_TRUE(located.ok()) << located.status().ToString();
  EXPECT_EQ(located->path, root + "/site/jax_plugins/xla_cuda12/xla_cuda_plugin.so");
  EXPECT_EQ(located->how, "installed beside pjrtkit");
  Touch(root, "site/jax_plugins/xla_cuda13/xla_cuda_plugin.so");  // Earlier in the list.
  located = LibraryLocator::Locate(kSearch, "", library_dir);
  ASSERT_TRUE(located.ok());
  EXPECT_EQ(located->path, root + "/site/jax_plugins/xla_cuda13/xla_cuda_plugin.so");
}

TEST(LibraryLocatorTest, NothingFoundIsNotFoundListingThePlaces) {
  const std::string root = MakeTempDir();
  StatusOr<LocatedLibrary> located = LibraryLocator::Locate(kSearch, nullptr, root + "/a/b");
  EXPECT_EQ(located.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(located.status().message(),
            "looked in PJRTKIT_TEST_PLUGIN (unset); " + root +
                "/a/b/../../jax_plugins/xla_cuda13/xla_cuda_plugin.so; " + root +
                "/a/b/../../jax_plugins/xla_cuda12/xla_cuda_plugin.so");
  located = LibraryLocator::Locate(kSearch, nullptr, "");
  EXPECT_EQ(located.status().message(),
            "looked in PJRTKIT_TEST_PLUGIN (unset); the packages beside pjrtkit (its library's "
            "location is unknown)");
}

TEST(LibraryLocatorTest, ThisLibraryDirectoryIsTheTestBinarysDirectory) {
  const std::string dir = LibraryLocator::ThisLibraryDirectory();
  ASSERT_FALSE(dir.empty());
  EXPECT_EQ(dir[0], '/');
  EXPECT_EQ(access((dir + "/library_locator_test").c_str(), F_OK), 0) << dir;
}

}  // namespace
}  // namespace pjrtkit
