module @jit_scatter_gather attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x4xf32>, %arg1: tensor<4xi32>) -> (tensor<4x4xf32> {jax.result_info = "result[0]"}, tensor<4x4xf32> {jax.result_info = "result[1]"}, tensor<2xf32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<4xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<4xi1>, tensor<4xi32>
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %6 = stablehlo.convert %5 : tensor<4xi32>
    %7 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %8 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %9 = stablehlo.concatenate %7, %8, dim = 1 : (tensor<4x1xi32>, tensor<4x1xi32>) -> tensor<4x2xi32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %11 = "stablehlo.scatter"(%arg0, %9, %10) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      stablehlo.return %arg3 : tensor<f32>
    }) : (tensor<4x4xf32>, tensor<4x2xi32>, tensor<4xf32>) -> tensor<4x4xf32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %13 = stablehlo.compare LT, %arg1, %12, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %c_3 = stablehlo.constant dense<4> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %15 = stablehlo.add %arg1, %14 : tensor<4xi32>
    %16 = stablehlo.select %13, %15, %arg1 : tensor<4xi1>, tensor<4xi32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<4x4xf32>
    %19 = "stablehlo.scatter"(%arg0, %17, %18) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %36 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
      stablehlo.return %36 : tensor<f32>
    }) : (tensor<4x4xf32>, tensor<4x1xi32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %20 = stablehlo.slice %arg1 [0:2] : (tensor<4xi32>) -> tensor<2xi32>
    %21 = stablehlo.slice %arg1 [2:4] : (tensor<4xi32>) -> tensor<2xi32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %22 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %23 = stablehlo.compare LT, %20, %22, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %c_6 = stablehlo.constant dense<4> : tensor<i32>
    %24 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %25 = stablehlo.add %20, %24 : tensor<2xi32>
    %26 = stablehlo.select %23, %25, %20 : tensor<2xi1>, tensor<2xi32>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %27 = stablehlo.broadcast_in_dim %c_7, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %28 = stablehlo.compare LT, %21, %27, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %c_8 = stablehlo.constant dense<4> : tensor<i32>
    %29 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %30 = stablehlo.add %21, %29 : tensor<2xi32>
    %31 = stablehlo.select %28, %30, %21 : tensor<2xi1>, tensor<2xi32>
    %32 = stablehlo.broadcast_in_dim %26, dims = [0] : (tensor<2xi32>) -> tensor<2x1xi32>
    %33 = stablehlo.broadcast_in_dim %31, dims = [0] : (tensor<2xi32>) -> tensor<2x1xi32>
    %34 = stablehlo.concatenate %32, %33, dim = 1 : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x2xi32>
    %35 = "stablehlo.gather"(%arg0, %34) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<4x4xf32>, tensor<2x2xi32>) -> tensor<2xf32>
    return %11, %19, %35 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<2xf32>
  }
}
