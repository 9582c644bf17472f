module @jit_calls attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "result[0]"}, tensor<2xf32> {jax.result_info = "result[1]"}, tensor<5xf32> {jax.result_info = "result[2]"}) {
    %0 = call @inner(%arg0) : (tensor<5xf32>) -> tensor<5xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.add %arg0, %1 : tensor<5xf32>
    %3 = call @inner(%2) : (tensor<5xf32>) -> tensor<5xf32>
    %4 = stablehlo.add %0, %3 : tensor<5xf32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %5 = stablehlo.dynamic_slice %arg0, %c, sizes = [2] : (tensor<5xf32>, tensor<i32>) -> tensor<2xf32>
    %6 = stablehlo.slice %arg0 [0:2] : (tensor<5xf32>) -> tensor<2xf32>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %7 = stablehlo.dynamic_update_slice %arg0, %6, %c_0 : (tensor<5xf32>, tensor<2xf32>, tensor<i32>) -> tensor<5xf32>
    return %4, %5, %7 : tensor<5xf32>, tensor<2xf32>, tensor<5xf32>
  }
  func.func private @inner(%arg0: tensor<5xf32>) -> tensor<5xf32> {
    %0 = stablehlo.sine %arg0 : tensor<5xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<5xf32>
    return %2 : tensor<5xf32>
  }
}
