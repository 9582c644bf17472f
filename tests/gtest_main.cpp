// The test binaries' main: googletest's, except that a run in which no test passed because every
// one was skipped (a GPU suite on a machine without a GPU) exits 77, which CTest reports as
// skipped (cmake/GTestSuites.cmake), never as passed. A failure still exits 1.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  const testing::UnitTest& run = *testing::UnitTest::GetInstance();
  if (rc == 0 && run.successful_test_count() == 0 && run.skipped_test_count() > 0) return 77;
  return rc;
}
