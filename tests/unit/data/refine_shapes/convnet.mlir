module @convnet {
  func.func public @main(
    %x: tensor<?x4x16xf32> {mhlo.name = "x"},
    %conv1d.weight: tensor<8x4x3xf32> {mhlo.name = "conv1d.weight"},
    %conv1d.bias: tensor<8xf32> {mhlo.name = "conv1d.bias"},
    %bn1d.weight: tensor<8xf32> {mhlo.name = "bn1d.weight"},
    %bn1d.bias: tensor<8xf32> {mhlo.name = "bn1d.bias"},
    %gn.weight: tensor<8xf32> {mhlo.name = "gn.weight"},
    %gn.bias: tensor<8xf32> {mhlo.name = "gn.bias"},
    %convt.weight: tensor<8x6x3x3xf32> {mhlo.name = "convt.weight"},
    %convt.bias: tensor<6xf32> {mhlo.name = "convt.bias"},
    %convt_g.weight: tensor<6x2x4x4xf32> {mhlo.name = "convt_g.weight"},
    %convt_g.bias: tensor<4xf32> {mhlo.name = "convt_g.bias"},
    %bn2d.weight: tensor<4xf32> {mhlo.name = "bn2d.weight"},
    %bn2d.bias: tensor<4xf32> {mhlo.name = "bn2d.bias"},
    %bn1d.running_mean: tensor<8xf32> {mhlo.name = "bn1d.running_mean"},
    %bn1d.running_var: tensor<8xf32> {mhlo.name = "bn1d.running_var"},
    %bn1d.num_batches_tracked: tensor<i64> {mhlo.name = "bn1d.num_batches_tracked"},
    %bn2d.running_mean: tensor<4xf32> {mhlo.name = "bn2d.running_mean"},
    %bn2d.running_var: tensor<4xf32> {mhlo.name = "bn2d.running_var"},
    %bn2d.num_batches_tracked: tensor<i64> {mhlo.name = "bn2d.num_batches_tracked"}) -> (tensor<?x4x16x6xf32>) {
    %v0 = "stablehlo.convolution"(%x, %conv1d.weight) {dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, window_strides = array<i64: 2>, padding = dense<[[1, 1]]> : tensor<1x2xi64>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<?x4x16xf32>, tensor<8x4x3xf32>) -> tensor<?x8x8xf32>
    %v1 = "stablehlo.get_dimension_size"(%x) {dimension = 0 : i64} : (tensor<?x4x16xf32>) -> tensor<i32>
    %v2 = "stablehlo.convert"(%v1) : (tensor<i32>) -> tensor<i64>
    %v3 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v4 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v5 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v6 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v7 = "stablehlo.reshape"(%v6) : (tensor<i64>) -> tensor<1xi64>
    %v8 = "stablehlo.concatenate"(%v3, %v5, %v7) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v9 = "stablehlo.dynamic_broadcast_in_dim"(%conv1d.bias, %v8) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %v10 = "stablehlo.add"(%v0, %v9) : (tensor<?x8x8xf32>, tensor<?x8x8xf32>) -> tensor<?x8x8xf32>
    %v11 = "stablehlo.constant"() {value = dense<1e-05> : tensor<8xf32>} : () -> tensor<8xf32>
    %v12 = "stablehlo.add"(%bn1d.running_var, %v11) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %v13 = "stablehlo.rsqrt"(%v12) : (tensor<8xf32>) -> tensor<8xf32>
    %v14 = "stablehlo.multiply"(%v13, %bn1d.weight) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %v15 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v16 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v17 = "stablehlo.reshape"(%v16) : (tensor<i64>) -> tensor<1xi64>
    %v18 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v19 = "stablehlo.reshape"(%v18) : (tensor<i64>) -> tensor<1xi64>
    %v20 = "stablehlo.concatenate"(%v15, %v17, %v19) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v21 = "stablehlo.dynamic_broadcast_in_dim"(%bn1d.running_mean, %v20) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %v22 = "stablehlo.subtract"(%v10, %v21) : (tensor<?x8x8xf32>, tensor<?x8x8xf32>) -> tensor<?x8x8xf32>
    %v23 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v24 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v25 = "stablehlo.reshape"(%v24) : (tensor<i64>) -> tensor<1xi64>
    %v26 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v27 = "stablehlo.reshape"(%v26) : (tensor<i64>) -> tensor<1xi64>
    %v28 = "stablehlo.concatenate"(%v23, %v25, %v27) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v29 = "stablehlo.dynamic_broadcast_in_dim"(%v14, %v28) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %v30 = "stablehlo.multiply"(%v22, %v29) : (tensor<?x8x8xf32>, tensor<?x8x8xf32>) -> tensor<?x8x8xf32>
    %v31 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v32 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v33 = "stablehlo.reshape"(%v32) : (tensor<i64>) -> tensor<1xi64>
    %v34 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v35 = "stablehlo.reshape"(%v34) : (tensor<i64>) -> tensor<1xi64>
    %v36 = "stablehlo.concatenate"(%v31, %v33, %v35) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v37 = "stablehlo.dynamic_broadcast_in_dim"(%bn1d.bias, %v36) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %v38 = "stablehlo.add"(%v30, %v37) : (tensor<?x8x8xf32>, tensor<?x8x8xf32>) -> tensor<?x8x8xf32>
    %v39 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v40 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v41 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v42 = "stablehlo.reshape"(%v41) : (tensor<i64>) -> tensor<1xi64>
    %v43 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v44 = "stablehlo.reshape"(%v43) : (tensor<i64>) -> tensor<1xi64>
    %v45 = "stablehlo.concatenate"(%v40, %v42, %v44) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v46 = "stablehlo.dynamic_broadcast_in_dim"(%v39, %v45) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %v47 = "stablehlo.maximum"(%v38, %v46) : (tensor<?x8x8xf32>, tensor<?x8x8xf32>) -> tensor<?x8x8xf32>
    %v48 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v49 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v50 = "stablehlo.reshape"(%v49) : (tensor<i64>) -> tensor<1xi64>
    %v51 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v52 = "stablehlo.reshape"(%v51) : (tensor<i64>) -> tensor<1xi64>
    %v53 = "stablehlo.concatenate"(%v48, %v50, %v52) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v54 = "stablehlo.dynamic_reshape"(%v47, %v53) : (tensor<?x8x8xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
    %v55 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v59 = "stablehlo.reduce"(%v54, %v55) ({
    ^bb0(%r56: tensor<f32>, %r57: tensor<f32>):
      %r58 = "stablehlo.add"(%r56, %r57) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r58) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x4x16xf32>, tensor<f32>) -> tensor<?x4xf32>
    %v60 = "stablehlo.constant"() {value = dense<16.0> : tensor<f32>} : () -> tensor<f32>
    %v61 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v62 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v63 = "stablehlo.reshape"(%v62) : (tensor<i64>) -> tensor<1xi64>
    %v64 = "stablehlo.concatenate"(%v61, %v63) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v65 = "stablehlo.dynamic_broadcast_in_dim"(%v60, %v64) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x4xf32>
    %v66 = "stablehlo.divide"(%v59, %v65) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %v67 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v68 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v69 = "stablehlo.reshape"(%v68) : (tensor<i64>) -> tensor<1xi64>
    %v70 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v71 = "stablehlo.reshape"(%v70) : (tensor<i64>) -> tensor<1xi64>
    %v72 = "stablehlo.concatenate"(%v67, %v69, %v71) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v73 = "stablehlo.dynamic_broadcast_in_dim"(%v66, %v72) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
    %v74 = "stablehlo.subtract"(%v54, %v73) : (tensor<?x4x16xf32>, tensor<?x4x16xf32>) -> tensor<?x4x16xf32>
    %v75 = "stablehlo.multiply"(%v74, %v74) : (tensor<?x4x16xf32>, tensor<?x4x16xf32>) -> tensor<?x4x16xf32>
    %v76 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v80 = "stablehlo.reduce"(%v75, %v76) ({
    ^bb0(%r77: tensor<f32>, %r78: tensor<f32>):
      %r79 = "stablehlo.add"(%r77, %r78) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r79) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x4x16xf32>, tensor<f32>) -> tensor<?x4xf32>
    %v81 = "stablehlo.divide"(%v80, %v65) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %v82 = "stablehlo.constant"() {value = dense<1e-05> : tensor<f32>} : () -> tensor<f32>
    %v83 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v84 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v85 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v86 = "stablehlo.concatenate"(%v83, %v85) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v87 = "stablehlo.dynamic_broadcast_in_dim"(%v82, %v86) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x4xf32>
    %v88 = "stablehlo.add"(%v81, %v87) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %v89 = "stablehlo.rsqrt"(%v88) : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %v90 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v91 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v92 = "stablehlo.reshape"(%v91) : (tensor<i64>) -> tensor<1xi64>
    %v93 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v94 = "stablehlo.reshape"(%v93) : (tensor<i64>) -> tensor<1xi64>
    %v95 = "stablehlo.concatenate"(%v90, %v92, %v94) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v96 = "stablehlo.dynamic_broadcast_in_dim"(%v89, %v95) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x4x16xf32>
    %v97 = "stablehlo.multiply"(%v74, %v96) : (tensor<?x4x16xf32>, tensor<?x4x16xf32>) -> tensor<?x4x16xf32>
    %v98 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v99 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v100 = "stablehlo.reshape"(%v99) : (tensor<i64>) -> tensor<1xi64>
    %v101 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v102 = "stablehlo.reshape"(%v101) : (tensor<i64>) -> tensor<1xi64>
    %v103 = "stablehlo.concatenate"(%v98, %v100, %v102) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v104 = "stablehlo.dynamic_reshape"(%v97, %v103) : (tensor<?x4x16xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %v105 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v106 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v107 = "stablehlo.reshape"(%v106) : (tensor<i64>) -> tensor<1xi64>
    %v108 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v109 = "stablehlo.reshape"(%v108) : (tensor<i64>) -> tensor<1xi64>
    %v110 = "stablehlo.concatenate"(%v105, %v107, %v109) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v111 = "stablehlo.dynamic_broadcast_in_dim"(%gn.weight, %v110) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %v112 = "stablehlo.multiply"(%v104, %v111) : (tensor<?x8x8xf32>, tensor<?x8x8xf32>) -> tensor<?x8x8xf32>
    %v113 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v114 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v115 = "stablehlo.reshape"(%v114) : (tensor<i64>) -> tensor<1xi64>
    %v116 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v117 = "stablehlo.reshape"(%v116) : (tensor<i64>) -> tensor<1xi64>
    %v118 = "stablehlo.concatenate"(%v113, %v115, %v117) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v119 = "stablehlo.dynamic_broadcast_in_dim"(%gn.bias, %v118) {broadcast_dimensions = array<i64: 1>} : (tensor<8xf32>, tensor<3xi64>) -> tensor<?x8x8xf32>
    %v120 = "stablehlo.add"(%v112, %v119) : (tensor<?x8x8xf32>, tensor<?x8x8xf32>) -> tensor<?x8x8xf32>
    %v121 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v122 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v123 = "stablehlo.reshape"(%v122) : (tensor<i64>) -> tensor<1xi64>
    %v124 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v125 = "stablehlo.reshape"(%v124) : (tensor<i64>) -> tensor<1xi64>
    %v126 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v127 = "stablehlo.reshape"(%v126) : (tensor<i64>) -> tensor<1xi64>
    %v128 = "stablehlo.concatenate"(%v121, %v123, %v125, %v127) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v129 = "stablehlo.dynamic_reshape"(%v120, %v128) : (tensor<?x8x8xf32>, tensor<4xi64>) -> tensor<?x8x8x1xf32>
    %v130 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v131 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v132 = "stablehlo.reshape"(%v131) : (tensor<i64>) -> tensor<1xi64>
    %v133 = "stablehlo.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %v134 = "stablehlo.reshape"(%v133) : (tensor<i64>) -> tensor<1xi64>
    %v135 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v136 = "stablehlo.reshape"(%v135) : (tensor<i64>) -> tensor<1xi64>
    %v137 = "stablehlo.concatenate"(%v130, %v132, %v134, %v136) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v138 = "stablehlo.dynamic_broadcast_in_dim"(%v129, %v137) {broadcast_dimensions = array<i64: 0, 1, 2, 3>} : (tensor<?x8x8x1xf32>, tensor<4xi64>) -> tensor<?x8x8x3xf32>
    %v139 = "stablehlo.transpose"(%convt.weight) {permutation = array<i64: 1, 0, 2, 3>} : (tensor<8x6x3x3xf32>) -> tensor<6x8x3x3xf32>
    %v140 = "stablehlo.reverse"(%v139) {dimensions = array<i64: 2, 3>} : (tensor<6x8x3x3xf32>) -> tensor<6x8x3x3xf32>
    %v141 = "stablehlo.convolution"(%v138, %v140) {dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, window_strides = array<i64: 1, 1>, padding = dense<[[1, 2], [1, 2]]> : tensor<2x2xi64>, lhs_dilation = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<?x8x8x3xf32>, tensor<6x8x3x3xf32>) -> tensor<?x6x16x6xf32>
    %v142 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v143 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v144 = "stablehlo.reshape"(%v143) : (tensor<i64>) -> tensor<1xi64>
    %v145 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v146 = "stablehlo.reshape"(%v145) : (tensor<i64>) -> tensor<1xi64>
    %v147 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v148 = "stablehlo.reshape"(%v147) : (tensor<i64>) -> tensor<1xi64>
    %v149 = "stablehlo.concatenate"(%v142, %v144, %v146, %v148) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v150 = "stablehlo.dynamic_broadcast_in_dim"(%convt.bias, %v149) {broadcast_dimensions = array<i64: 1>} : (tensor<6xf32>, tensor<4xi64>) -> tensor<?x6x16x6xf32>
    %v151 = "stablehlo.add"(%v141, %v150) : (tensor<?x6x16x6xf32>, tensor<?x6x16x6xf32>) -> tensor<?x6x16x6xf32>
    %v152 = "stablehlo.reshape"(%convt_g.weight) : (tensor<6x2x4x4xf32>) -> tensor<2x3x2x4x4xf32>
    %v153 = "stablehlo.transpose"(%v152) {permutation = array<i64: 0, 2, 1, 3, 4>} : (tensor<2x3x2x4x4xf32>) -> tensor<2x2x3x4x4xf32>
    %v154 = "stablehlo.reshape"(%v153) : (tensor<2x2x3x4x4xf32>) -> tensor<4x3x4x4xf32>
    %v155 = "stablehlo.reverse"(%v154) {dimensions = array<i64: 2, 3>} : (tensor<4x3x4x4xf32>) -> tensor<4x3x4x4xf32>
    %v156 = "stablehlo.convolution"(%v151, %v155) {dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, window_strides = array<i64: 1, 1>, padding = dense<[[2, 2], [2, 2]]> : tensor<2x2xi64>, lhs_dilation = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>, feature_group_count = 2 : i64, batch_group_count = 1 : i64} : (tensor<?x6x16x6xf32>, tensor<4x3x4x4xf32>) -> tensor<?x4x32x12xf32>
    %v157 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v158 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v159 = "stablehlo.reshape"(%v158) : (tensor<i64>) -> tensor<1xi64>
    %v160 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v161 = "stablehlo.reshape"(%v160) : (tensor<i64>) -> tensor<1xi64>
    %v162 = "stablehlo.constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
    %v163 = "stablehlo.reshape"(%v162) : (tensor<i64>) -> tensor<1xi64>
    %v164 = "stablehlo.concatenate"(%v157, %v159, %v161, %v163) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v165 = "stablehlo.dynamic_broadcast_in_dim"(%convt_g.bias, %v164) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<4xi64>) -> tensor<?x4x32x12xf32>
    %v166 = "stablehlo.add"(%v156, %v165) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v167 = "stablehlo.constant"() {value = dense<1e-05> : tensor<4xf32>} : () -> tensor<4xf32>
    %v168 = "stablehlo.add"(%bn2d.running_var, %v167) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %v169 = "stablehlo.rsqrt"(%v168) : (tensor<4xf32>) -> tensor<4xf32>
    %v170 = "stablehlo.multiply"(%v169, %bn2d.weight) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %v171 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v172 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v173 = "stablehlo.reshape"(%v172) : (tensor<i64>) -> tensor<1xi64>
    %v174 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v175 = "stablehlo.reshape"(%v174) : (tensor<i64>) -> tensor<1xi64>
    %v176 = "stablehlo.constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
    %v177 = "stablehlo.reshape"(%v176) : (tensor<i64>) -> tensor<1xi64>
    %v178 = "stablehlo.concatenate"(%v171, %v173, %v175, %v177) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v179 = "stablehlo.dynamic_broadcast_in_dim"(%bn2d.running_mean, %v178) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<4xi64>) -> tensor<?x4x32x12xf32>
    %v180 = "stablehlo.subtract"(%v166, %v179) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v181 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v182 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v183 = "stablehlo.reshape"(%v182) : (tensor<i64>) -> tensor<1xi64>
    %v184 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v185 = "stablehlo.reshape"(%v184) : (tensor<i64>) -> tensor<1xi64>
    %v186 = "stablehlo.constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
    %v187 = "stablehlo.reshape"(%v186) : (tensor<i64>) -> tensor<1xi64>
    %v188 = "stablehlo.concatenate"(%v181, %v183, %v185, %v187) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v189 = "stablehlo.dynamic_broadcast_in_dim"(%v170, %v188) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<4xi64>) -> tensor<?x4x32x12xf32>
    %v190 = "stablehlo.multiply"(%v180, %v189) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v191 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v192 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v193 = "stablehlo.reshape"(%v192) : (tensor<i64>) -> tensor<1xi64>
    %v194 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v195 = "stablehlo.reshape"(%v194) : (tensor<i64>) -> tensor<1xi64>
    %v196 = "stablehlo.constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
    %v197 = "stablehlo.reshape"(%v196) : (tensor<i64>) -> tensor<1xi64>
    %v198 = "stablehlo.concatenate"(%v191, %v193, %v195, %v197) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v199 = "stablehlo.dynamic_broadcast_in_dim"(%bn2d.bias, %v198) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<4xi64>) -> tensor<?x4x32x12xf32>
    %v200 = "stablehlo.add"(%v190, %v199) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v201 = "stablehlo.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %v202 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v203 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v204 = "stablehlo.reshape"(%v203) : (tensor<i64>) -> tensor<1xi64>
    %v205 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v206 = "stablehlo.reshape"(%v205) : (tensor<i64>) -> tensor<1xi64>
    %v207 = "stablehlo.constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
    %v208 = "stablehlo.reshape"(%v207) : (tensor<i64>) -> tensor<1xi64>
    %v209 = "stablehlo.concatenate"(%v202, %v204, %v206, %v208) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v210 = "stablehlo.dynamic_broadcast_in_dim"(%v201, %v209) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x4x32x12xf32>
    %v211 = "stablehlo.multiply"(%v200, %v210) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v212 = "stablehlo.multiply"(%v200, %v200) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v213 = "stablehlo.multiply"(%v212, %v200) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v214 = "stablehlo.constant"() {value = dense<0.044715> : tensor<f32>} : () -> tensor<f32>
    %v215 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v216 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v217 = "stablehlo.reshape"(%v216) : (tensor<i64>) -> tensor<1xi64>
    %v218 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v219 = "stablehlo.reshape"(%v218) : (tensor<i64>) -> tensor<1xi64>
    %v220 = "stablehlo.constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
    %v221 = "stablehlo.reshape"(%v220) : (tensor<i64>) -> tensor<1xi64>
    %v222 = "stablehlo.concatenate"(%v215, %v217, %v219, %v221) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v223 = "stablehlo.dynamic_broadcast_in_dim"(%v214, %v222) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x4x32x12xf32>
    %v224 = "stablehlo.multiply"(%v213, %v223) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v225 = "stablehlo.add"(%v200, %v224) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v226 = "stablehlo.constant"() {value = dense<0.7978845608028654> : tensor<f32>} : () -> tensor<f32>
    %v227 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v228 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v229 = "stablehlo.reshape"(%v228) : (tensor<i64>) -> tensor<1xi64>
    %v230 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v231 = "stablehlo.reshape"(%v230) : (tensor<i64>) -> tensor<1xi64>
    %v232 = "stablehlo.constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
    %v233 = "stablehlo.reshape"(%v232) : (tensor<i64>) -> tensor<1xi64>
    %v234 = "stablehlo.concatenate"(%v227, %v229, %v231, %v233) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v235 = "stablehlo.dynamic_broadcast_in_dim"(%v226, %v234) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x4x32x12xf32>
    %v236 = "stablehlo.multiply"(%v225, %v235) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v237 = "stablehlo.tanh"(%v236) : (tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v238 = "stablehlo.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %v239 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v240 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v241 = "stablehlo.reshape"(%v240) : (tensor<i64>) -> tensor<1xi64>
    %v242 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v243 = "stablehlo.reshape"(%v242) : (tensor<i64>) -> tensor<1xi64>
    %v244 = "stablehlo.constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
    %v245 = "stablehlo.reshape"(%v244) : (tensor<i64>) -> tensor<1xi64>
    %v246 = "stablehlo.concatenate"(%v239, %v241, %v243, %v245) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v247 = "stablehlo.dynamic_broadcast_in_dim"(%v238, %v246) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x4x32x12xf32>
    %v248 = "stablehlo.add"(%v237, %v247) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v249 = "stablehlo.multiply"(%v211, %v248) : (tensor<?x4x32x12xf32>, tensor<?x4x32x12xf32>) -> tensor<?x4x32x12xf32>
    %v250 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v254 = "stablehlo.reduce_window"(%v249, %v250) ({
    ^bb0(%r251: tensor<f32>, %r252: tensor<f32>):
      %r253 = "stablehlo.add"(%r251, %r252) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r253) : (tensor<f32>) -> ()
    }) {window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>, base_dilations = array<i64: 1, 1, 1, 1>, window_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 0], [0, 0], [0, 0], [0, 0]]> : tensor<4x2xi64>} : (tensor<?x4x32x12xf32>, tensor<f32>) -> tensor<?x4x16x6xf32>
    %v255 = "stablehlo.constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
    %v256 = "stablehlo.reshape"(%v2) : (tensor<i64>) -> tensor<1xi64>
    %v257 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v258 = "stablehlo.reshape"(%v257) : (tensor<i64>) -> tensor<1xi64>
    %v259 = "stablehlo.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %v260 = "stablehlo.reshape"(%v259) : (tensor<i64>) -> tensor<1xi64>
    %v261 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v262 = "stablehlo.reshape"(%v261) : (tensor<i64>) -> tensor<1xi64>
    %v263 = "stablehlo.concatenate"(%v256, %v258, %v260, %v262) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v264 = "stablehlo.dynamic_broadcast_in_dim"(%v255, %v263) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<4xi64>) -> tensor<?x4x16x6xf32>
    %v265 = "stablehlo.divide"(%v254, %v264) : (tensor<?x4x16x6xf32>, tensor<?x4x16x6xf32>) -> tensor<?x4x16x6xf32>
    func.return %v265 : tensor<?x4x16x6xf32>
  }
}
