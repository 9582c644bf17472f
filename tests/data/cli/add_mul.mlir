func.func @main(%arg0: tensor<2x3xf32> {jax.arg_info = "x"}, %arg1: tensor<2x3xf32> {jax.arg_info = "y"}) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = stablehlo.add %arg0, %arg1 : tensor<2x3xf32>
  %1 = stablehlo.multiply %arg0, %arg1 : tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}
func.func private @unused(%arg0: tensor<f32>) -> tensor<f32> {
  return %arg0 : tensor<f32>
}
