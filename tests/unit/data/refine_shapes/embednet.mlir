module @embednet {
  func.func public @main(
    %ids: tensor<?x6xi64> {mhlo.name = "ids"},
    %emb.weight: tensor<50x24xf32> {mhlo.name = "emb.weight"},
    %blocks.0.0.weight: tensor<24xf32> {mhlo.name = "blocks.0.0.weight"},
    %blocks.0.0.bias: tensor<24xf32> {mhlo.name = "blocks.0.0.bias"},
    %blocks.0.1.weight: tensor<24x24xf32> {mhlo.name = "blocks.0.1.weight"},
    %blocks.0.1.bias: tensor<24xf32> {mhlo.name = "blocks.0.1.bias"},
    %blocks.1.0.weight: tensor<24xf32> {mhlo.name = "blocks.1.0.weight"},
    %blocks.1.0.bias: tensor<24xf32> {mhlo.name = "blocks.1.0.bias"},
    %blocks.1.1.weight: tensor<24x24xf32> {mhlo.name = "blocks.1.1.weight"},
    %blocks.1.1.bias: tensor<24xf32> {mhlo.name = "blocks.1.1.bias"},
    %blocks.2.0.weight: tensor<24xf32> {mhlo.name = "blocks.2.0.weight"},
    %blocks.2.0.bias: tensor<24xf32> {mhlo.name = "blocks.2.0.bias"},
    %blocks.2.1.weight: tensor<24x24xf32> {mhlo.name = "blocks.2.1.weight"},
    %blocks.2.1.bias: tensor<24xf32> {mhlo.name = "blocks.2.1.bias"},
    %head.weight: tensor<10x24xf32> {mhlo.name = "head.weight"},
    %head.bias: tensor<10xf32> {mhlo.name = "head.bias"}) -> (tensor<?x6x10xf32>, tensor<?x24xf32>) {
    %v0 = "stablehlo.get_dimension_size"(%ids) {dimension = 0 : i64} : (tensor<?x6xi64>) -> tensor<i32>
    %v1 = "stablehlo.convert"(%v0) : (tensor<i32>) -> tensor<i64>
    %v2 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v3 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v4 = "stablehlo.reshape"(%v3) : (tensor<i64>) -> tensor<1xi64>
    %v5 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v6 = "stablehlo.reshape"(%v5) : (tensor<i64>) -> tensor<1xi64>
    %v7 = "stablehlo.concatenate"(%v2, %v4, %v6) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v8 = "stablehlo.dynamic_reshape"(%ids, %v7) : (tensor<?x6xi64>, tensor<3xi64>) -> tensor<?x6x1xi64>
    %v9 = "stablehlo.gather"(%emb.weight, %v8) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 24>, indices_are_sorted = false} : (tensor<50x24xf32>, tensor<?x6x1xi64>) -> tensor<?x6x24xf32>
    %v10 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v14 = "stablehlo.reduce"(%v9, %v10) ({
    ^bb0(%r11: tensor<f32>, %r12: tensor<f32>):
      %r13 = "stablehlo.add"(%r11, %r12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r13) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x24xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v15 = "stablehlo.constant"() {value = dense<24.0> : tensor<f32>} : () -> tensor<f32>
    %v16 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v17 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v18 = "stablehlo.reshape"(%v17) : (tensor<i64>) -> tensor<1xi64>
    %v19 = "stablehlo.concatenate"(%v16, %v18) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v20 = "stablehlo.dynamic_broadcast_in_dim"(%v15, %v19) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x6xf32>
    %v21 = "stablehlo.divide"(%v14, %v20) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %v22 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v23 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v24 = "stablehlo.reshape"(%v23) : (tensor<i64>) -> tensor<1xi64>
    %v25 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v26 = "stablehlo.reshape"(%v25) : (tensor<i64>) -> tensor<1xi64>
    %v27 = "stablehlo.concatenate"(%v22, %v24, %v26) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v28 = "stablehlo.dynamic_broadcast_in_dim"(%v21, %v27) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v29 = "stablehlo.subtract"(%v9, %v28) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v30 = "stablehlo.multiply"(%v29, %v29) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v31 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v35 = "stablehlo.reduce"(%v30, %v31) ({
    ^bb0(%r32: tensor<f32>, %r33: tensor<f32>):
      %r34 = "stablehlo.add"(%r32, %r33) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r34) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x24xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v36 = "stablehlo.divide"(%v35, %v20) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %v37 = "stablehlo.constant"() {value = dense<1e-05> : tensor<f32>} : () -> tensor<f32>
    %v38 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v39 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v40 = "stablehlo.reshape"(%v39) : (tensor<i64>) -> tensor<1xi64>
    %v41 = "stablehlo.concatenate"(%v38, %v40) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v42 = "stablehlo.dynamic_broadcast_in_dim"(%v37, %v41) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x6xf32>
    %v43 = "stablehlo.add"(%v36, %v42) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %v44 = "stablehlo.rsqrt"(%v43) : (tensor<?x6xf32>) -> tensor<?x6xf32>
    %v45 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v46 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v47 = "stablehlo.reshape"(%v46) : (tensor<i64>) -> tensor<1xi64>
    %v48 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v49 = "stablehlo.reshape"(%v48) : (tensor<i64>) -> tensor<1xi64>
    %v50 = "stablehlo.concatenate"(%v45, %v47, %v49) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v51 = "stablehlo.dynamic_broadcast_in_dim"(%v44, %v50) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v52 = "stablehlo.multiply"(%v29, %v51) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v53 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v54 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v55 = "stablehlo.reshape"(%v54) : (tensor<i64>) -> tensor<1xi64>
    %v56 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v57 = "stablehlo.reshape"(%v56) : (tensor<i64>) -> tensor<1xi64>
    %v58 = "stablehlo.concatenate"(%v53, %v55, %v57) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v59 = "stablehlo.dynamic_broadcast_in_dim"(%blocks.0.0.weight, %v58) {broadcast_dimensions = array<i64: 2>} : (tensor<24xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v60 = "stablehlo.multiply"(%v52, %v59) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v61 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v62 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v63 = "stablehlo.reshape"(%v62) : (tensor<i64>) -> tensor<1xi64>
    %v64 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v65 = "stablehlo.reshape"(%v64) : (tensor<i64>) -> tensor<1xi64>
    %v66 = "stablehlo.concatenate"(%v61, %v63, %v65) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v67 = "stablehlo.dynamic_broadcast_in_dim"(%blocks.0.0.bias, %v66) {broadcast_dimensions = array<i64: 2>} : (tensor<24xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v68 = "stablehlo.add"(%v60, %v67) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v69 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v70 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v71 = "stablehlo.reshape"(%v70) : (tensor<i64>) -> tensor<1xi64>
    %v72 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v73 = "stablehlo.reshape"(%v72) : (tensor<i64>) -> tensor<1xi64>
    %v74 = "stablehlo.concatenate"(%v69, %v71, %v73) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v75 = "stablehlo.dynamic_reshape"(%v21, %v74) : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x1xf32>
    %v76 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v77 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v78 = "stablehlo.reshape"(%v77) : (tensor<i64>) -> tensor<1xi64>
    %v79 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v80 = "stablehlo.reshape"(%v79) : (tensor<i64>) -> tensor<1xi64>
    %v81 = "stablehlo.concatenate"(%v76, %v78, %v80) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v82 = "stablehlo.dynamic_reshape"(%v44, %v81) : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x1xf32>
    %v83 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v84 = "stablehlo.multiply"(%v83, %v1) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %v85 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v86 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v87 = "stablehlo.reshape"(%v86) : (tensor<i64>) -> tensor<1xi64>
    %v88 = "stablehlo.concatenate"(%v85, %v87) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v89 = "stablehlo.dynamic_reshape"(%v68, %v88) : (tensor<?x6x24xf32>, tensor<2xi64>) -> tensor<?x24xf32>
    %v90 = "stablehlo.transpose"(%blocks.0.1.weight) {permutation = array<i64: 1, 0>} : (tensor<24x24xf32>) -> tensor<24x24xf32>
    %v91 = "stablehlo.dot_general"(%v89, %v90) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x24xf32>, tensor<24x24xf32>) -> tensor<?x24xf32>
    %v92 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v93 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v94 = "stablehlo.reshape"(%v93) : (tensor<i64>) -> tensor<1xi64>
    %v95 = "stablehlo.concatenate"(%v92, %v94) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v96 = "stablehlo.dynamic_broadcast_in_dim"(%blocks.0.1.bias, %v95) {broadcast_dimensions = array<i64: 1>} : (tensor<24xf32>, tensor<2xi64>) -> tensor<?x24xf32>
    %v97 = "stablehlo.add"(%v91, %v96) : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
    %v98 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v99 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v100 = "stablehlo.reshape"(%v99) : (tensor<i64>) -> tensor<1xi64>
    %v101 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v102 = "stablehlo.reshape"(%v101) : (tensor<i64>) -> tensor<1xi64>
    %v103 = "stablehlo.concatenate"(%v98, %v100, %v102) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v104 = "stablehlo.dynamic_reshape"(%v97, %v103) : (tensor<?x24xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v105 = "stablehlo.logistic"(%v104) : (tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v106 = "stablehlo.multiply"(%v104, %v105) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v107 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v111 = "stablehlo.reduce"(%v106, %v107) ({
    ^bb0(%r108: tensor<f32>, %r109: tensor<f32>):
      %r110 = "stablehlo.add"(%r108, %r109) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r110) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x24xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v112 = "stablehlo.constant"() {value = dense<24.0> : tensor<f32>} : () -> tensor<f32>
    %v113 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v114 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v115 = "stablehlo.reshape"(%v114) : (tensor<i64>) -> tensor<1xi64>
    %v116 = "stablehlo.concatenate"(%v113, %v115) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v117 = "stablehlo.dynamic_broadcast_in_dim"(%v112, %v116) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x6xf32>
    %v118 = "stablehlo.divide"(%v111, %v117) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %v119 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v120 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v121 = "stablehlo.reshape"(%v120) : (tensor<i64>) -> tensor<1xi64>
    %v122 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v123 = "stablehlo.reshape"(%v122) : (tensor<i64>) -> tensor<1xi64>
    %v124 = "stablehlo.concatenate"(%v119, %v121, %v123) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v125 = "stablehlo.dynamic_broadcast_in_dim"(%v118, %v124) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v126 = "stablehlo.subtract"(%v106, %v125) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v127 = "stablehlo.multiply"(%v126, %v126) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v128 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v132 = "stablehlo.reduce"(%v127, %v128) ({
    ^bb0(%r129: tensor<f32>, %r130: tensor<f32>):
      %r131 = "stablehlo.add"(%r129, %r130) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r131) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x24xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v133 = "stablehlo.divide"(%v132, %v117) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %v134 = "stablehlo.constant"() {value = dense<1e-05> : tensor<f32>} : () -> tensor<f32>
    %v135 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v136 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v137 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v138 = "stablehlo.concatenate"(%v135, %v137) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v139 = "stablehlo.dynamic_broadcast_in_dim"(%v134, %v138) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x6xf32>
    %v140 = "stablehlo.add"(%v133, %v139) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %v141 = "stablehlo.rsqrt"(%v140) : (tensor<?x6xf32>) -> tensor<?x6xf32>
    %v142 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v143 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v144 = "stablehlo.reshape"(%v143) : (tensor<i64>) -> tensor<1xi64>
    %v145 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v146 = "stablehlo.reshape"(%v145) : (tensor<i64>) -> tensor<1xi64>
    %v147 = "stablehlo.concatenate"(%v142, %v144, %v146) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v148 = "stablehlo.dynamic_broadcast_in_dim"(%v141, %v147) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v149 = "stablehlo.multiply"(%v126, %v148) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v150 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v151 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v152 = "stablehlo.reshape"(%v151) : (tensor<i64>) -> tensor<1xi64>
    %v153 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v154 = "stablehlo.reshape"(%v153) : (tensor<i64>) -> tensor<1xi64>
    %v155 = "stablehlo.concatenate"(%v150, %v152, %v154) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v156 = "stablehlo.dynamic_broadcast_in_dim"(%blocks.1.0.weight, %v155) {broadcast_dimensions = array<i64: 2>} : (tensor<24xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v157 = "stablehlo.multiply"(%v149, %v156) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v158 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v159 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v160 = "stablehlo.reshape"(%v159) : (tensor<i64>) -> tensor<1xi64>
    %v161 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v162 = "stablehlo.reshape"(%v161) : (tensor<i64>) -> tensor<1xi64>
    %v163 = "stablehlo.concatenate"(%v158, %v160, %v162) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v164 = "stablehlo.dynamic_broadcast_in_dim"(%blocks.1.0.bias, %v163) {broadcast_dimensions = array<i64: 2>} : (tensor<24xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v165 = "stablehlo.add"(%v157, %v164) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v166 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v167 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v168 = "stablehlo.reshape"(%v167) : (tensor<i64>) -> tensor<1xi64>
    %v169 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v170 = "stablehlo.reshape"(%v169) : (tensor<i64>) -> tensor<1xi64>
    %v171 = "stablehlo.concatenate"(%v166, %v168, %v170) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v172 = "stablehlo.dynamic_reshape"(%v118, %v171) : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x1xf32>
    %v173 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v174 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v175 = "stablehlo.reshape"(%v174) : (tensor<i64>) -> tensor<1xi64>
    %v176 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v177 = "stablehlo.reshape"(%v176) : (tensor<i64>) -> tensor<1xi64>
    %v178 = "stablehlo.concatenate"(%v173, %v175, %v177) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v179 = "stablehlo.dynamic_reshape"(%v141, %v178) : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x1xf32>
    %v180 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v181 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v182 = "stablehlo.reshape"(%v181) : (tensor<i64>) -> tensor<1xi64>
    %v183 = "stablehlo.concatenate"(%v180, %v182) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v184 = "stablehlo.dynamic_reshape"(%v165, %v183) : (tensor<?x6x24xf32>, tensor<2xi64>) -> tensor<?x24xf32>
    %v185 = "stablehlo.transpose"(%blocks.1.1.weight) {permutation = array<i64: 1, 0>} : (tensor<24x24xf32>) -> tensor<24x24xf32>
    %v186 = "stablehlo.dot_general"(%v184, %v185) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x24xf32>, tensor<24x24xf32>) -> tensor<?x24xf32>
    %v187 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v188 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v189 = "stablehlo.reshape"(%v188) : (tensor<i64>) -> tensor<1xi64>
    %v190 = "stablehlo.concatenate"(%v187, %v189) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v191 = "stablehlo.dynamic_broadcast_in_dim"(%blocks.1.1.bias, %v190) {broadcast_dimensions = array<i64: 1>} : (tensor<24xf32>, tensor<2xi64>) -> tensor<?x24xf32>
    %v192 = "stablehlo.add"(%v186, %v191) : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
    %v193 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v194 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v195 = "stablehlo.reshape"(%v194) : (tensor<i64>) -> tensor<1xi64>
    %v196 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v197 = "stablehlo.reshape"(%v196) : (tensor<i64>) -> tensor<1xi64>
    %v198 = "stablehlo.concatenate"(%v193, %v195, %v197) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v199 = "stablehlo.dynamic_reshape"(%v192, %v198) : (tensor<?x24xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v200 = "stablehlo.logistic"(%v199) : (tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v201 = "stablehlo.multiply"(%v199, %v200) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v202 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v206 = "stablehlo.reduce"(%v201, %v202) ({
    ^bb0(%r203: tensor<f32>, %r204: tensor<f32>):
      %r205 = "stablehlo.add"(%r203, %r204) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r205) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x24xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v207 = "stablehlo.constant"() {value = dense<24.0> : tensor<f32>} : () -> tensor<f32>
    %v208 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v209 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v210 = "stablehlo.reshape"(%v209) : (tensor<i64>) -> tensor<1xi64>
    %v211 = "stablehlo.concatenate"(%v208, %v210) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v212 = "stablehlo.dynamic_broadcast_in_dim"(%v207, %v211) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x6xf32>
    %v213 = "stablehlo.divide"(%v206, %v212) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %v214 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v215 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v216 = "stablehlo.reshape"(%v215) : (tensor<i64>) -> tensor<1xi64>
    %v217 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v218 = "stablehlo.reshape"(%v217) : (tensor<i64>) -> tensor<1xi64>
    %v219 = "stablehlo.concatenate"(%v214, %v216, %v218) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v220 = "stablehlo.dynamic_broadcast_in_dim"(%v213, %v219) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v221 = "stablehlo.subtract"(%v201, %v220) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v222 = "stablehlo.multiply"(%v221, %v221) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v223 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v227 = "stablehlo.reduce"(%v222, %v223) ({
    ^bb0(%r224: tensor<f32>, %r225: tensor<f32>):
      %r226 = "stablehlo.add"(%r224, %r225) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r226) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x24xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v228 = "stablehlo.divide"(%v227, %v212) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %v229 = "stablehlo.constant"() {value = dense<1e-05> : tensor<f32>} : () -> tensor<f32>
    %v230 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v231 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v232 = "stablehlo.reshape"(%v231) : (tensor<i64>) -> tensor<1xi64>
    %v233 = "stablehlo.concatenate"(%v230, %v232) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v234 = "stablehlo.dynamic_broadcast_in_dim"(%v229, %v233) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x6xf32>
    %v235 = "stablehlo.add"(%v228, %v234) : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
    %v236 = "stablehlo.rsqrt"(%v235) : (tensor<?x6xf32>) -> tensor<?x6xf32>
    %v237 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v238 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v239 = "stablehlo.reshape"(%v238) : (tensor<i64>) -> tensor<1xi64>
    %v240 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v241 = "stablehlo.reshape"(%v240) : (tensor<i64>) -> tensor<1xi64>
    %v242 = "stablehlo.concatenate"(%v237, %v239, %v241) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v243 = "stablehlo.dynamic_broadcast_in_dim"(%v236, %v242) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v244 = "stablehlo.multiply"(%v221, %v243) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v245 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v246 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v247 = "stablehlo.reshape"(%v246) : (tensor<i64>) -> tensor<1xi64>
    %v248 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v249 = "stablehlo.reshape"(%v248) : (tensor<i64>) -> tensor<1xi64>
    %v250 = "stablehlo.concatenate"(%v245, %v247, %v249) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v251 = "stablehlo.dynamic_broadcast_in_dim"(%blocks.2.0.weight, %v250) {broadcast_dimensions = array<i64: 2>} : (tensor<24xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v252 = "stablehlo.multiply"(%v244, %v251) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v253 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v254 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v255 = "stablehlo.reshape"(%v254) : (tensor<i64>) -> tensor<1xi64>
    %v256 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v257 = "stablehlo.reshape"(%v256) : (tensor<i64>) -> tensor<1xi64>
    %v258 = "stablehlo.concatenate"(%v253, %v255, %v257) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v259 = "stablehlo.dynamic_broadcast_in_dim"(%blocks.2.0.bias, %v258) {broadcast_dimensions = array<i64: 2>} : (tensor<24xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v260 = "stablehlo.add"(%v252, %v259) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v261 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v262 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v263 = "stablehlo.reshape"(%v262) : (tensor<i64>) -> tensor<1xi64>
    %v264 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v265 = "stablehlo.reshape"(%v264) : (tensor<i64>) -> tensor<1xi64>
    %v266 = "stablehlo.concatenate"(%v261, %v263, %v265) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v267 = "stablehlo.dynamic_reshape"(%v213, %v266) : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x1xf32>
    %v268 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v269 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v270 = "stablehlo.reshape"(%v269) : (tensor<i64>) -> tensor<1xi64>
    %v271 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v272 = "stablehlo.reshape"(%v271) : (tensor<i64>) -> tensor<1xi64>
    %v273 = "stablehlo.concatenate"(%v268, %v270, %v272) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v274 = "stablehlo.dynamic_reshape"(%v236, %v273) : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x1xf32>
    %v275 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v276 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v277 = "stablehlo.reshape"(%v276) : (tensor<i64>) -> tensor<1xi64>
    %v278 = "stablehlo.concatenate"(%v275, %v277) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v279 = "stablehlo.dynamic_reshape"(%v260, %v278) : (tensor<?x6x24xf32>, tensor<2xi64>) -> tensor<?x24xf32>
    %v280 = "stablehlo.transpose"(%blocks.2.1.weight) {permutation = array<i64: 1, 0>} : (tensor<24x24xf32>) -> tensor<24x24xf32>
    %v281 = "stablehlo.dot_general"(%v279, %v280) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x24xf32>, tensor<24x24xf32>) -> tensor<?x24xf32>
    %v282 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v283 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v284 = "stablehlo.reshape"(%v283) : (tensor<i64>) -> tensor<1xi64>
    %v285 = "stablehlo.concatenate"(%v282, %v284) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v286 = "stablehlo.dynamic_broadcast_in_dim"(%blocks.2.1.bias, %v285) {broadcast_dimensions = array<i64: 1>} : (tensor<24xf32>, tensor<2xi64>) -> tensor<?x24xf32>
    %v287 = "stablehlo.add"(%v281, %v286) : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
    %v288 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v289 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v290 = "stablehlo.reshape"(%v289) : (tensor<i64>) -> tensor<1xi64>
    %v291 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v292 = "stablehlo.reshape"(%v291) : (tensor<i64>) -> tensor<1xi64>
    %v293 = "stablehlo.concatenate"(%v288, %v290, %v292) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v294 = "stablehlo.dynamic_reshape"(%v287, %v293) : (tensor<?x24xf32>, tensor<3xi64>) -> tensor<?x6x24xf32>
    %v295 = "stablehlo.logistic"(%v294) : (tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v296 = "stablehlo.multiply"(%v294, %v295) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v297 = "stablehlo.add"(%v296, %v9) : (tensor<?x6x24xf32>, tensor<?x6x24xf32>) -> tensor<?x6x24xf32>
    %v298 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v299 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v300 = "stablehlo.reshape"(%v299) : (tensor<i64>) -> tensor<1xi64>
    %v301 = "stablehlo.concatenate"(%v298, %v300) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v302 = "stablehlo.dynamic_reshape"(%v297, %v301) : (tensor<?x6x24xf32>, tensor<2xi64>) -> tensor<?x24xf32>
    %v303 = "stablehlo.transpose"(%head.weight) {permutation = array<i64: 1, 0>} : (tensor<10x24xf32>) -> tensor<24x10xf32>
    %v304 = "stablehlo.dot_general"(%v302, %v303) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x24xf32>, tensor<24x10xf32>) -> tensor<?x10xf32>
    %v305 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v306 = "stablehlo.constant"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>
    %v307 = "stablehlo.reshape"(%v306) : (tensor<i64>) -> tensor<1xi64>
    %v308 = "stablehlo.concatenate"(%v305, %v307) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v309 = "stablehlo.dynamic_broadcast_in_dim"(%head.bias, %v308) {broadcast_dimensions = array<i64: 1>} : (tensor<10xf32>, tensor<2xi64>) -> tensor<?x10xf32>
    %v310 = "stablehlo.add"(%v304, %v309) : (tensor<?x10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32>
    %v311 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v312 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v313 = "stablehlo.reshape"(%v312) : (tensor<i64>) -> tensor<1xi64>
    %v314 = "stablehlo.constant"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>
    %v315 = "stablehlo.reshape"(%v314) : (tensor<i64>) -> tensor<1xi64>
    %v316 = "stablehlo.concatenate"(%v311, %v313, %v315) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v317 = "stablehlo.dynamic_reshape"(%v310, %v316) : (tensor<?x10xf32>, tensor<3xi64>) -> tensor<?x6x10xf32>
    %v318 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %v322 = "stablehlo.reduce"(%v317, %v318) ({
    ^bb0(%r319: tensor<f32>, %r320: tensor<f32>):
      %r321 = "stablehlo.maximum"(%r319, %r320) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r321) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x10xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v323 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v324 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v325 = "stablehlo.reshape"(%v324) : (tensor<i64>) -> tensor<1xi64>
    %v326 = "stablehlo.constant"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>
    %v327 = "stablehlo.reshape"(%v326) : (tensor<i64>) -> tensor<1xi64>
    %v328 = "stablehlo.concatenate"(%v323, %v325, %v327) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v329 = "stablehlo.dynamic_broadcast_in_dim"(%v322, %v328) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x10xf32>
    %v330 = "stablehlo.subtract"(%v317, %v329) : (tensor<?x6x10xf32>, tensor<?x6x10xf32>) -> tensor<?x6x10xf32>
    %v331 = "stablehlo.exponential"(%v330) : (tensor<?x6x10xf32>) -> tensor<?x6x10xf32>
    %v332 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v336 = "stablehlo.reduce"(%v331, %v332) ({
    ^bb0(%r333: tensor<f32>, %r334: tensor<f32>):
      %r335 = "stablehlo.add"(%r333, %r334) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r335) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x10xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v337 = "stablehlo.log"(%v336) : (tensor<?x6xf32>) -> tensor<?x6xf32>
    %v338 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v339 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v340 = "stablehlo.reshape"(%v339) : (tensor<i64>) -> tensor<1xi64>
    %v341 = "stablehlo.constant"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>
    %v342 = "stablehlo.reshape"(%v341) : (tensor<i64>) -> tensor<1xi64>
    %v343 = "stablehlo.concatenate"(%v338, %v340, %v342) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v344 = "stablehlo.dynamic_broadcast_in_dim"(%v337, %v343) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x10xf32>
    %v345 = "stablehlo.subtract"(%v330, %v344) : (tensor<?x6x10xf32>, tensor<?x6x10xf32>) -> tensor<?x6x10xf32>
    %v346 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v350 = "stablehlo.reduce"(%v297, %v346) ({
    ^bb0(%r347: tensor<f32>, %r348: tensor<f32>):
      %r349 = "stablehlo.add"(%r347, %r348) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r349) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<?x6x24xf32>, tensor<f32>) -> tensor<?x24xf32>
    %v351 = "stablehlo.constant"() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
    %v352 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v353 = "stablehlo.constant"() {value = dense<24> : tensor<i64>} : () -> tensor<i64>
    %v354 = "stablehlo.reshape"(%v353) : (tensor<i64>) -> tensor<1xi64>
    %v355 = "stablehlo.concatenate"(%v352, %v354) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v356 = "stablehlo.dynamic_broadcast_in_dim"(%v351, %v355) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi64>) -> tensor<?x24xf32>
    %v357 = "stablehlo.divide"(%v350, %v356) : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
    func.return %v345, %v357 : tensor<?x6x10xf32>, tensor<?x24xf32>
  }
}
