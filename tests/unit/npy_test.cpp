#include "runtime/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

namespace wf {
namespace {

std::span<const uint8_t> asBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A .npy file as numpy would write it: magic, version, header length, padded header, data.
std::string makeNpy(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  size_t preamble = major == 1 ? 10 : 12;
  header.append((64 - (preamble + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  size_t len = header.size();
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  if (major != 1) out.append(2, '\0');
  return out + header + data;
}

Literal randomLiteral(ElementType t, std::vector<int64_t> shape, uint32_t seed) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), t));
  std::mt19937 rng(seed);
  // Random raw bits cover every encoding, NaN payloads included; sub-byte and bool types get
  // values in range.
  for (size_t b = 0; b < l.sizeBytes(); ++b) reinterpret_cast<uint8_t*>(l.data())[b] = static_cast<uint8_t>(rng());
  if (t == ElementType::kI1 || isInteger(t) || isF8OrSmaller(t)) {
    for (int64_t i = 0; i < l.numElements(); ++i) {
      if (t == ElementType::kI1) l.setInt(i, rng() & 1);
      else if (isInteger(t)) l.setInt(i, static_cast<int64_t>(rng()) - (1 << 30));  // wraps to the width
      else l.setBits(i, rng() & ((1u << bitWidth(t)) - 1));
    }
  }
  return l;
}

TEST(Npy, RoundTripsEveryElementType) {
  const ElementType types[] = {
      ElementType::kI1,   ElementType::kSI2,  ElementType::kSI4,       ElementType::kSI8,       ElementType::kSI16,
      ElementType::kSI32, ElementType::kSI64, ElementType::kUI2,       ElementType::kUI4,       ElementType::kUI8,
      ElementType::kUI16, ElementType::kUI32, ElementType::kUI64,      ElementType::kF16,       ElementType::kBF16,
      ElementType::kF32,  ElementType::kF64,  ElementType::kComplexF32, ElementType::kComplexF64, ElementType::kF8E4M3FN,
      ElementType::kF8E5M2, ElementType::kF4E2M1FN};
  uint32_t seed = 1;
  for (ElementType t : types) {
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{}, {7}, {3, 5}, {2, 0, 4}, {2, 3, 4}}) {
      Literal in = randomLiteral(t, shape, seed++);
      auto bytes = encodeNpy(in);
      ASSERT_TRUE(bytes) << elementTypeName(t) << ": " << bytes.status().message();
      EXPECT_EQ(bytes->find("\x93NUMPY"), 0u);
      // The preamble is padded to 64 bytes, as numpy does.
      size_t headerLen = static_cast<uint8_t>((*bytes)[8]) | static_cast<uint8_t>((*bytes)[9]) << 8;
      EXPECT_EQ((10 + headerLen) % 64, 0u);
      auto out = decodeNpy(asBytes(*bytes), "test.npy", t);
      ASSERT_TRUE(out) << elementTypeName(t) << ": " << out.status().message();
      EXPECT_EQ(out->type(), in.type()) << elementTypeName(t);
      EXPECT_TRUE(out->bitwiseEqual(in)) << elementTypeName(t);
    }
  }
}

TEST(Npy, ReadsNativeTypesWithoutAHint) {
  Literal in = randomLiteral(ElementType::kSI16, {4, 3}, 7);
  auto bytes = encodeNpy(in);
  ASSERT_TRUE(bytes);
  auto out = decodeNpy(asBytes(*bytes), "x.npy");
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->bitwiseEqual(in));
  // bf16 ('<V2', as ml_dtypes writes it) is read as bf16 by default.
  Literal bf = randomLiteral(ElementType::kBF16, {3}, 8);
  auto bfBytes = encodeNpy(bf);
  ASSERT_TRUE(bfBytes);
  EXPECT_NE(bfBytes->find("'<V2'"), std::string::npos);
  auto bfOut = decodeNpy(asBytes(*bfBytes), "x.npy");
  ASSERT_TRUE(bfOut);
  EXPECT_EQ(bfOut->elementType(), ElementType::kBF16);
}

TEST(Npy, HeaderMatchesNumpyLayout) {
  Literal in = Literal::zeros(Type::tensor({2, 3}, ElementType::kF32));
  auto bytes = encodeNpy(in);
  ASSERT_TRUE(bytes);
  EXPECT_NE(bytes->find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), std::string::npos);
  Literal one = Literal::zeros(Type::tensor({5}, ElementType::kSI64));
  EXPECT_NE(encodeNpy(one)->find("'shape': (5,)"), std::string::npos);
  Literal scalar = Literal::zeros(Type::scalar(ElementType::kF64));
  EXPECT_NE(encodeNpy(scalar)->find("'shape': ()"), std::string::npos);
}

