module @bert_small {
  func.func public @main(
    %input_ids: tensor<?x16xi64> {mhlo.name = "input_ids"},
    %embeddings.word_embeddings.weight: tensor<1000x64xf32> {mhlo.name = "embeddings.word_embeddings.weight"},
    %embeddings.position_embeddings.weight: tensor<512x64xf32> {mhlo.name = "embeddings.position_embeddings.weight"},
    %embeddings.token_type_embeddings.weight: tensor<2x64xf32> {mhlo.name = "embeddings.token_type_embeddings.weight"},
    %embeddings.LayerNorm.weight: tensor<64xf32> {mhlo.name = "embeddings.LayerNorm.weight"},
    %embeddings.LayerNorm.bias: tensor<64xf32> {mhlo.name = "embeddings.LayerNorm.bias"},
    %encoder.layer.0.attention.self.query.weight: tensor<64x64xf32> {mhlo.name = "encoder.layer.0.attention.self.query.weight"},
    %encoder.layer.0.attention.self.query.bias: tensor<64xf32> {mhlo.name = "encoder.layer.0.attention.self.query.bias"},
    %encoder.layer.0.attention.self.key.weight: tensor<64x64xf32> {mhlo.name = "encoder.layer.0.attention.self.key.weight"},
    %encoder.layer.0.attention.self.key.bias: tensor<64xf32> {mhlo.name = "encoder.layer.0.attention.self.key.bias"},
    %encoder.layer.0.attention.self.value.weight: tensor<64x64xf32> {mhlo.name = "encoder.layer.0.attention.self.value.weight"},
    %encoder.layer.0.attention.self.value.bias: tensor<64xf32> {mhlo.name = "encoder.layer.0.attention.self.value.bias"},
    %encoder.layer.0.attention.output.dense.weight: tensor<64x64xf32> {mhlo.name = "encoder.layer.0.attention.output.dense.weight"},
    %encoder.layer.0.attention.output.dense.bias: tensor<64xf32> {mhlo.name = "encoder.layer.0.attention.output.dense.bias"},
    %encoder.layer.0.attention.output.LayerNorm.weight: tensor<64xf32> {mhlo.name = "encoder.layer.0.attention.output.LayerNorm.weight"},
    %encoder.layer.0.attention.output.LayerNorm.bias: tensor<64xf32> {mhlo.name = "encoder.layer.0.attention.output.LayerNorm.bias"},
    %encoder.layer.0.intermediate.dense.weight: tensor<128x64xf32> {mhlo.name = "encoder.layer.0.intermediate.dense.weight"},
    %encoder.layer.0.intermediate.dense.bias: tensor<128xf32> {mhlo.name = "encoder.layer.0.intermediate.dense.bias"},
    %encoder.layer.0.output.dense.weight: tensor<64x128xf32> {mhlo.name = "encoder.layer.0.output.dense.weight"},
    %encoder.layer.0.output.dense.bias: tensor<64xf32> {mhlo.name = "encoder.layer.0.output.dense.bias"},
    %encoder.layer.0.output.LayerNorm.weight: tensor<64xf32> {mhlo.name = "encoder.layer.0.output.LayerNorm.weight"},
    %encoder.layer.0.output.LayerNorm.bias: tensor<64xf32> {mhlo.name = "encoder.layer.0.output.LayerNorm.bias"},
    %encoder.layer.1.attention.self.query.weight: tensor<64x64xf32> {mhlo.name = "encoder.layer.1.attention.self.query.weight"},
    %encoder.layer.1.attention.self.query.bias: tensor<64xf32> {mhlo.name = "encoder.layer.1.attention.self.query.bias"},
    %encoder.layer.1.attention.self.key.weight: tensor<64x64xf32> {mhlo.name = "encoder.layer.1.attention.self.key.weight"},
    %encoder.layer.1.attention.self.key.bias: tensor<64xf32> {mhlo.name = "encoder.layer.1.attention.self.key.bias"},
    %encoder.layer.1.attention.self.value.weight: tensor<64x64xf32> {mhlo.name = "encoder.layer.1.attention.self.value.weight"},
    %encoder.layer.1.attention.self.value.bias: tensor<64xf32> {mhlo.name = "encoder.layer.1.attention.self.value.bias"},
    %encoder.layer.1.attention.output.dense.weight: tensor<64x64xf32> {mhlo.name = "encoder.layer.1.attention.output.dense.weight"},
    %encoder.layer.1.attention.output.dense.bias: tensor<64xf32> {mhlo.name = "encoder.layer.1.attention.output.dense.bias"},
    %encoder.layer.1.attention.output.LayerNorm.weight: tensor<64xf32> {mhlo.name = "encoder.layer.1.attention.output.LayerNorm.weight"},
    %encoder.layer.1.attention.output.LayerNorm.bias: tensor<64xf32> {mhlo.name = "encoder.layer.1.attention.output.LayerNorm.bias"},
    %encoder.layer.1.intermediate.dense.weight: tensor<128x64xf32> {mhlo.name = "encoder.layer.1.intermediate.dense.weight"},
    %encoder.layer.1.intermediate.dense.bias: tensor<128xf32> {mhlo.name = "encoder.layer.1.intermediate.dense.bias"},
    %encoder.layer.1.output.dense.weight: tensor<64x128xf32> {mhlo.name = "encoder.layer.1.output.dense.weight"},
    %encoder.layer.1.output.dense.bias: tensor<64xf32> {mhlo.name = "encoder.layer.1.output.dense.bias"},
    %encoder.layer.1.output.LayerNorm.weight: tensor<64xf32> {mhlo.name = "encoder.layer.1.output.LayerNorm.weight"},
    %encoder.layer.1.output.LayerNorm.bias: tensor<64xf32> {mhlo.name = "encoder.layer.1.output.LayerNorm.bias"},
    %pooler.dense.weight: tensor<64x64xf32> {mhlo.name = "pooler.dense.weight"},
    %pooler.dense.bias: tensor<64xf32> {mhlo.name = "pooler.dense.bias"},
    %embeddings.position_ids: tensor<1x512xi64> {mhlo.name = "embeddings.position_ids"},
    %embeddings.token_type_ids: tensor<1x512xi64> {mhlo.name = "embeddings.token_type_ids"}) -> (tensor<?x16x64xf32>, tensor<?x64xf32>) {
    %v0 = "stablehlo.slice"(%embeddings.position_ids) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 1, 16>, strides = array<i64: 1, 1>} : (tensor<1x512xi64>) -> tensor<1x16xi64>
    %v1 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<1x16xi64>
    %v2 = "stablehlo.constant"() {value = dense<0> : tensor<1x16xi64>} : () -> tensor<1x16xi64>
    %v3 = "stablehlo.compare"(%v0, %v2) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<1x16xi64>, tensor<1x16xi64>) -> tensor<1x16xi1>
    %v4 = "stablehlo.constant"() {value = dense<512> : tensor<1x16xi64>} : () -> tensor<1x16xi64>
    %v5 = "stablehlo.add"(%v0, %v4) : (tensor<1x16xi64>, tensor<1x16xi64>) -> tensor<1x16xi64>
    %v6 = "stablehlo.select"(%v3, %v5, %v0) : (tensor<1x16xi1>, tensor<1x16xi64>, tensor<1x16xi64>) -> tensor<1x16xi64>
    %v7 = "stablehlo.reshape"(%v1) : (tensor<1x16xi64>) -> tensor<1x16x1xi64>
    %v8 = "stablehlo.reshape"(%v6) : (tensor<1x16xi64>) -> tensor<1x16x1xi64>
    %v9 = "stablehlo.concatenate"(%v7, %v8) {dimension = 2 : i64} : (tensor<1x16x1xi64>, tensor<1x16x1xi64>) -> tensor<1x16x2xi64>
    %v10 = "stablehlo.gather"(%embeddings.token_type_ids, %v9) {dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1>, indices_are_sorted = false} : (tensor<1x512xi64>, tensor<1x16x2xi64>) -> tensor<1x16xi64>
    %v11 = "stablehlo.get_dimension_size"(%input_ids) {dimension = 0 : i64} : (tensor<?x16xi64>) -> tensor<i32>
    %v12 = "stablehlo.convert"(%v11) : (tensor<i32>) -> tensor<i64>
    %v13 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v14 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v15 = "stablehlo.reshape"(%v14) : (tensor<i64>) -> tensor<1xi64>
    %v16 = "stablehlo.concatenate"(%v13, %v15) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v17 = "stablehlo.dynamic_broadcast_in_dim"(%v10, %v16) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x16xi64>, tensor<2xi64>) -> tensor<?x16xi64>
    %v18 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v19 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v20 = "stablehlo.reshape"(%v19) : (tensor<i64>) -> tensor<1xi64>
    %v21 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v22 = "stablehlo.reshape"(%v21) : (tensor<i64>) -> tensor<1xi64>
    %v23 = "stablehlo.concatenate"(%v18, %v20, %v22) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v24 = "stablehlo.dynamic_reshape"(%input_ids, %v23) : (tensor<?x16xi64>, tensor<3xi64>) -> tensor<?x16x1xi64>
    %v25 = "stablehlo.gather"(%embeddings.word_embeddings.weight, %v24) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>, indices_are_sorted = false} : (tensor<1000x64xf32>, tensor<?x16x1xi64>) -> tensor<?x16x64xf32>
    %v26 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v27 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v28 = "stablehlo.reshape"(%v27) : (tensor<i64>) -> tensor<1xi64>
    %v29 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v30 = "stablehlo.reshape"(%v29) : (tensor<i64>) -> tensor<1xi64>
    %v31 = "stablehlo.concatenate"(%v26, %v28, %v30) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v32 = "stablehlo.dynamic_reshape"(%v17, %v31) : (tensor<?x16xi64>, tensor<3xi64>) -> tensor<?x16x1xi64>
    %v33 = "stablehlo.gather"(%embeddings.token_type_embeddings.weight, %v32) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>, indices_are_sorted = false} : (tensor<2x64xf32>, tensor<?x16x1xi64>) -> tensor<?x16x64xf32>
    %v34 = "stablehlo.add"(%v25, %v33) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v35 = "stablehlo.reshape"(%v0) : (tensor<1x16xi64>) -> tensor<1x16x1xi64>
    %v36 = "stablehlo.gather"(%embeddings.position_embeddings.weight, %v35) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>, indices_are_sorted = false} : (tensor<512x64xf32>, tensor<1x16x1xi64>) -> tensor<1x16x64xf32>
    %v37 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v38 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v39 = "stablehlo.reshape"(%v38) : (tensor<i64>) -> tensor<1xi64>
    %v40 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v41 = "stablehlo.reshape"(%v40) : (tensor<i64>) -> tensor<1xi64>
    %v42 = "stablehlo.concatenate"(%v37, %v39, %v41) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v43 = "stablehlo.dynamic_broadcast_in_dim"(%v36, %v42) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<1x16x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v44 = "stablehlo.add"(%v34, %v43) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v45 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v49 = "stablehlo.reduce"(%v44, %v45) ({
    ^bb0(%r46: tensor<f32>, %r47: tensor<f32>):
      %r48 = "stablehlo.add"(%r46, %r47) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r48) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v50 = "stablehlo.constant"() {value = dense<64.0> : tensor<f32>} : () -> tensor<f32>
    %v51 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v52 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v53 = "stablehlo.reshape"(%v52) : (tensor<i64>) -> tensor<1xi64>
    %v54 = "stablehlo.concatenate"(%v51, %v53) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v55 = "stablehlo.dynamic_broadcast_in_dim"(%v50, %v54) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v56 = "stablehlo.divide"(%v49, %v55) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v57 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v58 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v59 = "stablehlo.reshape"(%v58) : (tensor<i64>) -> tensor<1xi64>
    %v60 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v61 = "stablehlo.reshape"(%v60) : (tensor<i64>) -> tensor<1xi64>
    %v62 = "stablehlo.concatenate"(%v57, %v59, %v61) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v63 = "stablehlo.dynamic_broadcast_in_dim"(%v56, %v62) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v64 = "stablehlo.subtract"(%v44, %v63) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v65 = "stablehlo.multiply"(%v64, %v64) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v66 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v70 = "stablehlo.reduce"(%v65, %v66) ({
    ^bb0(%r67: tensor<f32>, %r68: tensor<f32>):
      %r69 = "stablehlo.add"(%r67, %r68) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r69) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v71 = "stablehlo.divide"(%v70, %v55) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v72 = "stablehlo.constant"() {value = dense<1e-12> : tensor<f32>} : () -> tensor<f32>
    %v73 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v74 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v75 = "stablehlo.reshape"(%v74) : (tensor<i64>) -> tensor<1xi64>
    %v76 = "stablehlo.concatenate"(%v73, %v75) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v77 = "stablehlo.dynamic_broadcast_in_dim"(%v72, %v76) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v78 = "stablehlo.add"(%v71, %v77) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v79 = "stablehlo.rsqrt"(%v78) : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %v80 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v81 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v82 = "stablehlo.reshape"(%v81) : (tensor<i64>) -> tensor<1xi64>
    %v83 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v84 = "stablehlo.reshape"(%v83) : (tensor<i64>) -> tensor<1xi64>
    %v85 = "stablehlo.concatenate"(%v80, %v82, %v84) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v86 = "stablehlo.dynamic_broadcast_in_dim"(%v79, %v85) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v87 = "stablehlo.multiply"(%v64, %v86) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v88 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v89 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v90 = "stablehlo.reshape"(%v89) : (tensor<i64>) -> tensor<1xi64>
    %v91 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v92 = "stablehlo.reshape"(%v91) : (tensor<i64>) -> tensor<1xi64>
    %v93 = "stablehlo.concatenate"(%v88, %v90, %v92) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v94 = "stablehlo.dynamic_broadcast_in_dim"(%embeddings.LayerNorm.weight, %v93) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v95 = "stablehlo.multiply"(%v87, %v94) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v96 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v97 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v98 = "stablehlo.reshape"(%v97) : (tensor<i64>) -> tensor<1xi64>
    %v99 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v100 = "stablehlo.reshape"(%v99) : (tensor<i64>) -> tensor<1xi64>
    %v101 = "stablehlo.concatenate"(%v96, %v98, %v100) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v102 = "stablehlo.dynamic_broadcast_in_dim"(%embeddings.LayerNorm.bias, %v101) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v103 = "stablehlo.add"(%v95, %v102) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v104 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v105 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v106 = "stablehlo.reshape"(%v105) : (tensor<i64>) -> tensor<1xi64>
    %v107 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v108 = "stablehlo.reshape"(%v107) : (tensor<i64>) -> tensor<1xi64>
    %v109 = "stablehlo.concatenate"(%v104, %v106, %v108) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v110 = "stablehlo.dynamic_reshape"(%v56, %v109) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v111 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v112 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v113 = "stablehlo.reshape"(%v112) : (tensor<i64>) -> tensor<1xi64>
    %v114 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v115 = "stablehlo.reshape"(%v114) : (tensor<i64>) -> tensor<1xi64>
    %v116 = "stablehlo.concatenate"(%v111, %v113, %v115) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v117 = "stablehlo.dynamic_reshape"(%v79, %v116) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v118 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<16xi64>
    %v119 = "stablehlo.constant"() {value = dense<0> : tensor<16xi64>} : () -> tensor<16xi64>
    %v120 = "stablehlo.add"(%v118, %v119) : (tensor<16xi64>, tensor<16xi64>) -> tensor<16xi64>
    %v121 = "stablehlo.reshape"(%v120) : (tensor<16xi64>) -> tensor<1x16xi64>
    %v122 = "stablehlo.reshape"(%v121) : (tensor<1x16xi64>) -> tensor<1x1x16xi64>
    %v123 = "stablehlo.reshape"(%v122) : (tensor<1x1x16xi64>) -> tensor<1x1x16x1xi64>
    %v124 = "stablehlo.constant"() {value = dense<0> : tensor<1x1x16x1xi64>} : () -> tensor<1x1x16x1xi64>
    %v125 = "stablehlo.compare"(%v123, %v124) {comparison_direction = #stablehlo<comparison_direction GE>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<1x1x16x1xi64>, tensor<1x1x16x1xi64>) -> tensor<1x1x16x1xi1>
    %v126 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v127 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v128 = "stablehlo.reshape"(%v127) : (tensor<i64>) -> tensor<1xi64>
    %v129 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v130 = "stablehlo.reshape"(%v129) : (tensor<i64>) -> tensor<1xi64>
    %v131 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v132 = "stablehlo.reshape"(%v131) : (tensor<i64>) -> tensor<1xi64>
    %v133 = "stablehlo.concatenate"(%v126, %v128, %v130, %v132) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v134 = "stablehlo.dynamic_broadcast_in_dim"(%v125, %v133) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<1x1x16x1xi1>, tensor<4xi64>) -> tensor<?x1x16x16xi1>
    %v135 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v136 = "stablehlo.multiply"(%v135, %v12) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %v137 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v138 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v139 = "stablehlo.reshape"(%v138) : (tensor<i64>) -> tensor<1xi64>
    %v140 = "stablehlo.concatenate"(%v137, %v139) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v141 = "stablehlo.dynamic_reshape"(%v103, %v140) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v142 = "stablehlo.transpose"(%encoder.layer.0.attention.self.query.weight) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %v143 = "stablehlo.dot_general"(%v141, %v142) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %v144 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v145 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v146 = "stablehlo.reshape"(%v145) : (tensor<i64>) -> tensor<1xi64>
    %v147 = "stablehlo.concatenate"(%v144, %v146) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v148 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.attention.self.query.bias, %v147) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v149 = "stablehlo.add"(%v143, %v148) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v150 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v151 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v152 = "stablehlo.reshape"(%v151) : (tensor<i64>) -> tensor<1xi64>
    %v153 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v154 = "stablehlo.reshape"(%v153) : (tensor<i64>) -> tensor<1xi64>
    %v155 = "stablehlo.concatenate"(%v150, %v152, %v154) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v156 = "stablehlo.dynamic_reshape"(%v149, %v155) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v157 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v158 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v159 = "stablehlo.reshape"(%v158) : (tensor<i64>) -> tensor<1xi64>
    %v160 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v161 = "stablehlo.reshape"(%v160) : (tensor<i64>) -> tensor<1xi64>
    %v162 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v163 = "stablehlo.reshape"(%v162) : (tensor<i64>) -> tensor<1xi64>
    %v164 = "stablehlo.concatenate"(%v157, %v159, %v161, %v163) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v165 = "stablehlo.dynamic_reshape"(%v156, %v164) : (tensor<?x16x64xf32>, tensor<4xi64>) -> tensor<?x16x4x16xf32>
    %v166 = "stablehlo.transpose"(%v165) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x16x4x16xf32>) -> tensor<?x4x16x16xf32>
    %v167 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v168 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v169 = "stablehlo.reshape"(%v168) : (tensor<i64>) -> tensor<1xi64>
    %v170 = "stablehlo.concatenate"(%v167, %v169) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v171 = "stablehlo.dynamic_reshape"(%v103, %v170) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v172 = "stablehlo.transpose"(%encoder.layer.0.attention.self.key.weight) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %v173 = "stablehlo.dot_general"(%v171, %v172) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %v174 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v175 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v176 = "stablehlo.reshape"(%v175) : (tensor<i64>) -> tensor<1xi64>
    %v177 = "stablehlo.concatenate"(%v174, %v176) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v178 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.attention.self.key.bias, %v177) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v179 = "stablehlo.add"(%v173, %v178) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v180 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v181 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v182 = "stablehlo.reshape"(%v181) : (tensor<i64>) -> tensor<1xi64>
    %v183 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v184 = "stablehlo.reshape"(%v183) : (tensor<i64>) -> tensor<1xi64>
    %v185 = "stablehlo.concatenate"(%v180, %v182, %v184) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v186 = "stablehlo.dynamic_reshape"(%v179, %v185) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v187 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v188 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v189 = "stablehlo.reshape"(%v188) : (tensor<i64>) -> tensor<1xi64>
    %v190 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v191 = "stablehlo.reshape"(%v190) : (tensor<i64>) -> tensor<1xi64>
    %v192 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v193 = "stablehlo.reshape"(%v192) : (tensor<i64>) -> tensor<1xi64>
    %v194 = "stablehlo.concatenate"(%v187, %v189, %v191, %v193) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v195 = "stablehlo.dynamic_reshape"(%v186, %v194) : (tensor<?x16x64xf32>, tensor<4xi64>) -> tensor<?x16x4x16xf32>
    %v196 = "stablehlo.transpose"(%v195) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x16x4x16xf32>) -> tensor<?x4x16x16xf32>
    %v197 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v198 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v199 = "stablehlo.reshape"(%v198) : (tensor<i64>) -> tensor<1xi64>
    %v200 = "stablehlo.concatenate"(%v197, %v199) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v201 = "stablehlo.dynamic_reshape"(%v103, %v200) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v202 = "stablehlo.transpose"(%encoder.layer.0.attention.self.value.weight) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %v203 = "stablehlo.dot_general"(%v201, %v202) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %v204 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v205 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v206 = "stablehlo.reshape"(%v205) : (tensor<i64>) -> tensor<1xi64>
    %v207 = "stablehlo.concatenate"(%v204, %v206) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v208 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.attention.self.value.bias, %v207) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v209 = "stablehlo.add"(%v203, %v208) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v210 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v211 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v212 = "stablehlo.reshape"(%v211) : (tensor<i64>) -> tensor<1xi64>
    %v213 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v214 = "stablehlo.reshape"(%v213) : (tensor<i64>) -> tensor<1xi64>
    %v215 = "stablehlo.concatenate"(%v210, %v212, %v214) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v216 = "stablehlo.dynamic_reshape"(%v209, %v215) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v217 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v218 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v219 = "stablehlo.reshape"(%v218) : (tensor<i64>) -> tensor<1xi64>
    %v220 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v221 = "stablehlo.reshape"(%v220) : (tensor<i64>) -> tensor<1xi64>
    %v222 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v223 = "stablehlo.reshape"(%v222) : (tensor<i64>) -> tensor<1xi64>
    %v224 = "stablehlo.concatenate"(%v217, %v219, %v221, %v223) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v225 = "stablehlo.dynamic_reshape"(%v216, %v224) : (tensor<?x16x64xf32>, tensor<4xi64>) -> tensor<?x16x4x16xf32>
    %v226 = "stablehlo.transpose"(%v225) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x16x4x16xf32>) -> tensor<?x4x16x16xf32>
    %v227 = "stablehlo.dot_general"(%v166, %v196) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v228 = "stablehlo.constant"() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
    %v229 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v230 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v231 = "stablehlo.reshape"(%v230) : (tensor<i64>) -> tensor<1xi64>
    %v232 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v233 = "stablehlo.reshape"(%v232) : (tensor<i64>) -> tensor<1xi64>
    %v234 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v235 = "stablehlo.reshape"(%v234) : (tensor<i64>) -> tensor<1xi64>
    %v236 = "stablehlo.concatenate"(%v229, %v231, %v233, %v235) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v237 = "stablehlo.dynamic_broadcast_in_dim"(%v228, %v236) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x4x16x16xf32>
    %v238 = "stablehlo.multiply"(%v227, %v237) : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v239 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %v240 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v241 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v242 = "stablehlo.reshape"(%v241) : (tensor<i64>) -> tensor<1xi64>
    %v243 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v244 = "stablehlo.reshape"(%v243) : (tensor<i64>) -> tensor<1xi64>
    %v245 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v246 = "stablehlo.reshape"(%v245) : (tensor<i64>) -> tensor<1xi64>
    %v247 = "stablehlo.concatenate"(%v240, %v242, %v244, %v246) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v248 = "stablehlo.dynamic_broadcast_in_dim"(%v239, %v247) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x4x16x16xf32>
    %v249 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v250 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v251 = "stablehlo.reshape"(%v250) : (tensor<i64>) -> tensor<1xi64>
    %v252 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v253 = "stablehlo.reshape"(%v252) : (tensor<i64>) -> tensor<1xi64>
    %v254 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v255 = "stablehlo.reshape"(%v254) : (tensor<i64>) -> tensor<1xi64>
    %v256 = "stablehlo.concatenate"(%v249, %v251, %v253, %v255) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v257 = "stablehlo.dynamic_broadcast_in_dim"(%v134, %v256) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<?x1x16x16xi1>, tensor<4xi64>) -> tensor<?x4x16x16xi1>
    %v258 = "stablehlo.select"(%v257, %v238, %v248) : (tensor<?x4x16x16xi1>, tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v259 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %v263 = "stablehlo.reduce"(%v258, %v259) ({
    ^bb0(%r260: tensor<f32>, %r261: tensor<f32>):
      %r262 = "stablehlo.maximum"(%r260, %r261) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r262) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<?x4x16x16xf32>, tensor<f32>) -> tensor<?x4x16xf32>
    %v264 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v265 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v266 = "stablehlo.reshape"(%v265) : (tensor<i64>) -> tensor<1xi64>
    %v267 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v268 = "stablehlo.reshape"(%v267) : (tensor<i64>) -> tensor<1xi64>
    %v269 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v270 = "stablehlo.reshape"(%v269) : (tensor<i64>) -> tensor<1xi64>
    %v271 = "stablehlo.concatenate"(%v264, %v266, %v268, %v270) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v272 = "stablehlo.dynamic_broadcast_in_dim"(%v263, %v271) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<?x4x16xf32>, tensor<4xi64>) -> tensor<?x4x16x16xf32>
    %v273 = "stablehlo.subtract"(%v258, %v272) : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v274 = "stablehlo.exponential"(%v273) : (tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v275 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v279 = "stablehlo.reduce"(%v274, %v275) ({
    ^bb0(%r276: tensor<f32>, %r277: tensor<f32>):
      %r278 = "stablehlo.add"(%r276, %r277) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r278) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<?x4x16x16xf32>, tensor<f32>) -> tensor<?x4x16xf32>
    %v280 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v281 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v282 = "stablehlo.reshape"(%v281) : (tensor<i64>) -> tensor<1xi64>
    %v283 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v284 = "stablehlo.reshape"(%v283) : (tensor<i64>) -> tensor<1xi64>
    %v285 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v286 = "stablehlo.reshape"(%v285) : (tensor<i64>) -> tensor<1xi64>
    %v287 = "stablehlo.concatenate"(%v280, %v282, %v284, %v286) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v288 = "stablehlo.dynamic_broadcast_in_dim"(%v279, %v287) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<?x4x16xf32>, tensor<4xi64>) -> tensor<?x4x16x16xf32>
    %v289 = "stablehlo.divide"(%v274, %v288) : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v290 = "stablehlo.dot_general"(%v289, %v226) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v291 = "stablehlo.transpose"(%v290) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x4x16x16xf32>) -> tensor<?x16x4x16xf32>
    %v292 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v293 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v294 = "stablehlo.reshape"(%v293) : (tensor<i64>) -> tensor<1xi64>
    %v295 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v296 = "stablehlo.reshape"(%v295) : (tensor<i64>) -> tensor<1xi64>
    %v297 = "stablehlo.concatenate"(%v292, %v294, %v296) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v298 = "stablehlo.dynamic_reshape"(%v291, %v297) : (tensor<?x16x4x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v299 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v300 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v301 = "stablehlo.reshape"(%v300) : (tensor<i64>) -> tensor<1xi64>
    %v302 = "stablehlo.concatenate"(%v299, %v301) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v303 = "stablehlo.dynamic_reshape"(%v298, %v302) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v304 = "stablehlo.transpose"(%encoder.layer.0.attention.output.dense.weight) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %v305 = "stablehlo.dot_general"(%v303, %v304) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %v306 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v307 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v308 = "stablehlo.reshape"(%v307) : (tensor<i64>) -> tensor<1xi64>
    %v309 = "stablehlo.concatenate"(%v306, %v308) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v310 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.attention.output.dense.bias, %v309) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v311 = "stablehlo.add"(%v305, %v310) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v312 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v313 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v314 = "stablehlo.reshape"(%v313) : (tensor<i64>) -> tensor<1xi64>
    %v315 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v316 = "stablehlo.reshape"(%v315) : (tensor<i64>) -> tensor<1xi64>
    %v317 = "stablehlo.concatenate"(%v312, %v314, %v316) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v318 = "stablehlo.dynamic_reshape"(%v311, %v317) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v319 = "stablehlo.add"(%v318, %v103) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v320 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v324 = "stablehlo.reduce"(%v319, %v320) ({
    ^bb0(%r321: tensor<f32>, %r322: tensor<f32>):
      %r323 = "stablehlo.add"(%r321, %r322) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r323) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v325 = "stablehlo.constant"() {value = dense<64.0> : tensor<f32>} : () -> tensor<f32>
    %v326 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v327 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v328 = "stablehlo.reshape"(%v327) : (tensor<i64>) -> tensor<1xi64>
    %v329 = "stablehlo.concatenate"(%v326, %v328) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v330 = "stablehlo.dynamic_broadcast_in_dim"(%v325, %v329) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v331 = "stablehlo.divide"(%v324, %v330) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v332 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v333 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v334 = "stablehlo.reshape"(%v333) : (tensor<i64>) -> tensor<1xi64>
    %v335 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v336 = "stablehlo.reshape"(%v335) : (tensor<i64>) -> tensor<1xi64>
    %v337 = "stablehlo.concatenate"(%v332, %v334, %v336) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v338 = "stablehlo.dynamic_broadcast_in_dim"(%v331, %v337) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v339 = "stablehlo.subtract"(%v319, %v338) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v340 = "stablehlo.multiply"(%v339, %v339) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v341 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v345 = "stablehlo.reduce"(%v340, %v341) ({
    ^bb0(%r342: tensor<f32>, %r343: tensor<f32>):
      %r344 = "stablehlo.add"(%r342, %r343) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r344) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v346 = "stablehlo.divide"(%v345, %v330) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v347 = "stablehlo.constant"() {value = dense<1e-12> : tensor<f32>} : () -> tensor<f32>
    %v348 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v349 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v350 = "stablehlo.reshape"(%v349) : (tensor<i64>) -> tensor<1xi64>
    %v351 = "stablehlo.concatenate"(%v348, %v350) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v352 = "stablehlo.dynamic_broadcast_in_dim"(%v347, %v351) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v353 = "stablehlo.add"(%v346, %v352) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v354 = "stablehlo.rsqrt"(%v353) : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %v355 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v356 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v357 = "stablehlo.reshape"(%v356) : (tensor<i64>) -> tensor<1xi64>
    %v358 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v359 = "stablehlo.reshape"(%v358) : (tensor<i64>) -> tensor<1xi64>
    %v360 = "stablehlo.concatenate"(%v355, %v357, %v359) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v361 = "stablehlo.dynamic_broadcast_in_dim"(%v354, %v360) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v362 = "stablehlo.multiply"(%v339, %v361) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v363 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v364 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v365 = "stablehlo.reshape"(%v364) : (tensor<i64>) -> tensor<1xi64>
    %v366 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v367 = "stablehlo.reshape"(%v366) : (tensor<i64>) -> tensor<1xi64>
    %v368 = "stablehlo.concatenate"(%v363, %v365, %v367) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v369 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.attention.output.LayerNorm.weight, %v368) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v370 = "stablehlo.multiply"(%v362, %v369) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v371 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v372 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v373 = "stablehlo.reshape"(%v372) : (tensor<i64>) -> tensor<1xi64>
    %v374 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v375 = "stablehlo.reshape"(%v374) : (tensor<i64>) -> tensor<1xi64>
    %v376 = "stablehlo.concatenate"(%v371, %v373, %v375) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v377 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.attention.output.LayerNorm.bias, %v376) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v378 = "stablehlo.add"(%v370, %v377) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v379 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v380 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v381 = "stablehlo.reshape"(%v380) : (tensor<i64>) -> tensor<1xi64>
    %v382 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v383 = "stablehlo.reshape"(%v382) : (tensor<i64>) -> tensor<1xi64>
    %v384 = "stablehlo.concatenate"(%v379, %v381, %v383) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v385 = "stablehlo.dynamic_reshape"(%v331, %v384) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v386 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v387 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v388 = "stablehlo.reshape"(%v387) : (tensor<i64>) -> tensor<1xi64>
    %v389 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v390 = "stablehlo.reshape"(%v389) : (tensor<i64>) -> tensor<1xi64>
    %v391 = "stablehlo.concatenate"(%v386, %v388, %v390) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v392 = "stablehlo.dynamic_reshape"(%v354, %v391) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v393 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v394 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v395 = "stablehlo.reshape"(%v394) : (tensor<i64>) -> tensor<1xi64>
    %v396 = "stablehlo.concatenate"(%v393, %v395) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v397 = "stablehlo.dynamic_reshape"(%v378, %v396) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v398 = "stablehlo.transpose"(%encoder.layer.0.intermediate.dense.weight) {permutation = array<i64: 1, 0>} : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %v399 = "stablehlo.dot_general"(%v397, %v398) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x128xf32>) -> tensor<?x128xf32>
    %v400 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v401 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v402 = "stablehlo.reshape"(%v401) : (tensor<i64>) -> tensor<1xi64>
    %v403 = "stablehlo.concatenate"(%v400, %v402) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v404 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.intermediate.dense.bias, %v403) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v405 = "stablehlo.add"(%v399, %v404) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v406 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v407 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v408 = "stablehlo.reshape"(%v407) : (tensor<i64>) -> tensor<1xi64>
    %v409 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v410 = "stablehlo.reshape"(%v409) : (tensor<i64>) -> tensor<1xi64>
    %v411 = "stablehlo.concatenate"(%v406, %v408, %v410) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v412 = "stablehlo.dynamic_reshape"(%v405, %v411) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<?x16x128xf32>
    %v413 = "stablehlo.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %v414 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v415 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v416 = "stablehlo.reshape"(%v415) : (tensor<i64>) -> tensor<1xi64>
    %v417 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v418 = "stablehlo.reshape"(%v417) : (tensor<i64>) -> tensor<1xi64>
    %v419 = "stablehlo.concatenate"(%v414, %v416, %v418) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v420 = "stablehlo.dynamic_broadcast_in_dim"(%v413, %v419) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<3xi64>) -> tensor<?x16x128xf32>
    %v421 = "stablehlo.multiply"(%v412, %v420) : (tensor<?x16x128xf32>, tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v422 = "stablehlo.constant"() {value = dense<0.7071067811865476> : tensor<f32>} : () -> tensor<f32>
    %v423 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v424 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v425 = "stablehlo.reshape"(%v424) : (tensor<i64>) -> tensor<1xi64>
    %v426 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v427 = "stablehlo.reshape"(%v426) : (tensor<i64>) -> tensor<1xi64>
    %v428 = "stablehlo.concatenate"(%v423, %v425, %v427) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v429 = "stablehlo.dynamic_broadcast_in_dim"(%v422, %v428) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<3xi64>) -> tensor<?x16x128xf32>
    %v430 = "stablehlo.multiply"(%v412, %v429) : (tensor<?x16x128xf32>, tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v431 = "chlo.erf"(%v430) : (tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v432 = "stablehlo.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %v433 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v434 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v435 = "stablehlo.reshape"(%v434) : (tensor<i64>) -> tensor<1xi64>
    %v436 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v437 = "stablehlo.reshape"(%v436) : (tensor<i64>) -> tensor<1xi64>
    %v438 = "stablehlo.concatenate"(%v433, %v435, %v437) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v439 = "stablehlo.dynamic_broadcast_in_dim"(%v432, %v438) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<3xi64>) -> tensor<?x16x128xf32>
    %v440 = "stablehlo.add"(%v431, %v439) : (tensor<?x16x128xf32>, tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v441 = "stablehlo.multiply"(%v421, %v440) : (tensor<?x16x128xf32>, tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v442 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v443 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v444 = "stablehlo.reshape"(%v443) : (tensor<i64>) -> tensor<1xi64>
    %v445 = "stablehlo.concatenate"(%v442, %v444) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v446 = "stablehlo.dynamic_reshape"(%v441, %v445) : (tensor<?x16x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v447 = "stablehlo.transpose"(%encoder.layer.0.output.dense.weight) {permutation = array<i64: 1, 0>} : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %v448 = "stablehlo.dot_general"(%v446, %v447) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x128xf32>, tensor<128x64xf32>) -> tensor<?x64xf32>
    %v449 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v450 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v451 = "stablehlo.reshape"(%v450) : (tensor<i64>) -> tensor<1xi64>
    %v452 = "stablehlo.concatenate"(%v449, %v451) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v453 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.output.dense.bias, %v452) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v454 = "stablehlo.add"(%v448, %v453) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v455 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v456 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v457 = "stablehlo.reshape"(%v456) : (tensor<i64>) -> tensor<1xi64>
    %v458 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v459 = "stablehlo.reshape"(%v458) : (tensor<i64>) -> tensor<1xi64>
    %v460 = "stablehlo.concatenate"(%v455, %v457, %v459) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v461 = "stablehlo.dynamic_reshape"(%v454, %v460) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v462 = "stablehlo.add"(%v461, %v378) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v463 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v467 = "stablehlo.reduce"(%v462, %v463) ({
    ^bb0(%r464: tensor<f32>, %r465: tensor<f32>):
      %r466 = "stablehlo.add"(%r464, %r465) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r466) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v468 = "stablehlo.constant"() {value = dense<64.0> : tensor<f32>} : () -> tensor<f32>
    %v469 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v470 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v471 = "stablehlo.reshape"(%v470) : (tensor<i64>) -> tensor<1xi64>
    %v472 = "stablehlo.concatenate"(%v469, %v471) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v473 = "stablehlo.dynamic_broadcast_in_dim"(%v468, %v472) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v474 = "stablehlo.divide"(%v467, %v473) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v475 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v476 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v477 = "stablehlo.reshape"(%v476) : (tensor<i64>) -> tensor<1xi64>
    %v478 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v479 = "stablehlo.reshape"(%v478) : (tensor<i64>) -> tensor<1xi64>
    %v480 = "stablehlo.concatenate"(%v475, %v477, %v479) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v481 = "stablehlo.dynamic_broadcast_in_dim"(%v474, %v480) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v482 = "stablehlo.subtract"(%v462, %v481) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v483 = "stablehlo.multiply"(%v482, %v482) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v484 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v488 = "stablehlo.reduce"(%v483, %v484) ({
    ^bb0(%r485: tensor<f32>, %r486: tensor<f32>):
      %r487 = "stablehlo.add"(%r485, %r486) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r487) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v489 = "stablehlo.divide"(%v488, %v473) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v490 = "stablehlo.constant"() {value = dense<1e-12> : tensor<f32>} : () -> tensor<f32>
    %v491 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v492 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v493 = "stablehlo.reshape"(%v492) : (tensor<i64>) -> tensor<1xi64>
    %v494 = "stablehlo.concatenate"(%v491, %v493) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v495 = "stablehlo.dynamic_broadcast_in_dim"(%v490, %v494) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v496 = "stablehlo.add"(%v489, %v495) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v497 = "stablehlo.rsqrt"(%v496) : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %v498 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v499 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v500 = "stablehlo.reshape"(%v499) : (tensor<i64>) -> tensor<1xi64>
    %v501 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v502 = "stablehlo.reshape"(%v501) : (tensor<i64>) -> tensor<1xi64>
    %v503 = "stablehlo.concatenate"(%v498, %v500, %v502) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v504 = "stablehlo.dynamic_broadcast_in_dim"(%v497, %v503) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v505 = "stablehlo.multiply"(%v482, %v504) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v506 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v507 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v508 = "stablehlo.reshape"(%v507) : (tensor<i64>) -> tensor<1xi64>
    %v509 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v510 = "stablehlo.reshape"(%v509) : (tensor<i64>) -> tensor<1xi64>
    %v511 = "stablehlo.concatenate"(%v506, %v508, %v510) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v512 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.output.LayerNorm.weight, %v511) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v513 = "stablehlo.multiply"(%v505, %v512) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v514 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v515 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v516 = "stablehlo.reshape"(%v515) : (tensor<i64>) -> tensor<1xi64>
    %v517 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v518 = "stablehlo.reshape"(%v517) : (tensor<i64>) -> tensor<1xi64>
    %v519 = "stablehlo.concatenate"(%v514, %v516, %v518) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v520 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.0.output.LayerNorm.bias, %v519) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v521 = "stablehlo.add"(%v513, %v520) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v522 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v523 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v524 = "stablehlo.reshape"(%v523) : (tensor<i64>) -> tensor<1xi64>
    %v525 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v526 = "stablehlo.reshape"(%v525) : (tensor<i64>) -> tensor<1xi64>
    %v527 = "stablehlo.concatenate"(%v522, %v524, %v526) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v528 = "stablehlo.dynamic_reshape"(%v474, %v527) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v529 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v530 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v531 = "stablehlo.reshape"(%v530) : (tensor<i64>) -> tensor<1xi64>
    %v532 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v533 = "stablehlo.reshape"(%v532) : (tensor<i64>) -> tensor<1xi64>
    %v534 = "stablehlo.concatenate"(%v529, %v531, %v533) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v535 = "stablehlo.dynamic_reshape"(%v497, %v534) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v536 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v537 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v538 = "stablehlo.reshape"(%v537) : (tensor<i64>) -> tensor<1xi64>
    %v539 = "stablehlo.concatenate"(%v536, %v538) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v540 = "stablehlo.dynamic_reshape"(%v521, %v539) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v541 = "stablehlo.transpose"(%encoder.layer.1.attention.self.query.weight) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %v542 = "stablehlo.dot_general"(%v540, %v541) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %v543 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v544 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v545 = "stablehlo.reshape"(%v544) : (tensor<i64>) -> tensor<1xi64>
    %v546 = "stablehlo.concatenate"(%v543, %v545) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v547 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.attention.self.query.bias, %v546) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v548 = "stablehlo.add"(%v542, %v547) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v549 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v550 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v551 = "stablehlo.reshape"(%v550) : (tensor<i64>) -> tensor<1xi64>
    %v552 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v553 = "stablehlo.reshape"(%v552) : (tensor<i64>) -> tensor<1xi64>
    %v554 = "stablehlo.concatenate"(%v549, %v551, %v553) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v555 = "stablehlo.dynamic_reshape"(%v548, %v554) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v556 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v557 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v558 = "stablehlo.reshape"(%v557) : (tensor<i64>) -> tensor<1xi64>
    %v559 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v560 = "stablehlo.reshape"(%v559) : (tensor<i64>) -> tensor<1xi64>
    %v561 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v562 = "stablehlo.reshape"(%v561) : (tensor<i64>) -> tensor<1xi64>
    %v563 = "stablehlo.concatenate"(%v556, %v558, %v560, %v562) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v564 = "stablehlo.dynamic_reshape"(%v555, %v563) : (tensor<?x16x64xf32>, tensor<4xi64>) -> tensor<?x16x4x16xf32>
    %v565 = "stablehlo.transpose"(%v564) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x16x4x16xf32>) -> tensor<?x4x16x16xf32>
    %v566 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v567 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v568 = "stablehlo.reshape"(%v567) : (tensor<i64>) -> tensor<1xi64>
    %v569 = "stablehlo.concatenate"(%v566, %v568) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v570 = "stablehlo.dynamic_reshape"(%v521, %v569) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v571 = "stablehlo.transpose"(%encoder.layer.1.attention.self.key.weight) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %v572 = "stablehlo.dot_general"(%v570, %v571) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %v573 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v574 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v575 = "stablehlo.reshape"(%v574) : (tensor<i64>) -> tensor<1xi64>
    %v576 = "stablehlo.concatenate"(%v573, %v575) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v577 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.attention.self.key.bias, %v576) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v578 = "stablehlo.add"(%v572, %v577) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v579 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v580 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v581 = "stablehlo.reshape"(%v580) : (tensor<i64>) -> tensor<1xi64>
    %v582 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v583 = "stablehlo.reshape"(%v582) : (tensor<i64>) -> tensor<1xi64>
    %v584 = "stablehlo.concatenate"(%v579, %v581, %v583) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v585 = "stablehlo.dynamic_reshape"(%v578, %v584) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v586 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v587 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v588 = "stablehlo.reshape"(%v587) : (tensor<i64>) -> tensor<1xi64>
    %v589 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v590 = "stablehlo.reshape"(%v589) : (tensor<i64>) -> tensor<1xi64>
    %v591 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v592 = "stablehlo.reshape"(%v591) : (tensor<i64>) -> tensor<1xi64>
    %v593 = "stablehlo.concatenate"(%v586, %v588, %v590, %v592) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v594 = "stablehlo.dynamic_reshape"(%v585, %v593) : (tensor<?x16x64xf32>, tensor<4xi64>) -> tensor<?x16x4x16xf32>
    %v595 = "stablehlo.transpose"(%v594) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x16x4x16xf32>) -> tensor<?x4x16x16xf32>
    %v596 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v597 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v598 = "stablehlo.reshape"(%v597) : (tensor<i64>) -> tensor<1xi64>
    %v599 = "stablehlo.concatenate"(%v596, %v598) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v600 = "stablehlo.dynamic_reshape"(%v521, %v599) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v601 = "stablehlo.transpose"(%encoder.layer.1.attention.self.value.weight) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %v602 = "stablehlo.dot_general"(%v600, %v601) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %v603 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v604 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v605 = "stablehlo.reshape"(%v604) : (tensor<i64>) -> tensor<1xi64>
    %v606 = "stablehlo.concatenate"(%v603, %v605) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v607 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.attention.self.value.bias, %v606) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v608 = "stablehlo.add"(%v602, %v607) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v609 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v610 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v611 = "stablehlo.reshape"(%v610) : (tensor<i64>) -> tensor<1xi64>
    %v612 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v613 = "stablehlo.reshape"(%v612) : (tensor<i64>) -> tensor<1xi64>
    %v614 = "stablehlo.concatenate"(%v609, %v611, %v613) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v615 = "stablehlo.dynamic_reshape"(%v608, %v614) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v616 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v617 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v618 = "stablehlo.reshape"(%v617) : (tensor<i64>) -> tensor<1xi64>
    %v619 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v620 = "stablehlo.reshape"(%v619) : (tensor<i64>) -> tensor<1xi64>
    %v621 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v622 = "stablehlo.reshape"(%v621) : (tensor<i64>) -> tensor<1xi64>
    %v623 = "stablehlo.concatenate"(%v616, %v618, %v620, %v622) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v624 = "stablehlo.dynamic_reshape"(%v615, %v623) : (tensor<?x16x64xf32>, tensor<4xi64>) -> tensor<?x16x4x16xf32>
    %v625 = "stablehlo.transpose"(%v624) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x16x4x16xf32>) -> tensor<?x4x16x16xf32>
    %v626 = "stablehlo.dot_general"(%v565, %v595) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v627 = "stablehlo.constant"() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
    %v628 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v629 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v630 = "stablehlo.reshape"(%v629) : (tensor<i64>) -> tensor<1xi64>
    %v631 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v632 = "stablehlo.reshape"(%v631) : (tensor<i64>) -> tensor<1xi64>
    %v633 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v634 = "stablehlo.reshape"(%v633) : (tensor<i64>) -> tensor<1xi64>
    %v635 = "stablehlo.concatenate"(%v628, %v630, %v632, %v634) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v636 = "stablehlo.dynamic_broadcast_in_dim"(%v627, %v635) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x4x16x16xf32>
    %v637 = "stablehlo.multiply"(%v626, %v636) : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v638 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %v639 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v640 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v641 = "stablehlo.reshape"(%v640) : (tensor<i64>) -> tensor<1xi64>
    %v642 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v643 = "stablehlo.reshape"(%v642) : (tensor<i64>) -> tensor<1xi64>
    %v644 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v645 = "stablehlo.reshape"(%v644) : (tensor<i64>) -> tensor<1xi64>
    %v646 = "stablehlo.concatenate"(%v639, %v641, %v643, %v645) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v647 = "stablehlo.dynamic_broadcast_in_dim"(%v638, %v646) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x4x16x16xf32>
    %v648 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v649 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v650 = "stablehlo.reshape"(%v649) : (tensor<i64>) -> tensor<1xi64>
    %v651 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v652 = "stablehlo.reshape"(%v651) : (tensor<i64>) -> tensor<1xi64>
    %v653 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v654 = "stablehlo.reshape"(%v653) : (tensor<i64>) -> tensor<1xi64>
    %v655 = "stablehlo.concatenate"(%v648, %v650, %v652, %v654) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v656 = "stablehlo.dynamic_broadcast_in_dim"(%v134, %v655) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<?x1x16x16xi1>, tensor<4xi64>) -> tensor<?x4x16x16xi1>
    %v657 = "stablehlo.select"(%v656, %v637, %v647) : (tensor<?x4x16x16xi1>, tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v658 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %v662 = "stablehlo.reduce"(%v657, %v658) ({
    ^bb0(%r659: tensor<f32>, %r660: tensor<f32>):
      %r661 = "stablehlo.maximum"(%r659, %r660) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r661) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<?x4x16x16xf32>, tensor<f32>) -> tensor<?x4x16xf32>
    %v663 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v664 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v665 = "stablehlo.reshape"(%v664) : (tensor<i64>) -> tensor<1xi64>
    %v666 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v667 = "stablehlo.reshape"(%v666) : (tensor<i64>) -> tensor<1xi64>
    %v668 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v669 = "stablehlo.reshape"(%v668) : (tensor<i64>) -> tensor<1xi64>
    %v670 = "stablehlo.concatenate"(%v663, %v665, %v667, %v669) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v671 = "stablehlo.dynamic_broadcast_in_dim"(%v662, %v670) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<?x4x16xf32>, tensor<4xi64>) -> tensor<?x4x16x16xf32>
    %v672 = "stablehlo.subtract"(%v657, %v671) : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v673 = "stablehlo.exponential"(%v672) : (tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v674 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v678 = "stablehlo.reduce"(%v673, %v674) ({
    ^bb0(%r675: tensor<f32>, %r676: tensor<f32>):
      %r677 = "stablehlo.add"(%r675, %r676) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r677) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 3>} : (tensor<?x4x16x16xf32>, tensor<f32>) -> tensor<?x4x16xf32>
    %v679 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v680 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v681 = "stablehlo.reshape"(%v680) : (tensor<i64>) -> tensor<1xi64>
    %v682 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v683 = "stablehlo.reshape"(%v682) : (tensor<i64>) -> tensor<1xi64>
    %v684 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v685 = "stablehlo.reshape"(%v684) : (tensor<i64>) -> tensor<1xi64>
    %v686 = "stablehlo.concatenate"(%v679, %v681, %v683, %v685) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v687 = "stablehlo.dynamic_broadcast_in_dim"(%v678, %v686) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<?x4x16xf32>, tensor<4xi64>) -> tensor<?x4x16x16xf32>
    %v688 = "stablehlo.divide"(%v673, %v687) : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v689 = "stablehlo.dot_general"(%v688, %v625) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<?x4x16x16xf32>, tensor<?x4x16x16xf32>) -> tensor<?x4x16x16xf32>
    %v690 = "stablehlo.transpose"(%v689) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x4x16x16xf32>) -> tensor<?x16x4x16xf32>
    %v691 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v692 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v693 = "stablehlo.reshape"(%v692) : (tensor<i64>) -> tensor<1xi64>
    %v694 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v695 = "stablehlo.reshape"(%v694) : (tensor<i64>) -> tensor<1xi64>
    %v696 = "stablehlo.concatenate"(%v691, %v693, %v695) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v697 = "stablehlo.dynamic_reshape"(%v690, %v696) : (tensor<?x16x4x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v698 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v699 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v700 = "stablehlo.reshape"(%v699) : (tensor<i64>) -> tensor<1xi64>
    %v701 = "stablehlo.concatenate"(%v698, %v700) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v702 = "stablehlo.dynamic_reshape"(%v697, %v701) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v703 = "stablehlo.transpose"(%encoder.layer.1.attention.output.dense.weight) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %v704 = "stablehlo.dot_general"(%v702, %v703) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %v705 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v706 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v707 = "stablehlo.reshape"(%v706) : (tensor<i64>) -> tensor<1xi64>
    %v708 = "stablehlo.concatenate"(%v705, %v707) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v709 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.attention.output.dense.bias, %v708) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v710 = "stablehlo.add"(%v704, %v709) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v711 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v712 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v713 = "stablehlo.reshape"(%v712) : (tensor<i64>) -> tensor<1xi64>
    %v714 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v715 = "stablehlo.reshape"(%v714) : (tensor<i64>) -> tensor<1xi64>
    %v716 = "stablehlo.concatenate"(%v711, %v713, %v715) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v717 = "stablehlo.dynamic_reshape"(%v710, %v716) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v718 = "stablehlo.add"(%v717, %v521) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v719 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v723 = "stablehlo.reduce"(%v718, %v719) ({
    ^bb0(%r720: tensor<f32>, %r721: tensor<f32>):
      %r722 = "stablehlo.add"(%r720, %r721) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r722) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v724 = "stablehlo.constant"() {value = dense<64.0> : tensor<f32>} : () -> tensor<f32>
    %v725 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v726 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v727 = "stablehlo.reshape"(%v726) : (tensor<i64>) -> tensor<1xi64>
    %v728 = "stablehlo.concatenate"(%v725, %v727) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v729 = "stablehlo.dynamic_broadcast_in_dim"(%v724, %v728) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v730 = "stablehlo.divide"(%v723, %v729) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v731 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v732 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v733 = "stablehlo.reshape"(%v732) : (tensor<i64>) -> tensor<1xi64>
    %v734 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v735 = "stablehlo.reshape"(%v734) : (tensor<i64>) -> tensor<1xi64>
    %v736 = "stablehlo.concatenate"(%v731, %v733, %v735) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v737 = "stablehlo.dynamic_broadcast_in_dim"(%v730, %v736) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v738 = "stablehlo.subtract"(%v718, %v737) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v739 = "stablehlo.multiply"(%v738, %v738) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v740 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v744 = "stablehlo.reduce"(%v739, %v740) ({
    ^bb0(%r741: tensor<f32>, %r742: tensor<f32>):
      %r743 = "stablehlo.add"(%r741, %r742) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r743) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v745 = "stablehlo.divide"(%v744, %v729) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v746 = "stablehlo.constant"() {value = dense<1e-12> : tensor<f32>} : () -> tensor<f32>
    %v747 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v748 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v749 = "stablehlo.reshape"(%v748) : (tensor<i64>) -> tensor<1xi64>
    %v750 = "stablehlo.concatenate"(%v747, %v749) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v751 = "stablehlo.dynamic_broadcast_in_dim"(%v746, %v750) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v752 = "stablehlo.add"(%v745, %v751) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v753 = "stablehlo.rsqrt"(%v752) : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %v754 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v755 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v756 = "stablehlo.reshape"(%v755) : (tensor<i64>) -> tensor<1xi64>
    %v757 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v758 = "stablehlo.reshape"(%v757) : (tensor<i64>) -> tensor<1xi64>
    %v759 = "stablehlo.concatenate"(%v754, %v756, %v758) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v760 = "stablehlo.dynamic_broadcast_in_dim"(%v753, %v759) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v761 = "stablehlo.multiply"(%v738, %v760) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v762 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v763 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v764 = "stablehlo.reshape"(%v763) : (tensor<i64>) -> tensor<1xi64>
    %v765 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v766 = "stablehlo.reshape"(%v765) : (tensor<i64>) -> tensor<1xi64>
    %v767 = "stablehlo.concatenate"(%v762, %v764, %v766) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v768 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.attention.output.LayerNorm.weight, %v767) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v769 = "stablehlo.multiply"(%v761, %v768) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v770 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v771 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v772 = "stablehlo.reshape"(%v771) : (tensor<i64>) -> tensor<1xi64>
    %v773 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v774 = "stablehlo.reshape"(%v773) : (tensor<i64>) -> tensor<1xi64>
    %v775 = "stablehlo.concatenate"(%v770, %v772, %v774) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v776 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.attention.output.LayerNorm.bias, %v775) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v777 = "stablehlo.add"(%v769, %v776) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v778 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v779 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v780 = "stablehlo.reshape"(%v779) : (tensor<i64>) -> tensor<1xi64>
    %v781 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v782 = "stablehlo.reshape"(%v781) : (tensor<i64>) -> tensor<1xi64>
    %v783 = "stablehlo.concatenate"(%v778, %v780, %v782) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v784 = "stablehlo.dynamic_reshape"(%v730, %v783) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v785 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v786 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v787 = "stablehlo.reshape"(%v786) : (tensor<i64>) -> tensor<1xi64>
    %v788 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v789 = "stablehlo.reshape"(%v788) : (tensor<i64>) -> tensor<1xi64>
    %v790 = "stablehlo.concatenate"(%v785, %v787, %v789) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v791 = "stablehlo.dynamic_reshape"(%v753, %v790) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v792 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v793 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v794 = "stablehlo.reshape"(%v793) : (tensor<i64>) -> tensor<1xi64>
    %v795 = "stablehlo.concatenate"(%v792, %v794) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v796 = "stablehlo.dynamic_reshape"(%v777, %v795) : (tensor<?x16x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v797 = "stablehlo.transpose"(%encoder.layer.1.intermediate.dense.weight) {permutation = array<i64: 1, 0>} : (tensor<128x64xf32>) -> tensor<64x128xf32>
    %v798 = "stablehlo.dot_general"(%v796, %v797) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x128xf32>) -> tensor<?x128xf32>
    %v799 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v800 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v801 = "stablehlo.reshape"(%v800) : (tensor<i64>) -> tensor<1xi64>
    %v802 = "stablehlo.concatenate"(%v799, %v801) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v803 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.intermediate.dense.bias, %v802) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v804 = "stablehlo.add"(%v798, %v803) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v805 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v806 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v807 = "stablehlo.reshape"(%v806) : (tensor<i64>) -> tensor<1xi64>
    %v808 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v809 = "stablehlo.reshape"(%v808) : (tensor<i64>) -> tensor<1xi64>
    %v810 = "stablehlo.concatenate"(%v805, %v807, %v809) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v811 = "stablehlo.dynamic_reshape"(%v804, %v810) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<?x16x128xf32>
    %v812 = "stablehlo.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %v813 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v814 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v815 = "stablehlo.reshape"(%v814) : (tensor<i64>) -> tensor<1xi64>
    %v816 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v817 = "stablehlo.reshape"(%v816) : (tensor<i64>) -> tensor<1xi64>
    %v818 = "stablehlo.concatenate"(%v813, %v815, %v817) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v819 = "stablehlo.dynamic_broadcast_in_dim"(%v812, %v818) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<3xi64>) -> tensor<?x16x128xf32>
    %v820 = "stablehlo.multiply"(%v811, %v819) : (tensor<?x16x128xf32>, tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v821 = "stablehlo.constant"() {value = dense<0.7071067811865476> : tensor<f32>} : () -> tensor<f32>
    %v822 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v823 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v824 = "stablehlo.reshape"(%v823) : (tensor<i64>) -> tensor<1xi64>
    %v825 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v826 = "stablehlo.reshape"(%v825) : (tensor<i64>) -> tensor<1xi64>
    %v827 = "stablehlo.concatenate"(%v822, %v824, %v826) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v828 = "stablehlo.dynamic_broadcast_in_dim"(%v821, %v827) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<3xi64>) -> tensor<?x16x128xf32>
    %v829 = "stablehlo.multiply"(%v811, %v828) : (tensor<?x16x128xf32>, tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v830 = "chlo.erf"(%v829) : (tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v831 = "stablehlo.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %v832 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v833 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v834 = "stablehlo.reshape"(%v833) : (tensor<i64>) -> tensor<1xi64>
    %v835 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v836 = "stablehlo.reshape"(%v835) : (tensor<i64>) -> tensor<1xi64>
    %v837 = "stablehlo.concatenate"(%v832, %v834, %v836) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v838 = "stablehlo.dynamic_broadcast_in_dim"(%v831, %v837) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<3xi64>) -> tensor<?x16x128xf32>
    %v839 = "stablehlo.add"(%v830, %v838) : (tensor<?x16x128xf32>, tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v840 = "stablehlo.multiply"(%v820, %v839) : (tensor<?x16x128xf32>, tensor<?x16x128xf32>) -> tensor<?x16x128xf32>
    %v841 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v842 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v843 = "stablehlo.reshape"(%v842) : (tensor<i64>) -> tensor<1xi64>
    %v844 = "stablehlo.concatenate"(%v841, %v843) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v845 = "stablehlo.dynamic_reshape"(%v840, %v844) : (tensor<?x16x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v846 = "stablehlo.transpose"(%encoder.layer.1.output.dense.weight) {permutation = array<i64: 1, 0>} : (tensor<64x128xf32>) -> tensor<128x64xf32>
    %v847 = "stablehlo.dot_general"(%v845, %v846) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x128xf32>, tensor<128x64xf32>) -> tensor<?x64xf32>
    %v848 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v849 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v850 = "stablehlo.reshape"(%v849) : (tensor<i64>) -> tensor<1xi64>
    %v851 = "stablehlo.concatenate"(%v848, %v850) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v852 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.output.dense.bias, %v851) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v853 = "stablehlo.add"(%v847, %v852) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v854 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v855 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v856 = "stablehlo.reshape"(%v855) : (tensor<i64>) -> tensor<1xi64>
    %v857 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v858 = "stablehlo.reshape"(%v857) : (tensor<i64>) -> tensor<1xi64>
    %v859 = "stablehlo.concatenate"(%v854, %v856, %v858) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v860 = "stablehlo.dynamic_reshape"(%v853, %v859) : (tensor<?x64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v861 = "stablehlo.add"(%v860, %v777) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v862 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v866 = "stablehlo.reduce"(%v861, %v862) ({
    ^bb0(%r863: tensor<f32>, %r864: tensor<f32>):
      %r865 = "stablehlo.add"(%r863, %r864) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r865) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v867 = "stablehlo.constant"() {value = dense<64.0> : tensor<f32>} : () -> tensor<f32>
    %v868 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v869 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v870 = "stablehlo.reshape"(%v869) : (tensor<i64>) -> tensor<1xi64>
    %v871 = "stablehlo.concatenate"(%v868, %v870) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v872 = "stablehlo.dynamic_broadcast_in_dim"(%v867, %v871) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v873 = "stablehlo.divide"(%v866, %v872) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v874 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v875 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v876 = "stablehlo.reshape"(%v875) : (tensor<i64>) -> tensor<1xi64>
    %v877 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v878 = "stablehlo.reshape"(%v877) : (tensor<i64>) -> tensor<1xi64>
    %v879 = "stablehlo.concatenate"(%v874, %v876, %v878) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v880 = "stablehlo.dynamic_broadcast_in_dim"(%v873, %v879) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v881 = "stablehlo.subtract"(%v861, %v880) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v882 = "stablehlo.multiply"(%v881, %v881) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v883 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v887 = "stablehlo.reduce"(%v882, %v883) ({
    ^bb0(%r884: tensor<f32>, %r885: tensor<f32>):
      %r886 = "stablehlo.add"(%r884, %r885) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r886) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x16x64xf32>, tensor<f32>) -> tensor<?x16xf32>
    %v888 = "stablehlo.divide"(%v887, %v872) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v889 = "stablehlo.constant"() {value = dense<1e-12> : tensor<f32>} : () -> tensor<f32>
    %v890 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v891 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v892 = "stablehlo.reshape"(%v891) : (tensor<i64>) -> tensor<1xi64>
    %v893 = "stablehlo.concatenate"(%v890, %v892) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v894 = "stablehlo.dynamic_broadcast_in_dim"(%v889, %v893) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x16xf32>
    %v895 = "stablehlo.add"(%v888, %v894) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %v896 = "stablehlo.rsqrt"(%v895) : (tensor<?x16xf32>) -> tensor<?x16xf32>
    %v897 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v898 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v899 = "stablehlo.reshape"(%v898) : (tensor<i64>) -> tensor<1xi64>
    %v900 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v901 = "stablehlo.reshape"(%v900) : (tensor<i64>) -> tensor<1xi64>
    %v902 = "stablehlo.concatenate"(%v897, %v899, %v901) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v903 = "stablehlo.dynamic_broadcast_in_dim"(%v896, %v902) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v904 = "stablehlo.multiply"(%v881, %v903) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v905 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v906 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v907 = "stablehlo.reshape"(%v906) : (tensor<i64>) -> tensor<1xi64>
    %v908 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v909 = "stablehlo.reshape"(%v908) : (tensor<i64>) -> tensor<1xi64>
    %v910 = "stablehlo.concatenate"(%v905, %v907, %v909) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v911 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.output.LayerNorm.weight, %v910) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v912 = "stablehlo.multiply"(%v904, %v911) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v913 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v914 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v915 = "stablehlo.reshape"(%v914) : (tensor<i64>) -> tensor<1xi64>
    %v916 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v917 = "stablehlo.reshape"(%v916) : (tensor<i64>) -> tensor<1xi64>
    %v918 = "stablehlo.concatenate"(%v913, %v915, %v917) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v919 = "stablehlo.dynamic_broadcast_in_dim"(%encoder.layer.1.output.LayerNorm.bias, %v918) {broadcast_dimensions = array<i64: 2>} : (tensor<64xf32>, tensor<3xi64>) -> tensor<?x16x64xf32>
    %v920 = "stablehlo.add"(%v912, %v919) : (tensor<?x16x64xf32>, tensor<?x16x64xf32>) -> tensor<?x16x64xf32>
    %v921 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v922 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v923 = "stablehlo.reshape"(%v922) : (tensor<i64>) -> tensor<1xi64>
    %v924 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v925 = "stablehlo.reshape"(%v924) : (tensor<i64>) -> tensor<1xi64>
    %v926 = "stablehlo.concatenate"(%v921, %v923, %v925) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v927 = "stablehlo.dynamic_reshape"(%v873, %v926) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v928 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v929 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v930 = "stablehlo.reshape"(%v929) : (tensor<i64>) -> tensor<1xi64>
    %v931 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v932 = "stablehlo.reshape"(%v931) : (tensor<i64>) -> tensor<1xi64>
    %v933 = "stablehlo.concatenate"(%v928, %v930, %v932) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v934 = "stablehlo.dynamic_reshape"(%v896, %v933) : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x16x1xf32>
    %v935 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v936 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v937 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v938 = "stablehlo.reshape"(%v937) : (tensor<i64>) -> tensor<1xi64>
    %v939 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v940 = "stablehlo.reshape"(%v939) : (tensor<i64>) -> tensor<1xi64>
    %v941 = "stablehlo.concatenate"(%v936, %v938, %v940) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v942 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v943 = "stablehlo.real_dynamic_slice"(%v920, %v935, %v941, %v942) : (tensor<?x16x64xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<?x1x64xf32>
    %v944 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v945 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v946 = "stablehlo.reshape"(%v945) : (tensor<i64>) -> tensor<1xi64>
    %v947 = "stablehlo.concatenate"(%v944, %v946) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v948 = "stablehlo.dynamic_reshape"(%v943, %v947) : (tensor<?x1x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v949 = "stablehlo.transpose"(%pooler.dense.weight) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    %v950 = "stablehlo.dot_general"(%v948, %v949) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
    %v951 = "stablehlo.reshape"(%v12) : (tensor<i64>) -> tensor<1xi64>
    %v952 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v953 = "stablehlo.reshape"(%v952) : (tensor<i64>) -> tensor<1xi64>
    %v954 = "stablehlo.concatenate"(%v951, %v953) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v955 = "stablehlo.dynamic_broadcast_in_dim"(%pooler.dense.bias, %v954) {broadcast_dimensions = array<i64: 1>} : (tensor<64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    %v956 = "stablehlo.add"(%v950, %v955) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v957 = "stablehlo.tanh"(%v956) : (tensor<?x64xf32>) -> tensor<?x64xf32>
    func.return %v920, %v957 : tensor<?x16x64xf32>, tensor<?x64xf32>
  }
}
