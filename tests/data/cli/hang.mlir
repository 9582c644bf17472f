// A function that never ends, then one that passes: with --timeout the first is reported as an
// error and the run goes on with the second.
func.func @spins_forever() {
  %0 = stablehlo.constant dense<0> : tensor<i64>
  %1 = stablehlo.while(%iter = %0) : tensor<i64>
    cond {
      %true = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %true : tensor<i1>
    } do {
      stablehlo.return %iter : tensor<i64>
    }
  func.return
}

// -----

func.func @after_the_hang() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  check.expect_eq_const %0, dense<[1, 2]> : tensor<2xi64>
  func.return
}
