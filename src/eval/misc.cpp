// Miscellaneous CPU kernels: constant, tuple, get_tuple_element, custom_call, rng,
// rng_bit_generator, interpreter.probe and interpreter.print.
#include "eval/misc.h"

#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>

#include "eval/check.h"
#include "eval/custom_call.h"
#include "eval/interpreter.h"
#include "eval/element_math.h"

namespace wf {

// ---------------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------------

namespace {

std::string formatFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6e", v);
  return buf;
}

std::string formatElement(const Literal& l, int64_t i) {
  const ElementType t = l.elementType();
  if (isBoolean(t)) return l.getInt(i) ? "true" : "false";
  if (isComplex(t)) {
    std::complex<double> c = l.getComplex(i);
    return "[" + formatFloat(c.real()) + ", " + formatFloat(c.imag()) + "]";
  }
  if (isFloat(t)) return formatFloat(l.getDouble(i));
  if (t == ElementType::kUI64) return std::to_string(static_cast<uint64_t>(l.getInt(i)));
  return std::to_string(l.getInt(i));
}

// Dimension `d` of the sub-tensor starting at element `base`, indented by `indent` spaces.
void formatDim(const Literal& l, size_t d, int64_t base, const std::vector<int64_t>& strides, int indent,
               std::string& out) {
  const int64_t n = l.shape()[d];
  if (d + 1 == l.shape().size()) {
    out += "[";
    for (int64_t i = 0; i < n; ++i) out += (i ? ", " : "") + formatElement(l, base + i);
    out += "]";
    return;
  }
  if (n == 0) {
    out += "[]";
    return;
  }
  out += "[\n";
  for (int64_t i = 0; i < n; ++i) {
    out += std::string(static_cast<size_t>(indent + 2), ' ');
    formatDim(l, d + 1, base + i * strides[d], strides, indent + 2, out);
    out += i + 1 < n ? ",\n" : "\n";
  }
  out += std::string(static_cast<size_t>(indent), ' ') + "]";
}

}  // namespace

std::string formatTensorForPrint(const Literal& value) {
  if (value.isToken()) return "!stablehlo.token";
  if (value.isTuple()) {
    std::string s = "tuple {\n";
    for (const Literal& e : value.tupleElements()) s += formatTensorForPrint(e) + "\n";
    return s + "}";
  }
  std::string out = value.type().toString() + " {";
  if (value.shape().empty()) return out + formatElement(value, 0) + "}";
  out += "\n  ";
  formatDim(value, 0, 0, rowMajorStrides(value.shape()), 2, out);
  return out + "\n}";
}

// ---------------------------------------------------------------------------------------------
// Probes
// ---------------------------------------------------------------------------------------------

