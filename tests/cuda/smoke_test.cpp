#include <gtest/gtest.h>
#include "backends/cuda/device.h"
TEST(CudaSmoke, DeviceCount) {
  if (wf::cuda::deviceCount() == 0) GTEST_SKIP() << wf::cuda::noDeviceReason();
  auto d = wf::cuda::Device::get(0);
  ASSERT_TRUE(d.hasValue()) << d.status().toString();
}
