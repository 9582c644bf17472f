#include "runtime/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "runtime/file_io.h"

namespace wf {
namespace {

std::span<const uint8_t> asBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A safetensors file from a JSON header text and a data buffer, built independently of the writer.
std::string makeFile(const std::string& header, const std::string& data) {
  std::string out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

Literal randomLiteral(ElementType t, std::vector<int64_t> shape, uint32_t seed) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), t));
  std::mt19937 rng(seed);
  for (size_t b = 0; b < l.sizeBytes(); ++b) reinterpret_cast<uint8_t*>(l.data())[b] = static_cast<uint8_t>(rng());
  if (t == ElementType::kI1)
    for (int64_t i = 0; i < l.numElements(); ++i) l.setInt(i, rng() & 1);
  return l;
}

TEST(Safetensors, RoundTripsEveryDtype) {
  const std::pair<ElementType, const char*> types[] = {
      {ElementType::kI1, "BOOL"},    {ElementType::kUI8, "U8"},          {ElementType::kSI8, "I8"},
      {ElementType::kUI16, "U16"},   {ElementType::kSI16, "I16"},        {ElementType::kUI32, "U32"},
      {ElementType::kSI32, "I32"},   {ElementType::kUI64, "U64"},        {ElementType::kSI64, "I64"},
      {ElementType::kF16, "F16"},    {ElementType::kBF16, "BF16"},       {ElementType::kF32, "F32"},
      {ElementType::kF64, "F64"},    {ElementType::kF8E4M3FN, "F8_E4M3"}, {ElementType::kF8E5M2, "F8_E5M2"},
      {ElementType::kComplexF32, "C64"}};
  SafetensorsFile file;
  uint32_t seed = 1;
  for (auto [t, name] : types) {
    auto dtype = safetensorsDtypeFor(t);
    ASSERT_TRUE(dtype);
    EXPECT_EQ(*dtype, name);
    file.tensors.push_back({std::string("t_") + name, randomLiteral(t, {static_cast<int64_t>(seed % 3 + 1), 3}, seed)});
    ++seed;
  }
  file.tensors.push_back({"scalar", randomLiteral(ElementType::kF32, {}, 99)});
  file.tensors.push_back({"empty", randomLiteral(ElementType::kF32, {0, 4}, 100)});
  file.metadata["format"] = "pt";
  auto bytes = encodeSafetensors(file);
  ASSERT_TRUE(bytes) << bytes.status().message();
  // The data starts 8-byte aligned.
  uint64_t headerLen = 0;
  std::memcpy(&headerLen, bytes->data(), 8);
  EXPECT_EQ(headerLen % 8, 0u);

  auto out = decodeSafetensors(asBytes(*bytes), "rt.safetensors");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(out->metadata.at("format"), "pt");
  ASSERT_EQ(out->tensors.size(), file.tensors.size());
  for (const NamedLiteral& t : file.tensors) {
    const Literal* got = out->find(t.name);
    ASSERT_NE(got, nullptr) << t.name;
    EXPECT_EQ(got->type(), t.value.type()) << t.name;
    EXPECT_TRUE(got->bitwiseEqual(t.value)) << t.name;
  }
}

TEST(Safetensors, ReadsAHandWrittenFile) {
  // Two tensors, listed out of order in the header, as other writers may do.
  float a[] = {1.0f, 2.0f, 3.0f, 4.0f};
  int64_t b[] = {-7, 9};
  std::string data(reinterpret_cast<const char*>(b), sizeof b);
  data.append(reinterpret_cast<const char*>(a), sizeof a);
  std::string header =
      R"({"weight":{"dtype":"F32","shape":[2,2],"data_offsets":[16,32]},"bias":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},"__metadata__":{"k":"v"}})";
  auto out = decodeSafetensors(asBytes(makeFile(header, data)), "h.safetensors");
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_EQ(out->tensors.size(), 2u);
  EXPECT_EQ(out->tensors[0].name, "bias");  // ordered by data offset
  EXPECT_EQ(out->tensors[0].value.getInt(0), -7);
  EXPECT_EQ(out->find("weight")->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out->find("weight")->getDouble(3), 4.0);
  EXPECT_EQ(out->metadata.at("k"), "v");
}

