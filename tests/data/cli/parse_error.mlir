func.func @good() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<1> : tensor<i32>
  func.return
}

// -----

func.func @broken() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  %1 = stablehlo.add %0, %nope : tensor<i32>
  func.return
}
