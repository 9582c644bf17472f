module @jit_loops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xf32>, %arg1: tensor<6xi32>) -> (tensor<f32> {jax.result_info = "result[0][0]"}, tensor<6xf32> {jax.result_info = "result[0][1]"}, tensor<6xf32> {jax.result_info = "result[1]"}, tensor<6xf32> {jax.result_info = "result[2][0]"}, tensor<6xi32> {jax.result_info = "result[2][1]"}, tensor<3xf32> {jax.result_info = "result[3][0]"}, tensor<3xi32> {jax.result_info = "result[3][1]"}, tensor<6xf32> {jax.result_info = "result[4]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:4 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %c, %iterArg_3 = %cst, %iterArg_4 = %0) : tensor<6xf32>, tensor<i32>, tensor<f32>, tensor<6xf32>
    cond {
      %c_5 = stablehlo.constant dense<6> : tensor<i32>
      %5 = stablehlo.compare LT, %iterArg_2, %c_5, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %5 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_2) : (tensor<6xf32>, tensor<i32>) -> tensor<f32>
      %6:2 = func.call @closed_call(%iterArg_3, %5) : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
      %7 = func.call @dynamic_update_index_in_dim(%iterArg_4, %6#1, %iterArg_2) : (tensor<6xf32>, tensor<f32>, tensor<i32>) -> tensor<6xf32>
      %c_5 = stablehlo.constant dense<1> : tensor<i32>
      %8 = stablehlo.add %iterArg_2, %c_5 : tensor<i32>
      stablehlo.return %iterArg, %8, %6#0, %7 : tensor<6xf32>, tensor<i32>, tensor<f32>, tensor<6xf32>
    }
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %2:2 = stablehlo.while(%iterArg = %c_1, %iterArg_2 = %arg0) : tensor<i32>, tensor<6xf32>
    cond {
      %c_3 = stablehlo.constant dense<10> : tensor<i32>
      %5 = stablehlo.compare LT, %iterArg, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %c_3 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %iterArg, %c_3 : tensor<i32>
      %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %6 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<6xf32>
      %7 = stablehlo.multiply %iterArg_2, %6 : tensor<6xf32>
      stablehlo.return %5, %7 : tensor<i32>, tensor<6xf32>
    }
    %3:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<i32>, %arg5: tensor<i32>):
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %5 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.select %5, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %8 = stablehlo.select %7, %cst_4, %6 : tensor<i1>, tensor<f32>
      %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %9 = stablehlo.compare EQ, %arg3, %cst_5, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %10 = stablehlo.select %9, %cst_6, %arg3 : tensor<i1>, tensor<f32>
      %11 = stablehlo.compare NE, %arg3, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_7 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %12 = stablehlo.select %11, %cst_7, %10 : tensor<i1>, tensor<f32>
      %13 = stablehlo.compare LT, %8, %12, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %13 : tensor<i1>
    }) : (tensor<6xf32>, tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi32>)
    %values, %indices = chlo.top_k(%arg0, k = 3) : tensor<6xf32> -> (tensor<3xf32>, tensor<3xi32>)
    %4 = stablehlo.optimization_barrier %arg0 : tensor<6xf32>
    return %1#2, %1#3, %2#1, %3#0, %3#1, %values, %indices, %4 : tensor<f32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xi32>, tensor<3xf32>, tensor<3xi32>, tensor<6xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<6xf32>, %arg1: tensor<i32>) -> tensor<f32> {
    %0 = stablehlo.dynamic_slice %arg0, %arg1, sizes = [1] : (tensor<6xf32>, tensor<i32>) -> tensor<1xf32>
    %1 = stablehlo.reshape %0 : (tensor<1xf32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
  func.func private @closed_call(%arg0: tensor<f32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
    %0 = stablehlo.convert %arg0 : tensor<f32>
    %1 = stablehlo.add %0, %arg1 : tensor<f32>
    %2 = stablehlo.convert %arg0 : tensor<f32>
    %3 = stablehlo.multiply %2, %arg1 : tensor<f32>
    return %1, %3 : tensor<f32>, tensor<f32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<6xf32>, %arg1: tensor<f32>, %arg2: tensor<i32>) -> tensor<6xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2 : (tensor<6xf32>, tensor<1xf32>, tensor<i32>) -> tensor<6xf32>
    return %1 : tensor<6xf32>
  }
}