namespace {

struct ProbeState {
  std::mutex mu;
  std::string dir;
  std::map<std::string, int64_t> iterations;
};

ProbeState& probeState() {
  static ProbeState s;
  return s;
}

// numpy dtype of a Literal's storage (narrow types are stored one per byte; bf16 as raw bits).
std::string numpyDescr(ElementType t) {
  switch (t) {
    case ElementType::kI1: return "|b1";
    case ElementType::kSI16: return "<i2";
    case ElementType::kSI32: return "<i4";
    case ElementType::kSI64: case ElementType::kIndex: return "<i8";
    case ElementType::kUI16: case ElementType::kBF16: return "<u2";
    case ElementType::kUI32: return "<u4";
    case ElementType::kUI64: return "<u8";
    case ElementType::kF16: return "<f2";
    case ElementType::kF32: return "<f4";
    case ElementType::kF64: return "<f8";
    case ElementType::kComplexF32: return "<c8";
    case ElementType::kComplexF64: return "<c16";
    default: return isSignedInteger(t) ? "|i1" : "|u1";
  }
}

Status writeNpy(const std::string& path, const Literal& value) {
  std::string shape = "(";
  for (int64_t d : value.shape()) shape += std::to_string(d) + ", ";
  if (value.shape().size() > 1) shape.erase(shape.size() - 2);
  if (value.shape().size() == 1) shape.erase(shape.size() - 1);
  shape += ")";
  std::string header =
      "{'descr': '" + numpyDescr(value.elementType()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return notFound("cannot write probe file " + path);
  f.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<uint16_t>(header.size());
  const char lenBytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(lenBytes, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(value.data()), static_cast<std::streamsize>(value.sizeBytes()));
  if (!f) return notFound("cannot write probe file " + path);
  return Status::ok();
}

}  // namespace

void setProbeOutputDir(std::string dir) {
  ProbeState& s = probeState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.dir = std::move(dir);
  s.iterations.clear();
}

std::string probeOutputDir() {
  ProbeState& s = probeState();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.dir;
}

// ---------------------------------------------------------------------------------------------
// rng_bit_generator: XLA's ThreeFry2x32 and Philox4x32, element for element (the generators are
// eval/element_math.h's, which the CUDA kernel runs too)
// ---------------------------------------------------------------------------------------------

namespace {

using em::philox4x32;
using em::threeFry2x32;

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// ThreeFryRngBit32: the shape is split in two halves along one dimension; counter i of the
// half shape yields the element pair (2k, 2k + 1) along that dimension.
std::vector<uint64_t> threeFry32(uint64_t key, uint64_t& counter, const std::vector<int64_t>& shape) {
  const auto k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  auto block = [&](uint64_t c, uint32_t& x0, uint32_t& x1) {
    x0 = static_cast<uint32_t>(c);
    x1 = static_cast<uint32_t>(c >> 32);
    threeFry2x32(k0, k1, x0, x1);
  };
  if (shape.empty()) {
    uint32_t x0, x1;
    block(counter, x0, x1);
    counter += 1;
    return {x0};
  }
  const size_t split = static_cast<size_t>(em::threeFrySplitDim(shape.data(), static_cast<int>(shape.size())));
  std::vector<int64_t> half = shape;
  half[split] = (shape[split] + 1) / 2;
  const int64_t halfCount = product(half);
  const std::vector<int64_t> halfStrides = rowMajorStrides(half);
  const std::vector<int64_t> strides = rowMajorStrides(shape);
  std::vector<uint64_t> out(static_cast<size_t>(product(shape)));
  for (int64_t l = 0; l < halfCount; ++l) {
    uint32_t x[2];
    block(counter + static_cast<uint64_t>(l), x[0], x[1]);
    int64_t base = 0, k = 0;
    for (size_t d = 0; d < half.size(); ++d) {
      const int64_t idx = (l / halfStrides[d]) % half[d];
      if (d == split) k = idx;
      else base += idx * strides[d];
    }
    for (int64_t c = 0; c < 2; ++c)
      if (2 * k + c < shape[split]) out[static_cast<size_t>(base + (2 * k + c) * strides[split])] = x[c];
  }
  counter += static_cast<uint64_t>(halfCount);
  return out;
}

std::vector<uint64_t> threeFry64(uint64_t key, uint64_t& counter, int64_t n) {
  std::vector<uint64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t c = counter + static_cast<uint64_t>(i);
    uint32_t x0 = static_cast<uint32_t>(c), x1 = static_cast<uint32_t>(c >> 32);
    threeFry2x32(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), x0, x1);
    out[static_cast<size_t>(i)] = x0 | (uint64_t{x1} << 32);
  }
  counter += static_cast<uint64_t>(n);
  return out;
}

// Philox on a 128-bit counter (lo, hi): block i uses counter + i and yields 4 words.
std::vector<uint32_t> philoxWords(uint64_t key, uint64_t& lo, uint64_t& hi, int64_t numBlocks) {
  std::vector<uint32_t> words(static_cast<size_t>(numBlocks) * 4);
  for (int64_t i = 0; i < numBlocks; ++i) {
    const uint64_t cLo = lo + static_cast<uint64_t>(i);
    const uint64_t cHi = cLo < lo ? hi + 1 : hi;
    uint32_t x[4] = {static_cast<uint32_t>(cLo), static_cast<uint32_t>(cLo >> 32), static_cast<uint32_t>(cHi),
                     static_cast<uint32_t>(cHi >> 32)};
    philox4x32(static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), x);
    for (int c = 0; c < 4; ++c) words[static_cast<size_t>(i * 4 + c)] = x[c];
  }
  const uint64_t newLo = lo + static_cast<uint64_t>(numBlocks);
  if (newLo < lo) ++hi;
  lo = newLo;
  return words;
}

}  // namespace

