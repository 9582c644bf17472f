module @dynamic_ops {
  func.func public @main(
    %x: tensor<?x3x5xf32> {mhlo.name = "x"},
    %lin.weight: tensor<5x5xf32> {mhlo.name = "lin.weight"},
    %lin.bias: tensor<5xf32> {mhlo.name = "lin.bias"},
    %idx: tensor<4xi64> {mhlo.name = "idx"}) -> (tensor<?x6x3xf32>, tensor<?x1x5xf32>) {
    %v0 = "stablehlo.constant"() {value = dense<0> : tensor<4xi64>} : () -> tensor<4xi64>
    %v1 = "stablehlo.compare"(%idx, %v0) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %v2 = "stablehlo.constant"() {value = dense<5> : tensor<4xi64>} : () -> tensor<4xi64>
    %v3 = "stablehlo.add"(%idx, %v2) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
    %v4 = "stablehlo.select"(%v1, %v3, %idx) : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
    %v5 = "stablehlo.reshape"(%v4) : (tensor<4xi64>) -> tensor<4x1xi64>
    %v6 = "stablehlo.get_dimension_size"(%x) {dimension = 0 : i64} : (tensor<?x3x5xf32>) -> tensor<i32>
    %v7 = "stablehlo.convert"(%v6) : (tensor<i32>) -> tensor<i64>
    %v8 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v9 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v10 = "stablehlo.reshape"(%v9) : (tensor<i64>) -> tensor<1xi64>
    %v11 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v12 = "stablehlo.reshape"(%v11) : (tensor<i64>) -> tensor<1xi64>
    %v13 = "stablehlo.concatenate"(%v8, %v10, %v12) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v14 = "stablehlo.dynamic_gather"(%x, %v5, %v13) {dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], collapsed_slice_dims = [2], start_index_map = [2], index_vector_dim = 1>, indices_are_sorted = false} : (tensor<?x3x5xf32>, tensor<4x1xi64>, tensor<3xi64>) -> tensor<?x3x4xf32>
    %v15 = "stablehlo.constant"() {value = dense<-1.0> : tensor<f32>} : () -> tensor<f32>
    %v16 = "stablehlo.constant"() {value = dense<[0, 2, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v17 = "stablehlo.constant"() {value = dense<[0, 1, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v18 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v19 = "stablehlo.dynamic_pad"(%v14, %v15, %v16, %v17, %v18) : (tensor<?x3x4xf32>, tensor<f32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<?x6x5xf32>
    %v20 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v21 = "stablehlo.dynamic_iota"(%v20) {iota_dimension = 0 : i64} : (tensor<1xi64>) -> tensor<?xf32>
    %v22 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v23 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v24 = "stablehlo.reshape"(%v23) : (tensor<i64>) -> tensor<1xi64>
    %v25 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v26 = "stablehlo.reshape"(%v25) : (tensor<i64>) -> tensor<1xi64>
    %v27 = "stablehlo.concatenate"(%v22, %v24, %v26) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v28 = "stablehlo.dynamic_reshape"(%v21, %v27) : (tensor<?xf32>, tensor<3xi64>) -> tensor<?x1x1xf32>
    %v29 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v30 = "stablehlo.multiply"(%v29, %v7) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %v31 = "stablehlo.reshape"(%v30) : (tensor<i64>) -> tensor<1xi64>
    %v32 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v33 = "stablehlo.reshape"(%v32) : (tensor<i64>) -> tensor<1xi64>
    %v34 = "stablehlo.concatenate"(%v31, %v33) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v35 = "stablehlo.dynamic_reshape"(%v19, %v34) : (tensor<?x6x5xf32>, tensor<2xi64>) -> tensor<?x5xf32>
    %v36 = "stablehlo.transpose"(%lin.weight) {permutation = array<i64: 1, 0>} : (tensor<5x5xf32>) -> tensor<5x5xf32>
    %v37 = "stablehlo.dot_general"(%v35, %v36) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x5xf32>, tensor<5x5xf32>) -> tensor<?x5xf32>
    %v38 = "stablehlo.reshape"(%v30) : (tensor<i64>) -> tensor<1xi64>
    %v39 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v40 = "stablehlo.reshape"(%v39) : (tensor<i64>) -> tensor<1xi64>
    %v41 = "stablehlo.concatenate"(%v38, %v40) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v42 = "stablehlo.dynamic_broadcast_in_dim"(%lin.bias, %v41) {broadcast_dimensions = array<i64: 1>} : (tensor<5xf32>, tensor<2xi64>) -> tensor<?x5xf32>
    %v43 = "stablehlo.add"(%v37, %v42) : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
    %v44 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v45 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v46 = "stablehlo.reshape"(%v45) : (tensor<i64>) -> tensor<1xi64>
    %v47 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v48 = "stablehlo.reshape"(%v47) : (tensor<i64>) -> tensor<1xi64>
    %v49 = "stablehlo.concatenate"(%v44, %v46, %v48) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v50 = "stablehlo.dynamic_reshape"(%v43, %v49) : (tensor<?x5xf32>, tensor<3xi64>) -> tensor<?x6x5xf32>
    %v51 = "stablehlo.reshape"(%v30) : (tensor<i64>) -> tensor<1xi64>
    %v52 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v53 = "stablehlo.reshape"(%v52) : (tensor<i64>) -> tensor<1xi64>
    %v54 = "stablehlo.concatenate"(%v51, %v53) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v55 = "stablehlo.dynamic_reshape"(%v50, %v54) : (tensor<?x6x5xf32>, tensor<2xi64>) -> tensor<?x5xf32>
    %v56 = "stablehlo.constant"() {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
    %v57 = "stablehlo.reshape"(%v30) : (tensor<i64>) -> tensor<1xi64>
    %v58 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v59 = "stablehlo.reshape"(%v58) : (tensor<i64>) -> tensor<1xi64>
    %v60 = "stablehlo.concatenate"(%v57, %v59) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v61 = "stablehlo.constant"() {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
    %v62 = "stablehlo.real_dynamic_slice"(%v55, %v56, %v60, %v61) : (tensor<?x5xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
    %v63 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v64 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v65 = "stablehlo.reshape"(%v64) : (tensor<i64>) -> tensor<1xi64>
    %v66 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v67 = "stablehlo.reshape"(%v66) : (tensor<i64>) -> tensor<1xi64>
    %v68 = "stablehlo.concatenate"(%v63, %v65, %v67) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v69 = "stablehlo.dynamic_reshape"(%v62, %v68) : (tensor<?x3xf32>, tensor<3xi64>) -> tensor<?x6x3xf32>
    %v70 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v71 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v72 = "stablehlo.reshape"(%v71) : (tensor<i64>) -> tensor<1xi64>
    %v73 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v74 = "stablehlo.reshape"(%v73) : (tensor<i64>) -> tensor<1xi64>
    %v75 = "stablehlo.concatenate"(%v70, %v72, %v74) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v76 = "stablehlo.dynamic_broadcast_in_dim"(%v28, %v75) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<?x1x1xf32>, tensor<3xi64>) -> tensor<?x6x3xf32>
    %v77 = "stablehlo.multiply"(%v69, %v76) : (tensor<?x6x3xf32>, tensor<?x6x3xf32>) -> tensor<?x6x3xf32>
    %v78 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %v82 = "stablehlo.reduce"(%v77, %v78) ({
    ^bb0(%r79: tensor<f32>, %r80: tensor<f32>):
      %r81 = "stablehlo.maximum"(%r79, %r80) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r81) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x3xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v83 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v84 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v85 = "stablehlo.reshape"(%v84) : (tensor<i64>) -> tensor<1xi64>
    %v86 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v87 = "stablehlo.reshape"(%v86) : (tensor<i64>) -> tensor<1xi64>
    %v88 = "stablehlo.concatenate"(%v83, %v85, %v87) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v89 = "stablehlo.dynamic_broadcast_in_dim"(%v82, %v88) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x3xf32>
    %v90 = "stablehlo.subtract"(%v77, %v89) : (tensor<?x6x3xf32>, tensor<?x6x3xf32>) -> tensor<?x6x3xf32>
    %v91 = "stablehlo.exponential"(%v90) : (tensor<?x6x3xf32>) -> tensor<?x6x3xf32>
    %v92 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v96 = "stablehlo.reduce"(%v91, %v92) ({
    ^bb0(%r93: tensor<f32>, %r94: tensor<f32>):
      %r95 = "stablehlo.add"(%r93, %r94) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r95) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 2>} : (tensor<?x6x3xf32>, tensor<f32>) -> tensor<?x6xf32>
    %v97 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v98 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v99 = "stablehlo.reshape"(%v98) : (tensor<i64>) -> tensor<1xi64>
    %v100 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v101 = "stablehlo.reshape"(%v100) : (tensor<i64>) -> tensor<1xi64>
    %v102 = "stablehlo.concatenate"(%v97, %v99, %v101) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v103 = "stablehlo.dynamic_broadcast_in_dim"(%v96, %v102) {broadcast_dimensions = array<i64: 0, 1>} : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x6x3xf32>
    %v104 = "stablehlo.divide"(%v91, %v103) : (tensor<?x6x3xf32>, tensor<?x6x3xf32>) -> tensor<?x6x3xf32>
    %v105 = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %v109 = "stablehlo.reduce"(%x, %v105) ({
    ^bb0(%r106: tensor<f32>, %r107: tensor<f32>):
      %r108 = "stablehlo.maximum"(%r106, %r107) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r108) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<?x3x5xf32>, tensor<f32>) -> tensor<?x5xf32>
    %v110 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v111 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v112 = "stablehlo.reshape"(%v111) : (tensor<i64>) -> tensor<1xi64>
    %v113 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v114 = "stablehlo.reshape"(%v113) : (tensor<i64>) -> tensor<1xi64>
    %v115 = "stablehlo.concatenate"(%v110, %v112, %v114) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v116 = "stablehlo.dynamic_reshape"(%v109, %v115) : (tensor<?x5xf32>, tensor<3xi64>) -> tensor<?x1x5xf32>
    %v117 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v118 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v119 = "stablehlo.reshape"(%v118) : (tensor<i64>) -> tensor<1xi64>
    %v120 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v121 = "stablehlo.reshape"(%v120) : (tensor<i64>) -> tensor<1xi64>
    %v122 = "stablehlo.concatenate"(%v117, %v119, %v121) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v123 = "stablehlo.dynamic_broadcast_in_dim"(%v116, %v122) {broadcast_dimensions = array<i64: 0, 1, 2>} : (tensor<?x1x5xf32>, tensor<3xi64>) -> tensor<?x3x5xf32>
    %v124 = "stablehlo.compare"(%x, %v123) {comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<?x3x5xf32>, tensor<?x3x5xf32>) -> tensor<?x3x5xi1>
    %v125 = "stablehlo.compare"(%x, %x) {comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<?x3x5xf32>, tensor<?x3x5xf32>) -> tensor<?x3x5xi1>
    %v126 = "stablehlo.or"(%v124, %v125) : (tensor<?x3x5xi1>, tensor<?x3x5xi1>) -> tensor<?x3x5xi1>
    %v127 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v128 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v129 = "stablehlo.reshape"(%v128) : (tensor<i64>) -> tensor<1xi64>
    %v130 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v131 = "stablehlo.reshape"(%v130) : (tensor<i64>) -> tensor<1xi64>
    %v132 = "stablehlo.concatenate"(%v127, %v129, %v131) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v133 = "stablehlo.dynamic_iota"(%v132) {iota_dimension = 1 : i64} : (tensor<3xi64>) -> tensor<?x3x5xi64>
    %v134 = "stablehlo.constant"() {value = dense<4611686018427387904> : tensor<i64>} : () -> tensor<i64>
    %v135 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v136 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v137 = "stablehlo.reshape"(%v136) : (tensor<i64>) -> tensor<1xi64>
    %v138 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v139 = "stablehlo.reshape"(%v138) : (tensor<i64>) -> tensor<1xi64>
    %v140 = "stablehlo.concatenate"(%v135, %v137, %v139) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v141 = "stablehlo.dynamic_broadcast_in_dim"(%v134, %v140) {broadcast_dimensions = array<i64>} : (tensor<i64>, tensor<3xi64>) -> tensor<?x3x5xi64>
    %v142 = "stablehlo.select"(%v126, %v133, %v141) : (tensor<?x3x5xi1>, tensor<?x3x5xi64>, tensor<?x3x5xi64>) -> tensor<?x3x5xi64>
    %v143 = "stablehlo.constant"() {value = dense<4611686018427387904> : tensor<i64>} : () -> tensor<i64>
    %v147 = "stablehlo.reduce"(%v142, %v143) ({
    ^bb0(%r144: tensor<i64>, %r145: tensor<i64>):
      %r146 = "stablehlo.minimum"(%r144, %r145) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%r146) : (tensor<i64>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<?x3x5xi64>, tensor<i64>) -> tensor<?x5xi64>
    %v148 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v149 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v150 = "stablehlo.reshape"(%v149) : (tensor<i64>) -> tensor<1xi64>
    %v151 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v152 = "stablehlo.reshape"(%v151) : (tensor<i64>) -> tensor<1xi64>
    %v153 = "stablehlo.concatenate"(%v148, %v150, %v152) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v154 = "stablehlo.dynamic_reshape"(%v147, %v153) : (tensor<?x5xi64>, tensor<3xi64>) -> tensor<?x1x5xi64>
    %v155 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v156 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v157 = "stablehlo.reshape"(%v156) : (tensor<i64>) -> tensor<1xi64>
    %v158 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v159 = "stablehlo.reshape"(%v158) : (tensor<i64>) -> tensor<1xi64>
    %v160 = "stablehlo.concatenate"(%v155, %v157, %v159) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v161 = "stablehlo.dynamic_iota"(%v160) {iota_dimension = 0 : i64} : (tensor<3xi64>) -> tensor<?x1x5xi64>
    %v162 = "stablehlo.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %v163 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v164 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v165 = "stablehlo.reshape"(%v164) : (tensor<i64>) -> tensor<1xi64>
    %v166 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v167 = "stablehlo.reshape"(%v166) : (tensor<i64>) -> tensor<1xi64>
    %v168 = "stablehlo.concatenate"(%v163, %v165, %v167) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v169 = "stablehlo.dynamic_broadcast_in_dim"(%v162, %v168) {broadcast_dimensions = array<i64>} : (tensor<i64>, tensor<3xi64>) -> tensor<?x1x5xi64>
    %v170 = "stablehlo.compare"(%v154, %v169) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>} : (tensor<?x1x5xi64>, tensor<?x1x5xi64>) -> tensor<?x1x5xi1>
    %v171 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v172 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v173 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v174 = "stablehlo.reshape"(%v173) : (tensor<i64>) -> tensor<1xi64>
    %v175 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v176 = "stablehlo.reshape"(%v175) : (tensor<i64>) -> tensor<1xi64>
    %v177 = "stablehlo.concatenate"(%v172, %v174, %v176) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v178 = "stablehlo.dynamic_broadcast_in_dim"(%v171, %v177) {broadcast_dimensions = array<i64>} : (tensor<i64>, tensor<3xi64>) -> tensor<?x1x5xi64>
    %v179 = "stablehlo.add"(%v154, %v178) : (tensor<?x1x5xi64>, tensor<?x1x5xi64>) -> tensor<?x1x5xi64>
    %v180 = "stablehlo.select"(%v170, %v179, %v154) : (tensor<?x1x5xi1>, tensor<?x1x5xi64>, tensor<?x1x5xi64>) -> tensor<?x1x5xi64>
    %v181 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v182 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v183 = "stablehlo.reshape"(%v182) : (tensor<i64>) -> tensor<1xi64>
    %v184 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v185 = "stablehlo.reshape"(%v184) : (tensor<i64>) -> tensor<1xi64>
    %v186 = "stablehlo.concatenate"(%v181, %v183, %v185) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v187 = "stablehlo.dynamic_iota"(%v186) {iota_dimension = 2 : i64} : (tensor<3xi64>) -> tensor<?x1x5xi64>
    %v188 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v189 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v190 = "stablehlo.reshape"(%v189) : (tensor<i64>) -> tensor<1xi64>
    %v191 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v192 = "stablehlo.reshape"(%v191) : (tensor<i64>) -> tensor<1xi64>
    %v193 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v194 = "stablehlo.reshape"(%v193) : (tensor<i64>) -> tensor<1xi64>
    %v195 = "stablehlo.concatenate"(%v188, %v190, %v192, %v194) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v196 = "stablehlo.dynamic_reshape"(%v161, %v195) : (tensor<?x1x5xi64>, tensor<4xi64>) -> tensor<?x1x5x1xi64>
    %v197 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v198 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v199 = "stablehlo.reshape"(%v198) : (tensor<i64>) -> tensor<1xi64>
    %v200 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v201 = "stablehlo.reshape"(%v200) : (tensor<i64>) -> tensor<1xi64>
    %v202 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v203 = "stablehlo.reshape"(%v202) : (tensor<i64>) -> tensor<1xi64>
    %v204 = "stablehlo.concatenate"(%v197, %v199, %v201, %v203) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v205 = "stablehlo.dynamic_reshape"(%v180, %v204) : (tensor<?x1x5xi64>, tensor<4xi64>) -> tensor<?x1x5x1xi64>
    %v206 = "stablehlo.reshape"(%v7) : (tensor<i64>) -> tensor<1xi64>
    %v207 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v208 = "stablehlo.reshape"(%v207) : (tensor<i64>) -> tensor<1xi64>
    %v209 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v210 = "stablehlo.reshape"(%v209) : (tensor<i64>) -> tensor<1xi64>
    %v211 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v212 = "stablehlo.reshape"(%v211) : (tensor<i64>) -> tensor<1xi64>
    %v213 = "stablehlo.concatenate"(%v206, %v208, %v210, %v212) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
    %v214 = "stablehlo.dynamic_reshape"(%v187, %v213) : (tensor<?x1x5xi64>, tensor<4xi64>) -> tensor<?x1x5x1xi64>
    %v215 = "stablehlo.concatenate"(%v196, %v205, %v214) {dimension = 3 : i64} : (tensor<?x1x5x1xi64>, tensor<?x1x5x1xi64>, tensor<?x1x5x1xi64>) -> tensor<?x1x5x3xi64>
    %v216 = "stablehlo.gather"(%x, %v215) {dimension_numbers = #stablehlo.gather<offset_dims = [], collapsed_slice_dims = [0, 1, 2], start_index_map = [0, 1, 2], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 1>, indices_are_sorted = false} : (tensor<?x3x5xf32>, tensor<?x1x5x3xi64>) -> tensor<?x1x5xf32>
    func.return %v104, %v216 : tensor<?x6x3xf32>, tensor<?x1x5xf32>
  }
}
