module @mlp {
  func.func public @main(
    %x: tensor<?x8xf32> {mhlo.name = "x"},
    %a.weight: tensor<16x8xf32> {mhlo.name = "a.weight"},
    %a.bias: tensor<16xf32> {mhlo.name = "a.bias"},
    %b.weight: tensor<4x16xf32> {mhlo.name = "b.weight"},
    %b.bias: tensor<4xf32> {mhlo.name = "b.bias"}) -> (tensor<?x4xf32>) {
    %v0 = "stablehlo.transpose"(%a.weight) {permutation = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
    %v1 = "stablehlo.dot_general"(%x, %v0) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
    %v2 = "stablehlo.get_dimension_size"(%x) {dimension = 0 : i64} : (tensor<?x8xf32>) -> tensor<i32>
    %v3 = "stablehlo.convert"(%v2) : (tensor<i32>) -> tensor<i64>
    %v4 = "stablehlo.reshape"(%v3) : (tensor<i64>) -> tensor<1xi64>
    %v5 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v6 = "stablehlo.reshape"(%v5) : (tensor<i64>) -> tensor<1xi64>
    %v7 = "stablehlo.concatenate"(%v4, %v6) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v8 = "stablehlo.dynamic_broadcast_in_dim"(%a.bias, %v7) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v9 = "stablehlo.add"(%v1, %v8) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v10 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v11 = "stablehlo.reshape"(%v3) : (tensor<i64>) -> tensor<1xi64>
    %v12 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v13 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v14 = "stablehlo.concatenate"(%v11, %v13) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v15 = "stablehlo.dynamic_broadcast_in_dim"(%v10, %v14) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v16 = "stablehlo.maximum"(%v9, %v15) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v17 = "stablehlo.transpose"(%b.weight) {permutation = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
    %v18 = "stablehlo.dot_general"(%v16, %v17) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x16xf32>, tensor<16x4xf32>) -> tensor<?x4xf32>
    %v19 = "stablehlo.reshape"(%v3) : (tensor<i64>) -> tensor<1xi64>
    %v20 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v21 = "stablehlo.reshape"(%v20) : (tensor<i64>) -> tensor<1xi64>
    %v22 = "stablehlo.concatenate"(%v19, %v21) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v23 = "stablehlo.dynamic_broadcast_in_dim"(%b.bias, %v22) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
    %v24 = "stablehlo.add"(%v18, %v23) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %v25 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %v29 = "stablehlo.reduce"(%v24, %v25) ({
    ^bb0(%r26: tensor<f32>, %r27: tensor<f32>):
      %r28 = "stablehlo.maximum"(%r26, %r27) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r28) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?xf32>
    %v30 = "stablehlo.reshape"(%v3) : (tensor<i64>) -> tensor<1xi64>
    %v31 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v32 = "stablehlo.reshape"(%v31) : (tensor<i64>) -> tensor<1xi64>
    %v33 = "stablehlo.concatenate"(%v30, %v32) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v34 = "stablehlo.dynamic_broadcast_in_dim"(%v29, %v33) {broadcast_dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x4xf32>
    %v35 = "stablehlo.subtract"(%v24, %v34) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %v36 = "stablehlo.exponential"(%v35) : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %v37 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v41 = "stablehlo.reduce"(%v36, %v37) ({
    ^bb0(%r38: tensor<f32>, %r39: tensor<f32>):
      %r40 = "stablehlo.add"(%r38, %r39) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r40) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?xf32>
    %v42 = "stablehlo.reshape"(%v3) : (tensor<i64>) -> tensor<1xi64>
    %v43 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v44 = "stablehlo.reshape"(%v43) : (tensor<i64>) -> tensor<1xi64>
    %v45 = "stablehlo.concatenate"(%v42, %v44) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v46 = "stablehlo.dynamic_broadcast_in_dim"(%v41, %v45) {broadcast_dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x4xf32>
    %v47 = "stablehlo.divide"(%v36, %v46) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    func.return %v47 : tensor<?x4xf32>
  }
}