Expected<std::vector<uint64_t>> rngBitGenerator(RngAlgorithm algorithm, std::vector<uint64_t>& state,
                                                const std::vector<int64_t>& shape, int bitWidth) {
  const int64_t n = product(shape);
  const bool wide = bitWidth > 32;
  std::vector<uint64_t> bits;
  if (algorithm == RngAlgorithm::kThreeFry) {
    if (state.size() != 2) return invalidArgument("THREE_FRY needs a 2-element u64 state");
    bits = wide ? threeFry64(state[0], state[1], n) : threeFry32(state[0], state[1], shape);
  } else {
    if (state.size() != 2 && state.size() != 3) return invalidArgument("PHILOX needs a 2- or 3-element u64 state");
    // With two words the counter is (lo = state[1], hi = state[0]) and only lo is written back.
    uint64_t lo = state[1];
    uint64_t hi = state.size() == 3 ? state[2] : state[0];
    if (wide) {
      std::vector<uint32_t> w = philoxWords(state[0], lo, hi, (n + 1) / 2);
      bits.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const size_t b = static_cast<size_t>(i / 2) * 4 + static_cast<size_t>(i % 2) * 2;
        bits[static_cast<size_t>(i)] = w[b] | (uint64_t{w[b + 1]} << 32);
      }
    } else {
      std::vector<uint32_t> w = philoxWords(state[0], lo, hi, (n + 3) / 4);
      bits.assign(w.begin(), w.begin() + n);
    }
    state[1] = lo;
    if (state.size() == 3) state[2] = hi;
  }
  // Narrow types keep the low bits of 32-bit values, like XLA's ConvertElementType to u16/u8.
  if (bitWidth < 64) {
    const uint64_t mask = (uint64_t{1} << bitWidth) - 1;
    for (uint64_t& b : bits) b &= mask;
  }
  return bits;
}

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

namespace {

using Results = Expected<std::vector<Literal>>;

Results constantKernel(const Operation& op, std::span<const Literal>, EvalContext&) {
  const Attribute* value = op.attr("value");
  if (!value || value->kind() != Attribute::Kind::kDenseElements)
    return invalidArgument(op.describe() + ": missing dense 'value' attribute");
  const Literal* l = value->literal();
  if (!l) {
    return notFound(op.describe() + ": dense_resource blob '" + value->name() +
                    "' is missing from the file's dialect_resources section");
  }
  const Type& declared = op.numResults() ? op.result(0)->type() : l->type();
  // A splat stored as one element fills the declared shape.
  if (declared.isTensor() && declared.hasStaticShape() && l->numElements() == 1 && declared.numElements() != 1 &&
      declared.elementType() == l->elementType()) {
    Literal out = Literal::zeros(declared);
    const int bytes = storageBytes(l->elementType());
    for (int64_t i = 0; i < out.numElements(); ++i)
      std::memcpy(out.data() + i * bytes, l->data(), static_cast<size_t>(bytes));
    return std::vector<Literal>{std::move(out)};
  }
  return std::vector<Literal>{*l};
}

Results tupleKernel(const Operation&, std::span<const Literal> operands, EvalContext&) {
  return std::vector<Literal>{Literal::tuple(std::vector<Literal>(operands.begin(), operands.end()))};
}

Results getTupleElementKernel(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  const Attribute* index = op.attr("index");
  std::optional<int64_t> i = index ? index->asInt() : std::nullopt;
  if (!i) return invalidArgument(op.describe() + ": missing 'index'");
  if (operands.size() != 1 || !operands[0].isTuple()) return invalidArgument(op.describe() + ": operand is not a tuple");
  const auto& elements = operands[0].tupleElements();
  if (*i < 0 || *i >= static_cast<int64_t>(elements.size()))
    return outOfRange(op.describe() + ": index " + std::to_string(*i) + " out of range for a tuple of " +
                      std::to_string(elements.size()));
  return std::vector<Literal>{elements[static_cast<size_t>(*i)]};
}

Results customCallKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  const Attribute* target = op.attr("call_target_name");
  if (!target || target->kind() != Attribute::Kind::kString)
    return invalidArgument(op.describe() + ": missing 'call_target_name'");
  // The interpreter tests also spell their checks as `custom_call @check.expect_*`.
  if (isCheckCustomCallTarget(target->stringValue())) return evalCheckCustomCall(op, operands, ctx);
  CustomCallFn fn = findCustomCall(target->stringValue());
  if (!fn) return notFound(op.describe() + ": unknown custom_call target '" + target->stringValue() + "'");
  return fn(op, operands, ctx);
}

