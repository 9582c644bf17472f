module @jit_types attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf16> {jax.result_info = "result[0]"}, tensor<4xbf16> {jax.result_info = "result[1]"}, tensor<4xf8E4M3FN> {jax.result_info = "result[2]"}, tensor<4xcomplex<f32>> {jax.result_info = "result[3]"}, tensor<4xui8> {jax.result_info = "result[4]"}, tensor<4xi4> {jax.result_info = "result[5]"}, tensor<4xi32> {jax.result_info = "result[6]"}, tensor<4xi1> {jax.result_info = "result[7]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xf16>
    %1 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xbf16>
    %2 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
    %3 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
    %4 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xui8>
    %5 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xi4>
    %6 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xi32>
    %7 = stablehlo.popcnt %6 : tensor<4xi32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %9 = stablehlo.compare GT, %arg0, %8, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    return %0, %1, %2, %3, %4, %5, %7, %9 : tensor<4xf16>, tensor<4xbf16>, tensor<4xf8E4M3FN>, tensor<4xcomplex<f32>>, tensor<4xui8>, tensor<4xi4>, tensor<4xi32>, tensor<4xi1>
  }
}
