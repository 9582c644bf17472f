// Outcomes of `warpforge check`: one chunk per case.
func.func @passes() {
  %0 = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
  check.expect_eq_const %0, dense<[1, 2, 3]> : tensor<3xi32>
  func.return
}

// -----

func.func @fails() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_almost_eq_const %0, dense<[1.0, 2.5]> : tensor<2xf32>
  func.return
}

// -----

func.func @no_checks() {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  func.return
}

// -----

func.func @unsupported() {
  %0 = stablehlo.constant dense<1> : tensor<i64>
  check.expect_serialized_eq %0, probe_id = "p" : tensor<i64>
  func.return
}

// -----

func.func @errors() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense_resource<missing_blob> : tensor<2xi32>
  func.return
}

// -----

// Functions with arguments and private functions are not run.
func.func @takes_args(%arg0: tensor<f32>) {
  func.return
}
func.func private @helper() {
  func.return
}