// The result type of rng: the declared one, or the one the shape operand names.
Expected<Type> rngResultType(const Operation& op, std::span<const Literal> operands) {
  const Type& declared = op.result(0)->type();
  if (declared.isTensor() && declared.hasStaticShape()) return declared;
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < operands[2].numElements(); ++i) shape.push_back(operands[2].getInt(i));
  return Type::tensor(shape, operands[0].elementType());
}

Results rngKernel(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.size() != 3) return invalidArgument(op.describe() + ": expects a, b and shape");
  const Attribute* dist = op.attr("rng_distribution");
  if (!dist) return invalidArgument(op.describe() + ": missing 'rng_distribution'");
  const bool normal = dist->stringValue() == "NORMAL";
  if (!normal && dist->stringValue() != "UNIFORM")
    return invalidArgument(op.describe() + ": unknown rng_distribution " + dist->stringValue());
  WF_ASSIGN_OR_RETURN(Type type, rngResultType(op, operands));
  const ElementType e = type.elementType();
  // One deterministic stream per program run order: reproducible, like a seeded device RNG.
  static std::mutex mu;
  static std::mt19937_64 gen(0x5eed5eedULL);
  std::lock_guard<std::mutex> lock(mu);
  Literal out = Literal::zeros(type);
  const double a = operands[0].getDouble(0), b = operands[1].getDouble(0);
  if (normal) {
    if (!isFloat(e)) return invalidArgument(op.describe() + ": NORMAL needs a floating-point type");
    std::normal_distribution<double> nd(a, b);
    for (int64_t i = 0; i < out.numElements(); ++i) out.setDouble(i, nd(gen));
  } else if (isFloat(e)) {
    if (!(a < b)) return invalidArgument(op.describe() + ": UNIFORM needs a < b");
    std::uniform_real_distribution<double> ud(a, b);
    for (int64_t i = 0; i < out.numElements(); ++i) {
      double v = ud(gen);
      out.setDouble(i, v);
      // Rounding to a narrow type may reach b; the interval is half-open.
      if (out.getDouble(i) >= b) out.setDouble(i, a);
    }
  } else {
    const int64_t lo = operands[0].getInt(0), hi = operands[1].getInt(0);
    if (!(lo < hi)) return invalidArgument(op.describe() + ": UNIFORM needs a < b");
    std::uniform_int_distribution<int64_t> ud(lo, hi - 1);
    for (int64_t i = 0; i < out.numElements(); ++i) out.setInt(i, ud(gen));
  }
  return std::vector<Literal>{std::move(out)};
}

