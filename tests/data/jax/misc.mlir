module @jit_misc attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x3xf32>) -> (tensor<3x6xf32> {jax.result_info = "result[0]"}, tensor<3x3xf32> {jax.result_info = "result[1]"}, tensor<3x3xf32> {jax.result_info = "result[2]"}, tensor<3x3xf32> {jax.result_info = "result[3]"}, tensor<3x3xcomplex<f32>> {jax.result_info = "result[4]"}, tensor<3x3xf32> {jax.result_info = "result[5]"}, tensor<3x3xbf16> {jax.result_info = "result[6]"}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x3xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<3x3xf32>
    %2 = stablehlo.concatenate %arg0, %1, dim = 0 : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<6x3xf32>
    %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<6x3xf32>) -> tensor<3x6xf32>
    %4 = call @cumsum(%arg0) : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %5 = stablehlo.reduce_precision %arg0, format = e5m2 : tensor<3x3xf32>
    %6 = stablehlo.add %4, %5 : tensor<3x3xf32>
    %7 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [1], precision = [HIGHEST, HIGHEST] : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %8 = stablehlo.complex %arg0, %arg0 : tensor<3x3xcomplex<f32>>
    %9 = stablehlo.abs %8 : (tensor<3x3xcomplex<f32>>) -> tensor<3x3xf32>
    %10 = call @fft(%8) : (tensor<3x3xcomplex<f32>>) -> tensor<3x3xcomplex<f32>>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x3xf32>
    %12 = stablehlo.compare GT, %arg0, %11, FLOAT : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xi1>
    %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %13 = call @_where(%12, %arg0, %cst_1) : (tensor<3x3xi1>, tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
    %14 = stablehlo.convert %arg0 : (tensor<3x3xf32>) -> tensor<3x3xbf16>
    return %3, %6, %7, %9, %10, %13, %14 : tensor<3x6xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xcomplex<f32>>, tensor<3x3xf32>, tensor<3x3xbf16>
  }
  func.func private @cumsum(%arg0: tensor<3x3xf32>) -> tensor<3x3xf32> {
    %0 = call @cumsum_0(%arg0) : (tensor<3x3xf32>) -> tensor<3x3xf32>
    return %0 : tensor<3x3xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<3x3xf32>) -> tensor<3x3xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [2, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
    return %1 : tensor<3x3xf32>
  }
  func.func private @fft(%arg0: tensor<3x3xcomplex<f32>>) -> tensor<3x3xcomplex<f32>> {
    %0 = stablehlo.fft %arg0, type = FFT, length = [3] : (tensor<3x3xcomplex<f32>>) -> tensor<3x3xcomplex<f32>>
    return %0 : tensor<3x3xcomplex<f32>>
  }
  func.func private @_where(%arg0: tensor<3x3xi1>, %arg1: tensor<3x3xf32>, %arg2: tensor<f32>) -> tensor<3x3xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<3x3xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<3x3xi1>, tensor<3x3xf32>
    return %2 : tensor<3x3xf32>
  }
}
