func.func @eq() {
  %0 = stablehlo.constant dense<[-2, 0, 2]> : tensor<3xi64>
  %1 = stablehlo.constant dense<[-2, 0, 2]> : tensor<3xi64>
  check.expect_eq %0, %1 : tensor<3xi64>
  func.return
}

// -----

func.func @close() {
  %0 = stablehlo.constant dense<5.0000> : tensor<f16>
  %1 = stablehlo.constant dense<5.010> : tensor<f16>
  check.expect_close %0, %1, max_ulp_difference = 3 : tensor<f16>, tensor<f16>
  func.return
}

// -----

func.func @almost_eq_tolerance() {
  %0 = stablehlo.constant dense<5.0000> : tensor<f64>
  check.expect_almost_eq_const %0, dense<5.1> : tensor<f64> {tolerance = 0.2 : f64}
  func.return
}

// -----

func.func @custom_call_spelling() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.constant dense<[1.0, 2.0001]> : tensor<2xf32>
  stablehlo.custom_call @check.expect_almost_eq(%0, %1) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  func.return
}