Results rngBitGeneratorKernel(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.size() != 1 || op.numResults() != 2)
    return invalidArgument(op.describe() + ": expects one state operand and two results");
  const Attribute* alg = op.attr("rng_algorithm");
  const std::string name = alg ? alg->stringValue() : "DEFAULT";
  // XLA's CPU and GPU backends implement DEFAULT as Philox.
  RngAlgorithm algorithm;
  if (name == "THREE_FRY") algorithm = RngAlgorithm::kThreeFry;
  else if (name == "PHILOX" || name == "DEFAULT") algorithm = RngAlgorithm::kPhilox;
  else return invalidArgument(op.describe() + ": unknown rng_algorithm " + name);

  const Literal& initial = operands[0];
  if (bitWidth(initial.elementType()) != 64 || initial.shape().size() != 1)
    return invalidArgument(op.describe() + ": the state must be a 1-D 64-bit tensor, got " + initial.type().toString());
  std::vector<uint64_t> state;
  for (int64_t i = 0; i < initial.numElements(); ++i) state.push_back(initial.getBits(i));

  const Type& outType = op.result(1)->type();
  if (!outType.isTensor() || !outType.hasStaticShape())
    return invalidArgument(op.describe() + ": the output needs a static tensor type");
  const ElementType e = outType.elementType();
  if (isComplex(e) || e == ElementType::kIndex || e == ElementType::kQuantized)
    return invalidArgument(op.describe() + ": unsupported output type " + outType.toString());
  auto bits = rngBitGenerator(algorithm, state, outType.shape(), bitWidth(e));
  if (!bits) return bits.status().withContext(op.describe());

  Literal newState = Literal::zeros(initial.type());
  for (size_t i = 0; i < state.size(); ++i) newState.setBits(static_cast<int64_t>(i), state[i]);
  Literal out = Literal::zeros(outType);
  for (int64_t i = 0; i < out.numElements(); ++i) {
    const uint64_t v = (*bits)[static_cast<size_t>(i)];
    // Integers narrower than a byte are stored widened (sign-extended for signed types).
    if ((isInteger(e) || isBoolean(e)) && bitWidth(e) < 8) out.setInt(i, static_cast<int64_t>(v));
    else out.setBits(i, v);
  }
  return std::vector<Literal>{std::move(newState), std::move(out)};
}

Results probeKernel(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.size() != 1) return invalidArgument(op.describe() + ": expects one operand");
  const Attribute* idAttr = op.attr("probe_id");
  if (!idAttr || idAttr->kind() != Attribute::Kind::kString) return invalidArgument(op.describe() + ": missing 'probe_id'");
  ProbeState& s = probeState();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.dir.empty()) return std::vector<Literal>{operands[0]};
  // File names keep only characters that are safe everywhere ("probe/0" -> "probe_0").
  std::string safe = idAttr->stringValue();
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  const int64_t iteration = s.iterations[idAttr->stringValue()]++;
  const std::string file = safe + "_" + std::to_string(iteration) + ".npy";
  Status w = writeNpy(s.dir + "/" + file, operands[0]);
  if (!w.isOk()) return w.withContext(op.describe());
  std::ofstream index(s.dir + "/index.csv", std::ios::app);
  index << idAttr->stringValue() << "," << operands[0].type().toString() << "," << file << "\n";
  return std::vector<Literal>{operands[0]};
}

Results printKernel(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  // One lock for all processes of a grid so that their outputs never interleave.
  static std::mutex mu;
  std::string text;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string& name = op.operand(i)->nameHint();
    text += (name.empty() ? std::string() : name + " = ") + formatTensorForPrint(operands[i]) + "\n";
  }
  std::lock_guard<std::mutex> lock(mu);
  std::cout << text << std::flush;
  return std::vector<Literal>();
}

}  // namespace

void registerMiscKernels(KernelRegistry& registry) {
  registry.add(OpCode::Constant, constantKernel);
  registry.add(OpCode::Tuple, tupleKernel);
  registry.add(OpCode::GetTupleElement, getTupleElementKernel);
  registry.add(OpCode::CustomCall, customCallKernel);
  registry.add(OpCode::Rng, rngKernel);
  registry.add(OpCode::RngBitGenerator, rngBitGeneratorKernel);
  registry.add(OpCode::InterpreterProbe, probeKernel);
  registry.add(OpCode::InterpreterPrint, printKernel);
}

}  // namespace wf
