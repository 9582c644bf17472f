module @jit_control_flow attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<i32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %c, %iterArg_4 = %arg1, %iterArg_5 = %arg0) : tensor<i32>, tensor<i32>, tensor<3xf32>
    cond {
      %7 = stablehlo.compare LT, %iterArg, %iterArg_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %7 : tensor<i1>
    } do {
      %c_6 = stablehlo.constant dense<1> : tensor<i32>
      %7 = stablehlo.add %iterArg, %c_6 : tensor<i32>
      %cst = stablehlo.constant dense<1.500000e+00> : tensor<f32>
      %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %9 = stablehlo.multiply %iterArg_5, %8 : tensor<3xf32>
      %10 = stablehlo.convert %iterArg : (tensor<i32>) -> tensor<f32>
      %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %12 = stablehlo.add %9, %11 : tensor<3xf32>
      stablehlo.return %7, %iterArg_4, %12 : tensor<i32>, tensor<i32>, tensor<3xf32>
    }
    %c_0 = stablehlo.constant dense<2> : tensor<i32>
    %1 = stablehlo.compare GT, %arg1, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = stablehlo.convert %1 : (tensor<i1>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %8 = stablehlo.subtract %0#2, %7 : tensor<3xf32>
      stablehlo.return %8 : tensor<3xf32>
    }, {
      %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %8 = stablehlo.add %0#2, %7 : tensor<3xf32>
      stablehlo.return %8 : tensor<3xf32>
    }) : (tensor<i32>) -> tensor<3xf32>
    %c_1 = stablehlo.constant dense<3> : tensor<i32>
    %4 = call @remainder(%arg1, %c_1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %c_3 = stablehlo.constant dense<2> : tensor<i32>
    %5 = stablehlo.clamp %c_2, %4, %c_3 : tensor<i32>
    %6 = "stablehlo.case"(%5) ({
      %7 = stablehlo.sine %3 : tensor<3xf32>
      stablehlo.return %7 : tensor<3xf32>
    }, {
      %7 = stablehlo.cosine %3 : tensor<3xf32>
      stablehlo.return %7 : tensor<3xf32>
    }, {
      %7 = stablehlo.tanh %3 : tensor<3xf32>
      stablehlo.return %7 : tensor<3xf32>
    }) : (tensor<i32>) -> tensor<3xf32>
    return %6 : tensor<3xf32>
  }
  func.func private @remainder(%arg0: tensor<i32>, %arg1: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.remainder %arg0, %2 : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.compare NE, %3, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.compare LT, %3, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.compare NE, %5, %6, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %8 = stablehlo.and %7, %4 : tensor<i1>
    %9 = stablehlo.add %3, %2 : tensor<i32>
    %10 = stablehlo.select %8, %9, %3 : tensor<i1>, tensor<i32>
    return %10 : tensor<i32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
}
