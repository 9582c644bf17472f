// The test programs register the built-in backends once, as every WarpForge program does before
// it opens a Session or calls createBackend() (backends/registry.h).
#include <gtest/gtest.h>

#include "backends/registry.h"

namespace {

class RegisterBackends : public ::testing::Environment {
 public:
  void SetUp() override { wf::registerBuiltinBackends(); }
};

const ::testing::Environment* const kRegisterBackends = ::testing::AddGlobalTestEnvironment(new RegisterBackends);

}  // namespace
