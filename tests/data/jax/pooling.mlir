module @jit_pooling attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x4x4x2xf32>) -> (tensor<1x2x2x2xf32> {jax.result_info = "result[0]"}, tensor<1x4x4x2xf32> {jax.result_info = "result[1]"}, tensor<1x4x4x2xf32> {jax.result_info = "result[2]"}, tensor<1x4x4x2xf32> {jax.result_info = "result[3]"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %17 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      stablehlo.return %17 : tensor<f32>
    }) : (tensor<1x4x4x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
    %2 = stablehlo.multiply %arg0, %arg0 : tensor<1x4x4x2xf32>
    %3 = stablehlo.multiply %2, %arg0 : tensor<1x4x4x2xf32>
    %cst_0 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x4x4x2xf32>
    %5 = stablehlo.multiply %4, %3 : tensor<1x4x4x2xf32>
    %6 = stablehlo.add %arg0, %5 : tensor<1x4x4x2xf32>
    %cst_1 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<1x4x4x2xf32>
    %8 = stablehlo.multiply %7, %6 : tensor<1x4x4x2xf32>
    %9 = stablehlo.tanh %8 : tensor<1x4x4x2xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<1x4x4x2xf32>
    %11 = stablehlo.add %10, %9 : tensor<1x4x4x2xf32>
    %cst_3 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<1x4x4x2xf32>
    %13 = stablehlo.multiply %12, %11 : tensor<1x4x4x2xf32>
    %14 = stablehlo.multiply %arg0, %13 : tensor<1x4x4x2xf32>
    %15 = chlo.erf %arg0 : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
    %16 = call @sort(%arg0) : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
    return %1, %14, %15, %16 : tensor<1x2x2x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
  }
  func.func private @sort(%arg0: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
    %0 = "stablehlo.sort"(%arg0) <{dimension = 3 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %1 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.select %1, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %4 = stablehlo.select %3, %cst_1, %2 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %5 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.select %5, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %8 = stablehlo.select %7, %cst_4, %6 : tensor<i1>, tensor<f32>
      %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    }) : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
    return %0 : tensor<1x4x4x2xf32>
  }
}
