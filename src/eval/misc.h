// Helpers of the miscellaneous CPU kernels (misc.cpp) that tools share: the tensor format of
// `interpreter.print`, where `interpreter.probe` records values, and the rng_bit_generator
// algorithms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "support/status.h"

namespace wf {

// "tensor<2x2xi8> {\n  [\n    [1, 2],\n    [3, 4]\n  ]\n}", "tensor<ui8> {1}": the format in which
// the StableHLO interpreter prints tensors (floats as %.6e, complex as [re, im]).
std::string formatTensorForPrint(const Literal& value);

// Directory where interpreter.probe writes `<probe_id>_<iteration>.npy` files and an index.csv;
// empty (the default) makes probes plain pass-throughs.
void setProbeOutputDir(std::string dir);
std::string probeOutputDir();

enum class RngAlgorithm { kThreeFry, kPhilox };

// XLA's rng_bit_generator (xla/hlo/builder/lib/prng.cc via RngBitGeneratorExpander), bit for bit:
// fills `shape` with `bitWidth`-bit random values (each in the low bits of a uint64) and returns
// the new state. `state` is the u64 state tensor's contents (2 values, or 3 for Philox).
Expected<std::vector<uint64_t>> rngBitGenerator(RngAlgorithm algorithm, std::vector<uint64_t>& state,
                                                const std::vector<int64_t>& shape, int bitWidth);

}  // namespace wf