TEST(Npy, FortranOrderIsTransposed) {
  // 2x3 int32 array [[0,1,2],[3,4,5]] stored column-major: 0 3 1 4 2 5.
  int32_t col[] = {0, 3, 1, 4, 2, 5};
  std::string data(reinterpret_cast<const char*>(col), sizeof col);
  auto out = decodeNpy(asBytes(makeNpy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", data)), "f.npy");
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_EQ(out->shape(), (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out->getInt(i), i);

  // A 3-d case against an independent index computation.
  std::vector<int64_t> shape = {2, 3, 4};
  std::vector<double> colMajor(24);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) colMajor[static_cast<size_t>(i + 2 * j + 6 * k)] = static_cast<double>(100 * i + 10 * j + k);
  std::string d3(reinterpret_cast<const char*>(colMajor.data()), colMajor.size() * sizeof(double));
  auto out3 = decodeNpy(asBytes(makeNpy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 4), }", d3)), "f.npy");
  ASSERT_TRUE(out3) << out3.status().message();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(out3->getDouble(i * 12 + j * 4 + k), 100 * i + 10 * j + k);
}

TEST(Npy, BigEndianIsSwapped) {
  uint8_t be[] = {0x00, 0x00, 0x01, 0x02, 0xff, 0xff, 0xff, 0xfe};
  std::string data(reinterpret_cast<const char*>(be), sizeof be);
  auto out = decodeNpy(asBytes(makeNpy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", data)), "b.npy");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(out->getInt(0), 0x0102);
  EXPECT_EQ(out->getInt(1), -2);
}

TEST(Npy, ReadsVersion2And3Headers) {
  float v[] = {1.5f, -2.0f};
  std::string data(reinterpret_cast<const char*>(v), sizeof v);
  for (int major : {2, 3}) {
    auto out = decodeNpy(asBytes(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data, major)), "v.npy");
    ASSERT_TRUE(out) << out.status().message();
    EXPECT_EQ(out->getDouble(1), -2.0);
  }
}

TEST(Npy, RawVoidNeedsAKnownType) {
  std::string data(3, '\x38');
  std::string file = makeNpy("{'descr': '|V1', 'fortran_order': False, 'shape': (3,), }", data);
  auto unknown = decodeNpy(asBytes(file), "v1.npy");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.status().message().find("v1.npy"), std::string::npos);
  auto f8 = decodeNpy(asBytes(file), "v1.npy", ElementType::kF8E4M3FN);
  ASSERT_TRUE(f8) << f8.status().message();
  EXPECT_EQ(f8->getDouble(0), 1.0);  // 0x38 is 1.0 in e4m3fn
}

TEST(Npy, DtypeMismatchWithExpectedTypeIsAnError) {
  auto bytes = encodeNpy(Literal::zeros(Type::tensor({2}, ElementType::kF32)));
  auto out = decodeNpy(asBytes(*bytes), "m.npy", ElementType::kF64);
  ASSERT_FALSE(out);
  EXPECT_NE(out.status().message().find("does not match expected f64"), std::string::npos) << out.status().message();
  // int8 data for an i4 argument must fit.
  Literal wide = Literal::zeros(Type::tensor({2}, ElementType::kSI8));
  wide.setInt(1, 9);
  auto i4 = decodeNpy(asBytes(*encodeNpy(wide)), "w.npy", ElementType::kSI4);
  ASSERT_FALSE(i4);
  EXPECT_NE(i4.status().message().find("does not fit"), std::string::npos);
}

TEST(Npy, MalformedFilesGiveClearErrors) {
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string data(8, '\0');
  struct Case {
    std::string bytes;
    std::string expect;
  } cases[] = {
      {"", "bad magic"},
      {"\x93NUMPX\x01\x00\x10\x00", "bad magic"},
      {std::string("\x93NUMPY\x09\x00\x10\x00", 10), "version 9"},
      {std::string("\x93NUMPY\x01\x00\xff\xff", 10) + "{}", "exceeds the file size"},
      {makeNpy("{'descr': '<f4', 'shape': (2,), }", data), "no 'fortran_order'"},
      {makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", data), "malformed .npy header"},
      {makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data), "negative dimension"},
      {makeNpy("{'descr': '<f3', 'fortran_order': False, 'shape': (2,), }", data), "unsupported .npy dtype"},
      {makeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data), "structured"},
      {makeNpy("{'descr': 4, 'fortran_order': False, 'shape': (2,), }", data), "'descr' is not a string"},
      {makeNpy(good, std::string(7, '\0')), "need 8"},
      {makeNpy(good, std::string(12, '\0')), "need 8"},
      {makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", data), "out of range"},
      {makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", data), "too large"},
      {makeNpy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data), "duplicate key"},
  };
  for (const Case& c : cases) {
    auto out = decodeNpy(asBytes(c.bytes), "bad.npy");
    ASSERT_FALSE(out) << c.expect;
    EXPECT_NE(out.status().message().find(c.expect), std::string::npos) << out.status().message();
    EXPECT_EQ(out.status().message().rfind("bad.npy", 0), 0u) << out.status().message();
  }
}

TEST(Npy, TruncationAtEveryLengthNeverCrashes) {
  auto bytes = encodeNpy(randomLiteral(ElementType::kF32, {3, 4}, 3));
  ASSERT_TRUE(bytes);
  for (size_t n = 0; n < bytes->size(); ++n) {
    auto out = decodeNpy(asBytes(bytes->substr(0, n)), "t.npy");
    EXPECT_FALSE(out) << n;
  }
}

TEST(Npy, WritesFilesAtomically) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("wf_npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "a.npy").string();
  Literal in = randomLiteral(ElementType::kF64, {4}, 11);
  ASSERT_TRUE(writeNpy(path, in).isOk());
  auto out = readNpy(path);
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->bitwiseEqual(in));
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);  // no temporary left behind
  auto missing = readNpy((dir / "missing.npy").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("missing.npy"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wf
