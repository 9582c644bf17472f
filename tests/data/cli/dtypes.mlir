func.func @main(%arg0: tensor<4xbf16>, %arg1: tensor<3xi64>, %arg2: tensor<2x2xi1>) -> (tensor<4xbf16>, tensor<3xi64>, tensor<2x2xi1>) {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xbf16>
  %1 = stablehlo.negate %arg1 : tensor<3xi64>
  %2 = stablehlo.not %arg2 : tensor<2x2xi1>
  return %0, %1, %2 : tensor<4xbf16>, tensor<3xi64>, tensor<2x2xi1>
}
