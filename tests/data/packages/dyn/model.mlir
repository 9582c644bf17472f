module @dyn {
  func.func @main(%x: tensor<?x4xf32>, %y: tensor<?x3xf32>, %w: tensor<4x3xf32>) -> tensor<?x3xf32> {
    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
    %out = stablehlo.add %0, %y : tensor<?x3xf32>
    return %out : tensor<?x3xf32>
  }
}
