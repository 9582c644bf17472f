module @mlp {
  func.func @main(%x: tensor<2x4xf32>, %w1: tensor<8x4xf32>, %b1: tensor<8xf32>, %w2: tensor<3x8xf32>,
                  %b2: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
    %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [1] : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
    %1 = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<2x8xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<2x8xf32>
    %h1 = stablehlo.maximum %2, %zero : tensor<2x8xf32>
    %3 = stablehlo.dot_general %h1, %w2, contracting_dims = [1] x [1] : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
    %4 = stablehlo.broadcast_in_dim %b2, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %logits = stablehlo.add %3, %4 : tensor<2x3xf32>
    %probs = stablehlo.logistic %logits : tensor<2x3xf32>
    return %logits, %probs : tensor<2x3xf32>, tensor<2x3xf32>
  }
}
