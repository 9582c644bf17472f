// VJP rules of the elementwise ops: ct is the result's cotangent, x (and y) the operands, z the
// forward result. Where the derivative is a function of the result, the rule uses the result
// (d tanh = 1 - z^2, d logistic = z (1 - z), d exp = z), as JAX does: one fewer transcendental
// and no cancellation for large |x|.
#include <cmath>
#include <numbers>

#include "autodiff/rules.h"

namespace wf::autodiff {
namespace {

using Fn = Value* (*)(OpBuilder& b, Value* ct, Value* x, Value* z);

// A unary op whose operand cotangent is f(ct, x, z).
VjpRule unary(Fn f) {
  return [f](VjpContext& c) -> Status {
    Value* ct = c.cotangent();
    if (c.active(0)) c.accumulate(0, f(c.b, ct, c.operand(0), c.result()));
    return Status::ok();
  };
}

Value* k(OpBuilder& b, Value* like, double v) { return b.splat(like->type(), v); }

// max/min: the cotangent goes to the operand that was chosen; on a tie each gets half (JAX's
// balanced rule), so max(x, x) has derivative 1. Which one was chosen is read off the operands
// (x > y, x == y; NaN chooses neither) rather than off the result: the same choice, and a ReLU's
// gradient then reads its input and the cotangent only, not the activation too.
Status chooserRule(VjpContext& c) {
  OpBuilder& b = c.b;
  Value* ct = c.cotangent();
  Value *x = c.operand(0), *y = c.operand(1);
  const bool isMax = c.op.code() == OpCode::Maximum;
  Value* zero = b.zeros(ct->type());
  Value* tie = b.compare(x, y, "EQ");
  Value* half = b.select(tie, b.mul(ct, k(b, ct, 0.5)), zero);
  if (c.active(0)) c.accumulate(0, b.select(b.compare(x, y, isMax ? "GT" : "LT"), ct, half));
  if (c.active(1)) c.accumulate(1, b.select(b.compare(y, x, isMax ? "GT" : "LT"), ct, half));
  return Status::ok();
}

// A rule that passes no cotangent: the op is piecewise constant (floor, sign, round, ...), so
// its derivative is zero wherever it exists.
Status zeroRule(VjpContext&) { return Status::ok(); }

}  // namespace

void registerElementwiseRules(RuleTable& t) {
  t.add(OpCode::Add, [](VjpContext& c) {
    c.accumulate(0, c.cotangent());
    c.accumulate(1, c.cotangent());
    return Status::ok();
  });
  t.add(OpCode::Subtract, [](VjpContext& c) {
    c.accumulate(0, c.cotangent());
    if (c.active(1)) c.accumulate(1, c.b.neg(c.cotangent()));
    return Status::ok();
  });
  t.add(OpCode::Multiply, [](VjpContext& c) {
    if (c.active(0)) c.accumulate(0, c.b.mul(c.cotangent(), c.operand(1)));
    if (c.active(1)) c.accumulate(1, c.b.mul(c.operand(0), c.cotangent()));
    return Status::ok();
  });
  t.add(OpCode::Divide, [](VjpContext& c) {
    if (softmaxVjp(c)) return c.b.status();
    // z = x / y: dx = ct / y, dy = -ct * z / y.
    OpBuilder& b = c.b;
    Value *ct = c.cotangent(), *y = c.operand(1);
    if (c.active(0)) c.accumulate(0, b.div(ct, y));
    if (c.active(1)) c.accumulate(1, b.neg(b.div(b.mul(ct, c.result()), y)));
    return Status::ok();
  });
  t.add(OpCode::Negate, unary([](OpBuilder& b, Value* ct, Value*, Value*) { return b.neg(ct); }));
  t.add(OpCode::Maximum, chooserRule);
  t.add(OpCode::Minimum, chooserRule);
  t.add(OpCode::Exponential, unary([](OpBuilder& b, Value* ct, Value*, Value* z) { return b.mul(ct, z); }));
  t.add(OpCode::ExponentialMinusOne, unary([](OpBuilder& b, Value* ct, Value*, Value* z) {
          return b.mul(ct, b.add(z, k(b, z, 1.0)));
        }));
  t.add(OpCode::Log, unary([](OpBuilder& b, Value* ct, Value* x, Value*) { return b.div(ct, x); }));
  t.add(OpCode::LogPlusOne, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.div(ct, b.add(x, k(b, x, 1.0)));
        }));
  t.add(OpCode::Sqrt, unary([](OpBuilder& b, Value* ct, Value*, Value* z) {
          return b.div(ct, b.mul(z, k(b, z, 2.0)));
        }));
  t.add(OpCode::Rsqrt, unary([](OpBuilder& b, Value* ct, Value* x, Value* z) {
          // d x^(-1/2) = -1/2 x^(-3/2) = -0.5 * z / x
          return b.mul(ct, b.div(b.mul(z, k(b, z, -0.5)), x));
        }));
  t.add(OpCode::Cbrt, unary([](OpBuilder& b, Value* ct, Value* x, Value* z) {
          // d x^(1/3) = 1/3 x^(-2/3) = z / (3 x)
          return b.mul(ct, b.div(z, b.mul(x, k(b, x, 3.0))));
        }));
  t.add(OpCode::Tanh, unary([](OpBuilder& b, Value* ct, Value*, Value* z) {
          return b.mul(ct, b.sub(k(b, z, 1.0), b.mul(z, z)));
        }));
  t.add(OpCode::Logistic, unary([](OpBuilder& b, Value* ct, Value*, Value* z) {
          return b.mul(ct, b.mul(z, b.sub(k(b, z, 1.0), z)));
        }));
  t.add(OpCode::Sine, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.mul(ct, b.unary("stablehlo.cosine", x));
        }));
  t.add(OpCode::Cosine, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.neg(b.mul(ct, b.unary("stablehlo.sine", x)));
        }));
  auto tanRule = unary([](OpBuilder& b, Value* ct, Value*, Value* z) {
    return b.mul(ct, b.add(k(b, z, 1.0), b.mul(z, z)));
  });
  t.add(OpCode::Tan, tanRule);
  t.add(OpCode::ChloTan, tanRule);
  t.add(OpCode::Abs, [](VjpContext& c) -> Status {
    if (!isDifferentiableType(c.operandType(0))) return c.unsupported("abs of a complex value is not differentiated");
    if (c.active(0)) c.accumulate(0, c.b.mul(c.cotangent(), c.b.unary("stablehlo.sign", c.operand(0))));
    return Status::ok();
  });
  t.add(OpCode::Power, [](VjpContext& c) {
    // z = x^y: dx = ct * y * x^(y-1); dy = ct * z * log(x), taken as 0 where x == 0 (JAX's choice,
    // which keeps 0^y finite for y > 0).
    OpBuilder& b = c.b;
    Value *ct = c.cotangent(), *x = c.operand(0), *y = c.operand(1), *z = c.result();
    if (c.active(0)) c.accumulate(0, b.mul(ct, b.mul(y, b.binary("stablehlo.power", x, b.sub(y, k(b, y, 1.0))))));
    if (c.active(1)) {
      Value* zero = b.zeros(x->type());
      Value* isZero = b.compare(x, zero, "EQ");
      Value* safeX = b.select(isZero, k(b, x, 1.0), x);
      Value* dz = b.select(isZero, zero, b.mul(z, b.unary("stablehlo.log", safeX)));
      c.accumulate(1, b.mul(ct, dz));
    }
    return Status::ok();
  });
  t.add(OpCode::Atan2, [](VjpContext& c) {
    // z = atan2(y, x) with y the first operand: dy = x / (x^2 + y^2), dx = -y / (x^2 + y^2).
    OpBuilder& b = c.b;
    Value *ct = c.cotangent(), *y = c.operand(0), *x = c.operand(1);
    Value* denom = b.add(b.mul(x, x), b.mul(y, y));
    if (c.active(0)) c.accumulate(0, b.mul(ct, b.div(x, denom)));
    if (c.active(1)) c.accumulate(1, b.neg(b.mul(ct, b.div(y, denom))));
    return Status::ok();
  });
  t.add(OpCode::Remainder, [](VjpContext& c) {
    // z = x - trunc(x / y) * y: dx = ct, dy = -ct * trunc(x / y).
    OpBuilder& b = c.b;
    Value *ct = c.cotangent(), *x = c.operand(0), *y = c.operand(1);
    c.accumulate(0, ct);
    if (c.active(1)) {
      Value* q = b.div(x, y);
      Value* trunc = b.mul(b.unary("stablehlo.sign", q), b.unary("stablehlo.floor", b.unary("stablehlo.abs", q)));
      c.accumulate(1, b.neg(b.mul(ct, trunc)));
    }
    return Status::ok();
  });
  for (OpCode code : {OpCode::Sign, OpCode::Floor, OpCode::Ceil, OpCode::RoundNearestAfz, OpCode::RoundNearestEven})
    t.add(code, zeroRule);
  // reduce_precision rounds; its derivative is taken as 1 (a straight-through estimator, as
  // JAX's JVP applies the same rounding to the tangent).
  t.add(OpCode::ReducePrecision, [](VjpContext& c) {
    c.accumulate(0, c.cotangent());
    return Status::ok();
  });

  // chlo ops JAX prints.
  t.add(OpCode::ChloSquare, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.mul(ct, b.mul(x, k(b, x, 2.0)));
        }));
  t.add(OpCode::ChloErf, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          Value* e = b.unary("stablehlo.exponential", b.neg(b.mul(x, x)));
          return b.mul(ct, b.mul(e, k(b, x, 2.0 / std::sqrt(std::numbers::pi))));
        }));
  t.add(OpCode::ChloErfc, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          Value* e = b.unary("stablehlo.exponential", b.neg(b.mul(x, x)));
          return b.mul(ct, b.mul(e, k(b, x, -2.0 / std::sqrt(std::numbers::pi))));
        }));
  t.add(OpCode::ChloErfInv, unary([](OpBuilder& b, Value* ct, Value*, Value* z) {
          // d erfinv(x) = sqrt(pi) / 2 * exp(z^2)
          Value* e = b.unary("stablehlo.exponential", b.mul(z, z));
          return b.mul(ct, b.mul(e, k(b, z, std::sqrt(std::numbers::pi) / 2.0)));
        }));
  t.add(OpCode::ChloSinh, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.mul(ct, b.unary("chlo.cosh", x));
        }));
  t.add(OpCode::ChloCosh, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.mul(ct, b.unary("chlo.sinh", x));
        }));
  t.add(OpCode::ChloAtan, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.div(ct, b.add(k(b, x, 1.0), b.mul(x, x)));
        }));
  t.add(OpCode::ChloAsin, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.mul(ct, b.unary("stablehlo.rsqrt", b.sub(k(b, x, 1.0), b.mul(x, x))));
        }));
  t.add(OpCode::ChloAcos, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.neg(b.mul(ct, b.unary("stablehlo.rsqrt", b.sub(k(b, x, 1.0), b.mul(x, x)))));
        }));
  t.add(OpCode::ChloAsinh, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.mul(ct, b.unary("stablehlo.rsqrt", b.add(b.mul(x, x), k(b, x, 1.0))));
        }));
  t.add(OpCode::ChloAcosh, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.mul(ct, b.unary("stablehlo.rsqrt", b.sub(b.mul(x, x), k(b, x, 1.0))));
        }));
  t.add(OpCode::ChloAtanh, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.div(ct, b.sub(k(b, x, 1.0), b.mul(x, x)));
        }));
  t.add(OpCode::ChloLgamma, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.mul(ct, b.unary("chlo.digamma", x));
        }));
  t.add(OpCode::ChloDigamma, unary([](OpBuilder& b, Value* ct, Value* x, Value*) {
          return b.mul(ct, b.binary("chlo.polygamma", k(b, x, 1.0), x));  // trigamma
        }));
}

}  // namespace wf::autodiff