TEST(Safetensors, MalformedFilesNameTheTensor) {
  std::string data(16, '\0');
  struct Case {
    std::string file;
    std::string expect;
  } cases[] = {
      {"abc", "shorter than 8 bytes"},
      {makeFile("{", ""), "not valid JSON"},
      {makeFile("[1]", ""), "not a JSON object"},
      {std::string("\xff\xff\xff\xff\x00\x00\x00\x00", 8) + "{}", "too large"},
      {std::string("\x10\x00\x00\x00\x00\x00\x00\x00", 8) + "{}", "exceeds the file size"},
      {makeFile(R"({"w":{"dtype":"F33","shape":[4],"data_offsets":[0,16]}})", data), "tensor 'w': unsupported dtype 'F33'"},
      {makeFile(R"({"w":{"shape":[4],"data_offsets":[0,16]}})", data), "tensor 'w': missing or non-string 'dtype'"},
      {makeFile(R"({"w":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", data), "tensor 'w': shape entries"},
      {makeFile(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0]}})", data), "tensor 'w': 'data_offsets'"},
      {makeFile(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[8,4]}})", data), "tensor 'w': data_offsets begin"},
      {makeFile(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,32]}})", data), "tensor 'w': data_offsets end 32 is past"},
      {makeFile(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", data), "tensor 'w': holds 16 bytes"},
      {makeFile(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"v":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", data),
       "overlaps"},
      {makeFile(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", data), "tensor 'w' leaves a hole"},
      {makeFile(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data), "trailing bytes"},
      {makeFile(R"({"w":{"dtype":"BOOL","shape":[16],"data_offsets":[0,16]}})", std::string(15, '\0') + "\x05"),
       "tensor 'w': BOOL value 5"},
      {makeFile(R"({"w":{"dtype":"F32","shape":[281474976710656,281474976710656],"data_offsets":[0,16]}})", data),
       "tensor 'w': shape is too large"},
      {makeFile(R"({"__metadata__":{"a":1}})", ""), "__metadata__ value 'a'"},
  };
  for (const Case& c : cases) {
    auto out = decodeSafetensors(asBytes(c.file), "bad.safetensors");
    ASSERT_FALSE(out) << c.expect;
    EXPECT_NE(out.status().message().find(c.expect), std::string::npos) << out.status().message();
  }
}

TEST(Safetensors, WriterRejectsBadNames) {
  SafetensorsFile file;
  file.tensors.push_back({"x", Literal::zeros(Type::tensor({1}, ElementType::kF32))});
  file.tensors.push_back({"x", Literal::zeros(Type::tensor({1}, ElementType::kF32))});
  EXPECT_FALSE(encodeSafetensors(file));
  file.tensors.pop_back();
  file.tensors.push_back({"q", Literal::zeros(Type::tensor({1}, ElementType::kF8E4M3FNUZ))});
  auto r = encodeSafetensors(file);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("tensor 'q'"), std::string::npos) << r.status().message();
}

TEST(Safetensors, TruncationNeverCrashes) {
  SafetensorsFile file;
  file.tensors.push_back({"a", randomLiteral(ElementType::kF32, {3, 2}, 5)});
  file.tensors.push_back({"b", randomLiteral(ElementType::kSI8, {5}, 6)});
  auto bytes = encodeSafetensors(file);
  ASSERT_TRUE(bytes);
  for (size_t n = 0; n < bytes->size(); ++n) EXPECT_FALSE(decodeSafetensors(asBytes(bytes->substr(0, n)), "t")) << n;
}

TEST(Safetensors, FileRoundTrip) {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("wf_st_test_" + std::to_string(::getpid()) + ".safetensors");
  SafetensorsFile file;
  file.tensors.push_back({"w", randomLiteral(ElementType::kBF16, {2, 5}, 8)});
  ASSERT_TRUE(writeSafetensors(path.string(), file).isOk());
  auto out = readSafetensors(path.string());
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_TRUE(out->find("w")->bitwiseEqual(file.tensors[0].value));
  std::filesystem::remove(path);
}

// Files are read from a mapping (readSafetensors) or in one read (readFileBytes): a file of
// several tensors, an empty file, a missing file and a directory each give what they should.
TEST(Safetensors, FilesReadWholeOrMappedAndTheirErrors) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wf_st_read_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  SafetensorsFile file;
  file.tensors.push_back({"a", randomLiteral(ElementType::kF32, {3, 1000}, 1)});
  file.tensors.push_back({"b", randomLiteral(ElementType::kI1, {17}, 2)});
  file.tensors.push_back({"c", randomLiteral(ElementType::kF64, {0, 4}, 3)});
  const std::string path = (dir / "t.safetensors").string();
  ASSERT_TRUE(writeSafetensors(path, file).isOk());
  auto mapped = readSafetensors(path);
  ASSERT_TRUE(mapped) << mapped.status().message();
  for (const NamedLiteral& t : file.tensors) EXPECT_TRUE(mapped->find(t.name)->bitwiseEqual(t.value)) << t.name;
  auto whole = readFileBytes(path);
  ASSERT_TRUE(whole);
  auto decoded = decodeSafetensors(asBytes(*whole), path);
  ASSERT_TRUE(decoded) << decoded.status().message();
  EXPECT_TRUE(decoded->find("a")->bitwiseEqual(file.tensors[0].value));

  const std::string empty = (dir / "empty.safetensors").string();
  { std::ofstream touch(empty); }
  auto emptyBytes = readFileBytes(empty);
  ASSERT_TRUE(emptyBytes);
  EXPECT_TRUE(emptyBytes->empty());
  auto emptyRead = readSafetensors(empty);
  ASSERT_FALSE(emptyRead);
  EXPECT_NE(emptyRead.status().message().find("shorter than 8 bytes"), std::string::npos) << emptyRead.status().message();

  auto missing = readSafetensors((dir / "missing.safetensors").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("missing.safetensors: cannot open file"), std::string::npos);
  auto directory = readSafetensors(dir.string());
  ASSERT_FALSE(directory);
  EXPECT_NE(directory.status().message().find("is a directory"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace wf
