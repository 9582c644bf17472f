module @jit_indexing attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>, %arg1: tensor<i32>) -> (tensor<5xf32> {jax.result_info = "result[0]"}, tensor<4x5xf32> {jax.result_info = "result[1]"}, tensor<4x5xf32> {jax.result_info = "result[2]"}, tensor<2x3xf32> {jax.result_info = "result[3]"}, tensor<7x6xf32> {jax.result_info = "result[4]"}, tensor<4x5xf32> {jax.result_info = "result[5]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare LT, %arg1, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %1 = stablehlo.add %arg1, %c_0 : tensor<i32>
    %2 = stablehlo.select %0, %1, %arg1 : tensor<i1>, tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.compare LT, %c_1, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %c_4 = stablehlo.constant dense<5> : tensor<i32>
    %4 = stablehlo.add %c_3, %c_4 : tensor<i32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.select %3, %4, %c_5 : tensor<i1>, tensor<i32>
    %6 = stablehlo.dynamic_slice %arg0, %2, %5, sizes = [1, 5] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x5xf32>
    %7 = stablehlo.reshape %6 : (tensor<1x5xf32>) -> tensor<5xf32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.compare LT, %arg1, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_7 = stablehlo.constant dense<4> : tensor<i32>
    %9 = stablehlo.add %arg1, %c_7 : tensor<i32>
    %10 = stablehlo.select %8, %9, %arg1 : tensor<i1>, tensor<i32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %13 = "stablehlo.scatter"(%arg0, %11, %12) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %19 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %19 : tensor<f32>
    }) : (tensor<4x5xf32>, tensor<1xi32>, tensor<5xf32>) -> tensor<4x5xf32>
    %14 = call @argsort(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xi32>
    %15 = call @take_along_axis(%arg0, %14) : (tensor<4x5xf32>, tensor<4x5xi32>) -> tensor<4x5xf32>
    %16 = stablehlo.slice %arg0 [1:3, 0:5:2] : (tensor<4x5xf32>) -> tensor<2x3xf32>
    %c_8 = stablehlo.constant dense<0> : tensor<i32>
    %17 = call @_pad(%arg0, %c_8) : (tensor<4x5xf32>, tensor<i32>) -> tensor<7x6xf32>
    %18 = call @_flip(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
    return %7, %13, %15, %16, %17, %18 : tensor<5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<2x3xf32>, tensor<7x6xf32>, tensor<4x5xf32>
  }
  func.func private @argsort(%arg0: tensor<4x5xf32>) -> tensor<4x5xi32> {
    %0 = stablehlo.iota dim = 1 : tensor<4x5xi32>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.compare EQ, %arg1, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %3 = stablehlo.select %2, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %4 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %5 = stablehlo.select %4, %cst_1, %3 : tensor<i1>, tensor<f32>
      %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %6 = stablehlo.compare EQ, %arg2, %cst_2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %7 = stablehlo.select %6, %cst_3, %arg2 : tensor<i1>, tensor<f32>
      %8 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_4 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %9 = stablehlo.select %8, %cst_4, %7 : tensor<i1>, tensor<f32>
      %10 = stablehlo.compare LT, %5, %9, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %10 : tensor<i1>
    }) : (tensor<4x5xf32>, tensor<4x5xi32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
    return %1#1 : tensor<4x5xi32>
  }
  func.func private @take_along_axis(%arg0: tensor<4x5xf32>, %arg1: tensor<4x5xi32>) -> tensor<4x5xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x5xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<4x5xi32>, tensor<4x5xi32>) -> tensor<4x5xi1>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4x5xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<4x5xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<4x5xi1>, tensor<4x5xi32>
    %5 = stablehlo.reshape %4 : (tensor<4x5xi32>) -> tensor<4x5x1xi32>
    %c_1 = stablehlo.constant dense<4> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<4x5x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<4x5x1xi32>, tensor<4x5x1xi32>) -> tensor<4x5x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<4x5x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<4x5x1xi32>, tensor<4x5x1xi32>) -> tensor<4x5x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<4x5x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<4x5x1xi1>, tensor<i1>) -> tensor<4x5xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<4x5xf32>, tensor<4x5x1xi32>) -> tensor<4x5xf32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x5xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<4x5xi1>, tensor<4x5xf32>
    return %15 : tensor<4x5xf32>
  }
  func.func private @_pad(%arg0: tensor<4x5xf32>, %arg1: tensor<i32>) -> tensor<7x6xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [2, 1], interior = [0, 0] : (tensor<4x5xf32>, tensor<f32>) -> tensor<7x6xf32>
    return %1 : tensor<7x6xf32>
  }
  func.func private @_flip(%arg0: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
}
