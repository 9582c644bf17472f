module @lstm {
  func.func public @main(
    %input: tensor<?x7x16xf32> {mhlo.name = "input"},
    %weight_ih_l0: tensor<128x16xf32> {mhlo.name = "weight_ih_l0"},
    %weight_hh_l0: tensor<128x32xf32> {mhlo.name = "weight_hh_l0"},
    %bias_ih_l0: tensor<128xf32> {mhlo.name = "bias_ih_l0"},
    %bias_hh_l0: tensor<128xf32> {mhlo.name = "bias_hh_l0"},
    %weight_ih_l1: tensor<128x32xf32> {mhlo.name = "weight_ih_l1"},
    %weight_hh_l1: tensor<128x32xf32> {mhlo.name = "weight_hh_l1"},
    %bias_ih_l1: tensor<128xf32> {mhlo.name = "bias_ih_l1"},
    %bias_hh_l1: tensor<128xf32> {mhlo.name = "bias_hh_l1"}) -> (tensor<?x7x32xf32>, tensor<2x?x32xf32>, tensor<2x?x32xf32>) {
    %v0 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v1 = "stablehlo.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %v2 = "stablehlo.reshape"(%v1) : (tensor<i64>) -> tensor<1xi64>
    %v3 = "stablehlo.get_dimension_size"(%input) {dimension = 0 : i64} : (tensor<?x7x16xf32>) -> tensor<i32>
    %v4 = "stablehlo.convert"(%v3) : (tensor<i32>) -> tensor<i64>
    %v5 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v6 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v7 = "stablehlo.reshape"(%v6) : (tensor<i64>) -> tensor<1xi64>
    %v8 = "stablehlo.concatenate"(%v2, %v5, %v7) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v9 = "stablehlo.dynamic_broadcast_in_dim"(%v0, %v8) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<3xi64>) -> tensor<2x?x32xf32>
    %v10 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %v11 = "stablehlo.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %v12 = "stablehlo.reshape"(%v11) : (tensor<i64>) -> tensor<1xi64>
    %v13 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v14 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v15 = "stablehlo.reshape"(%v14) : (tensor<i64>) -> tensor<1xi64>
    %v16 = "stablehlo.concatenate"(%v12, %v13, %v15) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v17 = "stablehlo.dynamic_broadcast_in_dim"(%v10, %v16) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<3xi64>) -> tensor<2x?x32xf32>
    %v18 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v19 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v20 = "stablehlo.reshape"(%v19) : (tensor<i64>) -> tensor<1xi64>
    %v21 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v22 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v23 = "stablehlo.reshape"(%v22) : (tensor<i64>) -> tensor<1xi64>
    %v24 = "stablehlo.concatenate"(%v20, %v21, %v23) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v25 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v26 = "stablehlo.real_dynamic_slice"(%v9, %v18, %v24, %v25) : (tensor<2x?x32xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v27 = "stablehlo.constant"() {value = dense<[1, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v28 = "stablehlo.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %v29 = "stablehlo.reshape"(%v28) : (tensor<i64>) -> tensor<1xi64>
    %v30 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v31 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v32 = "stablehlo.reshape"(%v31) : (tensor<i64>) -> tensor<1xi64>
    %v33 = "stablehlo.concatenate"(%v29, %v30, %v32) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v34 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v35 = "stablehlo.real_dynamic_slice"(%v9, %v27, %v33, %v34) : (tensor<2x?x32xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v36 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v37 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v38 = "stablehlo.reshape"(%v37) : (tensor<i64>) -> tensor<1xi64>
    %v39 = "stablehlo.concatenate"(%v36, %v38) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v40 = "stablehlo.dynamic_reshape"(%v26, %v39) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v41 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v42 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v43 = "stablehlo.reshape"(%v42) : (tensor<i64>) -> tensor<1xi64>
    %v44 = "stablehlo.concatenate"(%v41, %v43) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v45 = "stablehlo.dynamic_reshape"(%v35, %v44) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v46 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v47 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v48 = "stablehlo.reshape"(%v47) : (tensor<i64>) -> tensor<1xi64>
    %v49 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v50 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v51 = "stablehlo.reshape"(%v50) : (tensor<i64>) -> tensor<1xi64>
    %v52 = "stablehlo.concatenate"(%v48, %v49, %v51) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v53 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v54 = "stablehlo.real_dynamic_slice"(%v17, %v46, %v52, %v53) : (tensor<2x?x32xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v55 = "stablehlo.constant"() {value = dense<[1, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v56 = "stablehlo.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %v57 = "stablehlo.reshape"(%v56) : (tensor<i64>) -> tensor<1xi64>
    %v58 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v59 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v60 = "stablehlo.reshape"(%v59) : (tensor<i64>) -> tensor<1xi64>
    %v61 = "stablehlo.concatenate"(%v57, %v58, %v60) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v62 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v63 = "stablehlo.real_dynamic_slice"(%v17, %v55, %v61, %v62) : (tensor<2x?x32xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v64 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v65 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v66 = "stablehlo.reshape"(%v65) : (tensor<i64>) -> tensor<1xi64>
    %v67 = "stablehlo.concatenate"(%v64, %v66) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v68 = "stablehlo.dynamic_reshape"(%v54, %v67) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v69 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v70 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v71 = "stablehlo.reshape"(%v70) : (tensor<i64>) -> tensor<1xi64>
    %v72 = "stablehlo.concatenate"(%v69, %v71) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v73 = "stablehlo.dynamic_reshape"(%v63, %v72) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v74 = "stablehlo.transpose"(%input) {permutation = array<i64: 1, 0, 2>} : (tensor<?x7x16xf32>) -> tensor<7x?x16xf32>
    %v75 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v76 = "stablehlo.reshape"(%v75) : (tensor<i64>) -> tensor<1xi64>
    %v77 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v78 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v79 = "stablehlo.reshape"(%v78) : (tensor<i64>) -> tensor<1xi64>
    %v80 = "stablehlo.concatenate"(%v76, %v77, %v79) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v81 = "stablehlo.dynamic_reshape"(%v40, %v80) : (tensor<?x32xf32>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v82 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v83 = "stablehlo.reshape"(%v82) : (tensor<i64>) -> tensor<1xi64>
    %v84 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v85 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v86 = "stablehlo.reshape"(%v85) : (tensor<i64>) -> tensor<1xi64>
    %v87 = "stablehlo.concatenate"(%v83, %v84, %v86) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v88 = "stablehlo.dynamic_reshape"(%v68, %v87) : (tensor<?x32xf32>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v89 = "stablehlo.transpose"(%weight_ih_l0) {permutation = array<i64: 1, 0>} : (tensor<128x16xf32>) -> tensor<16x128xf32>
    %v90 = "stablehlo.broadcast_in_dim"(%v89) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<16x128xf32>) -> tensor<7x16x128xf32>
    %v91 = "stablehlo.dot_general"(%v74, %v90) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<7x?x16xf32>, tensor<7x16x128xf32>) -> tensor<7x?x128xf32>
    %v92 = "stablehlo.constant"() {value = dense<7> : tensor<i64>} : () -> tensor<i64>
    %v93 = "stablehlo.reshape"(%v92) : (tensor<i64>) -> tensor<1xi64>
    %v94 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v95 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v96 = "stablehlo.reshape"(%v95) : (tensor<i64>) -> tensor<1xi64>
    %v97 = "stablehlo.concatenate"(%v93, %v94, %v96) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v98 = "stablehlo.dynamic_broadcast_in_dim"(%bias_ih_l0, %v97) {broadcast_dimensions = array<i64: 2>} : (tensor<128xf32>, tensor<3xi64>) -> tensor<7x?x128xf32>
    %v99 = "stablehlo.add"(%v91, %v98) : (tensor<7x?x128xf32>, tensor<7x?x128xf32>) -> tensor<7x?x128xf32>
    %v100 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v101 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v102 = "stablehlo.reshape"(%v101) : (tensor<i64>) -> tensor<1xi64>
    %v103 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v104 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v105 = "stablehlo.reshape"(%v104) : (tensor<i64>) -> tensor<1xi64>
    %v106 = "stablehlo.concatenate"(%v102, %v103, %v105) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v107 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v108 = "stablehlo.real_dynamic_slice"(%v99, %v100, %v106, %v107) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v109 = "stablehlo.constant"() {value = dense<[1, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v110 = "stablehlo.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %v111 = "stablehlo.reshape"(%v110) : (tensor<i64>) -> tensor<1xi64>
    %v112 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v113 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v114 = "stablehlo.reshape"(%v113) : (tensor<i64>) -> tensor<1xi64>
    %v115 = "stablehlo.concatenate"(%v111, %v112, %v114) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v116 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v117 = "stablehlo.real_dynamic_slice"(%v99, %v109, %v115, %v116) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v118 = "stablehlo.constant"() {value = dense<[2, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v119 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v120 = "stablehlo.reshape"(%v119) : (tensor<i64>) -> tensor<1xi64>
    %v121 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v122 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v123 = "stablehlo.reshape"(%v122) : (tensor<i64>) -> tensor<1xi64>
    %v124 = "stablehlo.concatenate"(%v120, %v121, %v123) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v125 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v126 = "stablehlo.real_dynamic_slice"(%v99, %v118, %v124, %v125) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v127 = "stablehlo.constant"() {value = dense<[3, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v128 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v129 = "stablehlo.reshape"(%v128) : (tensor<i64>) -> tensor<1xi64>
    %v130 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v131 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v132 = "stablehlo.reshape"(%v131) : (tensor<i64>) -> tensor<1xi64>
    %v133 = "stablehlo.concatenate"(%v129, %v130, %v132) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v134 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v135 = "stablehlo.real_dynamic_slice"(%v99, %v127, %v133, %v134) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v136 = "stablehlo.constant"() {value = dense<[4, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v137 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v138 = "stablehlo.reshape"(%v137) : (tensor<i64>) -> tensor<1xi64>
    %v139 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v140 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v141 = "stablehlo.reshape"(%v140) : (tensor<i64>) -> tensor<1xi64>
    %v142 = "stablehlo.concatenate"(%v138, %v139, %v141) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v143 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v144 = "stablehlo.real_dynamic_slice"(%v99, %v136, %v142, %v143) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v145 = "stablehlo.constant"() {value = dense<[5, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v146 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v147 = "stablehlo.reshape"(%v146) : (tensor<i64>) -> tensor<1xi64>
    %v148 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v149 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v150 = "stablehlo.reshape"(%v149) : (tensor<i64>) -> tensor<1xi64>
    %v151 = "stablehlo.concatenate"(%v147, %v148, %v150) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v152 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v153 = "stablehlo.real_dynamic_slice"(%v99, %v145, %v151, %v152) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v154 = "stablehlo.constant"() {value = dense<[6, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v155 = "stablehlo.constant"() {value = dense<7> : tensor<i64>} : () -> tensor<i64>
    %v156 = "stablehlo.reshape"(%v155) : (tensor<i64>) -> tensor<1xi64>
    %v157 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v158 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v159 = "stablehlo.reshape"(%v158) : (tensor<i64>) -> tensor<1xi64>
    %v160 = "stablehlo.concatenate"(%v156, %v157, %v159) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v161 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v162 = "stablehlo.real_dynamic_slice"(%v99, %v154, %v160, %v161) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v163 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v164 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v165 = "stablehlo.reshape"(%v164) : (tensor<i64>) -> tensor<1xi64>
    %v166 = "stablehlo.concatenate"(%v163, %v165) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v167 = "stablehlo.dynamic_reshape"(%v108, %v166) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v168 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v169 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v170 = "stablehlo.reshape"(%v169) : (tensor<i64>) -> tensor<1xi64>
    %v171 = "stablehlo.concatenate"(%v168, %v170) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v172 = "stablehlo.dynamic_reshape"(%v117, %v171) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v173 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v174 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v175 = "stablehlo.reshape"(%v174) : (tensor<i64>) -> tensor<1xi64>
    %v176 = "stablehlo.concatenate"(%v173, %v175) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v177 = "stablehlo.dynamic_reshape"(%v126, %v176) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v178 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v179 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v180 = "stablehlo.reshape"(%v179) : (tensor<i64>) -> tensor<1xi64>
    %v181 = "stablehlo.concatenate"(%v178, %v180) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v182 = "stablehlo.dynamic_reshape"(%v135, %v181) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v183 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v184 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v185 = "stablehlo.reshape"(%v184) : (tensor<i64>) -> tensor<1xi64>
    %v186 = "stablehlo.concatenate"(%v183, %v185) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v187 = "stablehlo.dynamic_reshape"(%v144, %v186) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v188 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v189 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v190 = "stablehlo.reshape"(%v189) : (tensor<i64>) -> tensor<1xi64>
    %v191 = "stablehlo.concatenate"(%v188, %v190) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v192 = "stablehlo.dynamic_reshape"(%v153, %v191) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v193 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v194 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v195 = "stablehlo.reshape"(%v194) : (tensor<i64>) -> tensor<1xi64>
    %v196 = "stablehlo.concatenate"(%v193, %v195) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v197 = "stablehlo.dynamic_reshape"(%v162, %v196) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v198 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v199 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v200 = "stablehlo.reshape"(%v199) : (tensor<i64>) -> tensor<1xi64>
    %v201 = "stablehlo.concatenate"(%v198, %v200) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v202 = "stablehlo.dynamic_reshape"(%v81, %v201) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v203 = "stablehlo.transpose"(%weight_hh_l0) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v204 = "stablehlo.dot_general"(%v202, %v203) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v205 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v206 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v207 = "stablehlo.reshape"(%v206) : (tensor<i64>) -> tensor<1xi64>
    %v208 = "stablehlo.concatenate"(%v205, %v207) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v209 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l0, %v208) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v210 = "stablehlo.add"(%v204, %v209) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v211 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v212 = "stablehlo.reshape"(%v211) : (tensor<i64>) -> tensor<1xi64>
    %v213 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v214 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v215 = "stablehlo.reshape"(%v214) : (tensor<i64>) -> tensor<1xi64>
    %v216 = "stablehlo.concatenate"(%v212, %v213, %v215) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v217 = "stablehlo.dynamic_reshape"(%v210, %v216) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v218 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v219 = "stablehlo.reshape"(%v218) : (tensor<i64>) -> tensor<1xi64>
    %v220 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v221 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v222 = "stablehlo.reshape"(%v221) : (tensor<i64>) -> tensor<1xi64>
    %v223 = "stablehlo.concatenate"(%v219, %v220, %v222) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v224 = "stablehlo.dynamic_broadcast_in_dim"(%v167, %v223) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v225 = "stablehlo.add"(%v217, %v224) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v226 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v227 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v228 = "stablehlo.reshape"(%v227) : (tensor<i64>) -> tensor<1xi64>
    %v229 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v230 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v231 = "stablehlo.reshape"(%v230) : (tensor<i64>) -> tensor<1xi64>
    %v232 = "stablehlo.concatenate"(%v228, %v229, %v231) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v233 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v234 = "stablehlo.real_dynamic_slice"(%v225, %v226, %v232, %v233) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v235 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v236 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v237 = "stablehlo.reshape"(%v236) : (tensor<i64>) -> tensor<1xi64>
    %v238 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v239 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v240 = "stablehlo.reshape"(%v239) : (tensor<i64>) -> tensor<1xi64>
    %v241 = "stablehlo.concatenate"(%v237, %v238, %v240) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v242 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v243 = "stablehlo.real_dynamic_slice"(%v225, %v235, %v241, %v242) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v244 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v245 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v246 = "stablehlo.reshape"(%v245) : (tensor<i64>) -> tensor<1xi64>
    %v247 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v248 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v249 = "stablehlo.reshape"(%v248) : (tensor<i64>) -> tensor<1xi64>
    %v250 = "stablehlo.concatenate"(%v246, %v247, %v249) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v251 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v252 = "stablehlo.real_dynamic_slice"(%v225, %v244, %v250, %v251) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v253 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v254 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v255 = "stablehlo.reshape"(%v254) : (tensor<i64>) -> tensor<1xi64>
    %v256 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v257 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v258 = "stablehlo.reshape"(%v257) : (tensor<i64>) -> tensor<1xi64>
    %v259 = "stablehlo.concatenate"(%v255, %v256, %v258) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v260 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v261 = "stablehlo.real_dynamic_slice"(%v225, %v253, %v259, %v260) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v262 = "stablehlo.logistic"(%v234) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v263 = "stablehlo.logistic"(%v243) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v264 = "stablehlo.tanh"(%v252) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v265 = "stablehlo.logistic"(%v261) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v266 = "stablehlo.multiply"(%v263, %v88) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v267 = "stablehlo.multiply"(%v262, %v264) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v268 = "stablehlo.add"(%v266, %v267) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v269 = "stablehlo.tanh"(%v268) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v270 = "stablehlo.multiply"(%v265, %v269) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v271 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v272 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v273 = "stablehlo.reshape"(%v272) : (tensor<i64>) -> tensor<1xi64>
    %v274 = "stablehlo.concatenate"(%v271, %v273) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v275 = "stablehlo.dynamic_reshape"(%v270, %v274) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v276 = "stablehlo.transpose"(%weight_hh_l0) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v277 = "stablehlo.dot_general"(%v275, %v276) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v278 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v279 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v280 = "stablehlo.reshape"(%v279) : (tensor<i64>) -> tensor<1xi64>
    %v281 = "stablehlo.concatenate"(%v278, %v280) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v282 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l0, %v281) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v283 = "stablehlo.add"(%v277, %v282) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v284 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v285 = "stablehlo.reshape"(%v284) : (tensor<i64>) -> tensor<1xi64>
    %v286 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v287 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v288 = "stablehlo.reshape"(%v287) : (tensor<i64>) -> tensor<1xi64>
    %v289 = "stablehlo.concatenate"(%v285, %v286, %v288) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v290 = "stablehlo.dynamic_reshape"(%v283, %v289) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v291 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v292 = "stablehlo.reshape"(%v291) : (tensor<i64>) -> tensor<1xi64>
    %v293 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v294 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v295 = "stablehlo.reshape"(%v294) : (tensor<i64>) -> tensor<1xi64>
    %v296 = "stablehlo.concatenate"(%v292, %v293, %v295) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v297 = "stablehlo.dynamic_broadcast_in_dim"(%v172, %v296) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v298 = "stablehlo.add"(%v290, %v297) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v299 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v300 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v301 = "stablehlo.reshape"(%v300) : (tensor<i64>) -> tensor<1xi64>
    %v302 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v303 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v304 = "stablehlo.reshape"(%v303) : (tensor<i64>) -> tensor<1xi64>
    %v305 = "stablehlo.concatenate"(%v301, %v302, %v304) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v306 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v307 = "stablehlo.real_dynamic_slice"(%v298, %v299, %v305, %v306) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v308 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v309 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v310 = "stablehlo.reshape"(%v309) : (tensor<i64>) -> tensor<1xi64>
    %v311 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v312 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v313 = "stablehlo.reshape"(%v312) : (tensor<i64>) -> tensor<1xi64>
    %v314 = "stablehlo.concatenate"(%v310, %v311, %v313) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v315 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v316 = "stablehlo.real_dynamic_slice"(%v298, %v308, %v314, %v315) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v317 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v318 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v319 = "stablehlo.reshape"(%v318) : (tensor<i64>) -> tensor<1xi64>
    %v320 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v321 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v322 = "stablehlo.reshape"(%v321) : (tensor<i64>) -> tensor<1xi64>
    %v323 = "stablehlo.concatenate"(%v319, %v320, %v322) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v324 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v325 = "stablehlo.real_dynamic_slice"(%v298, %v317, %v323, %v324) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v326 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v327 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v328 = "stablehlo.reshape"(%v327) : (tensor<i64>) -> tensor<1xi64>
    %v329 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v330 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v331 = "stablehlo.reshape"(%v330) : (tensor<i64>) -> tensor<1xi64>
    %v332 = "stablehlo.concatenate"(%v328, %v329, %v331) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v333 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v334 = "stablehlo.real_dynamic_slice"(%v298, %v326, %v332, %v333) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v335 = "stablehlo.logistic"(%v307) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v336 = "stablehlo.logistic"(%v316) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v337 = "stablehlo.tanh"(%v325) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v338 = "stablehlo.logistic"(%v334) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v339 = "stablehlo.multiply"(%v336, %v268) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v340 = "stablehlo.multiply"(%v335, %v337) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v341 = "stablehlo.add"(%v339, %v340) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v342 = "stablehlo.tanh"(%v341) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v343 = "stablehlo.multiply"(%v338, %v342) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v344 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v345 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v346 = "stablehlo.reshape"(%v345) : (tensor<i64>) -> tensor<1xi64>
    %v347 = "stablehlo.concatenate"(%v344, %v346) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v348 = "stablehlo.dynamic_reshape"(%v343, %v347) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v349 = "stablehlo.transpose"(%weight_hh_l0) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v350 = "stablehlo.dot_general"(%v348, %v349) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v351 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v352 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v353 = "stablehlo.reshape"(%v352) : (tensor<i64>) -> tensor<1xi64>
    %v354 = "stablehlo.concatenate"(%v351, %v353) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v355 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l0, %v354) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v356 = "stablehlo.add"(%v350, %v355) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v357 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v358 = "stablehlo.reshape"(%v357) : (tensor<i64>) -> tensor<1xi64>
    %v359 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v360 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v361 = "stablehlo.reshape"(%v360) : (tensor<i64>) -> tensor<1xi64>
    %v362 = "stablehlo.concatenate"(%v358, %v359, %v361) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v363 = "stablehlo.dynamic_reshape"(%v356, %v362) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v364 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v365 = "stablehlo.reshape"(%v364) : (tensor<i64>) -> tensor<1xi64>
    %v366 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v367 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v368 = "stablehlo.reshape"(%v367) : (tensor<i64>) -> tensor<1xi64>
    %v369 = "stablehlo.concatenate"(%v365, %v366, %v368) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v370 = "stablehlo.dynamic_broadcast_in_dim"(%v177, %v369) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v371 = "stablehlo.add"(%v363, %v370) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v372 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v373 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v374 = "stablehlo.reshape"(%v373) : (tensor<i64>) -> tensor<1xi64>
    %v375 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v376 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v377 = "stablehlo.reshape"(%v376) : (tensor<i64>) -> tensor<1xi64>
    %v378 = "stablehlo.concatenate"(%v374, %v375, %v377) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v379 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v380 = "stablehlo.real_dynamic_slice"(%v371, %v372, %v378, %v379) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v381 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v382 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v383 = "stablehlo.reshape"(%v382) : (tensor<i64>) -> tensor<1xi64>
    %v384 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v385 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v386 = "stablehlo.reshape"(%v385) : (tensor<i64>) -> tensor<1xi64>
    %v387 = "stablehlo.concatenate"(%v383, %v384, %v386) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v388 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v389 = "stablehlo.real_dynamic_slice"(%v371, %v381, %v387, %v388) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v390 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v391 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v392 = "stablehlo.reshape"(%v391) : (tensor<i64>) -> tensor<1xi64>
    %v393 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v394 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v395 = "stablehlo.reshape"(%v394) : (tensor<i64>) -> tensor<1xi64>
    %v396 = "stablehlo.concatenate"(%v392, %v393, %v395) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v397 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v398 = "stablehlo.real_dynamic_slice"(%v371, %v390, %v396, %v397) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v399 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v400 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v401 = "stablehlo.reshape"(%v400) : (tensor<i64>) -> tensor<1xi64>
    %v402 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v403 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v404 = "stablehlo.reshape"(%v403) : (tensor<i64>) -> tensor<1xi64>
    %v405 = "stablehlo.concatenate"(%v401, %v402, %v404) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v406 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v407 = "stablehlo.real_dynamic_slice"(%v371, %v399, %v405, %v406) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v408 = "stablehlo.logistic"(%v380) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v409 = "stablehlo.logistic"(%v389) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v410 = "stablehlo.tanh"(%v398) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v411 = "stablehlo.logistic"(%v407) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v412 = "stablehlo.multiply"(%v409, %v341) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v413 = "stablehlo.multiply"(%v408, %v410) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v414 = "stablehlo.add"(%v412, %v413) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v415 = "stablehlo.tanh"(%v414) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v416 = "stablehlo.multiply"(%v411, %v415) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v417 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v418 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v419 = "stablehlo.reshape"(%v418) : (tensor<i64>) -> tensor<1xi64>
    %v420 = "stablehlo.concatenate"(%v417, %v419) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v421 = "stablehlo.dynamic_reshape"(%v416, %v420) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v422 = "stablehlo.transpose"(%weight_hh_l0) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v423 = "stablehlo.dot_general"(%v421, %v422) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v424 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v425 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v426 = "stablehlo.reshape"(%v425) : (tensor<i64>) -> tensor<1xi64>
    %v427 = "stablehlo.concatenate"(%v424, %v426) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v428 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l0, %v427) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v429 = "stablehlo.add"(%v423, %v428) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v430 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v431 = "stablehlo.reshape"(%v430) : (tensor<i64>) -> tensor<1xi64>
    %v432 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v433 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v434 = "stablehlo.reshape"(%v433) : (tensor<i64>) -> tensor<1xi64>
    %v435 = "stablehlo.concatenate"(%v431, %v432, %v434) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v436 = "stablehlo.dynamic_reshape"(%v429, %v435) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v437 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v438 = "stablehlo.reshape"(%v437) : (tensor<i64>) -> tensor<1xi64>
    %v439 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v440 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v441 = "stablehlo.reshape"(%v440) : (tensor<i64>) -> tensor<1xi64>
    %v442 = "stablehlo.concatenate"(%v438, %v439, %v441) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v443 = "stablehlo.dynamic_broadcast_in_dim"(%v182, %v442) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v444 = "stablehlo.add"(%v436, %v443) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v445 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v446 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v447 = "stablehlo.reshape"(%v446) : (tensor<i64>) -> tensor<1xi64>
    %v448 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v449 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v450 = "stablehlo.reshape"(%v449) : (tensor<i64>) -> tensor<1xi64>
    %v451 = "stablehlo.concatenate"(%v447, %v448, %v450) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v452 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v453 = "stablehlo.real_dynamic_slice"(%v444, %v445, %v451, %v452) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v454 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v455 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v456 = "stablehlo.reshape"(%v455) : (tensor<i64>) -> tensor<1xi64>
    %v457 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v458 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v459 = "stablehlo.reshape"(%v458) : (tensor<i64>) -> tensor<1xi64>
    %v460 = "stablehlo.concatenate"(%v456, %v457, %v459) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v461 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v462 = "stablehlo.real_dynamic_slice"(%v444, %v454, %v460, %v461) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v463 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v464 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v465 = "stablehlo.reshape"(%v464) : (tensor<i64>) -> tensor<1xi64>
    %v466 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v467 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v468 = "stablehlo.reshape"(%v467) : (tensor<i64>) -> tensor<1xi64>
    %v469 = "stablehlo.concatenate"(%v465, %v466, %v468) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v470 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v471 = "stablehlo.real_dynamic_slice"(%v444, %v463, %v469, %v470) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v472 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v473 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v474 = "stablehlo.reshape"(%v473) : (tensor<i64>) -> tensor<1xi64>
    %v475 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v476 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v477 = "stablehlo.reshape"(%v476) : (tensor<i64>) -> tensor<1xi64>
    %v478 = "stablehlo.concatenate"(%v474, %v475, %v477) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v479 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v480 = "stablehlo.real_dynamic_slice"(%v444, %v472, %v478, %v479) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v481 = "stablehlo.logistic"(%v453) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v482 = "stablehlo.logistic"(%v462) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v483 = "stablehlo.tanh"(%v471) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v484 = "stablehlo.logistic"(%v480) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v485 = "stablehlo.multiply"(%v482, %v414) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v486 = "stablehlo.multiply"(%v481, %v483) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v487 = "stablehlo.add"(%v485, %v486) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v488 = "stablehlo.tanh"(%v487) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v489 = "stablehlo.multiply"(%v484, %v488) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v490 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v491 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v492 = "stablehlo.reshape"(%v491) : (tensor<i64>) -> tensor<1xi64>
    %v493 = "stablehlo.concatenate"(%v490, %v492) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v494 = "stablehlo.dynamic_reshape"(%v489, %v493) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v495 = "stablehlo.transpose"(%weight_hh_l0) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v496 = "stablehlo.dot_general"(%v494, %v495) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v497 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v498 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v499 = "stablehlo.reshape"(%v498) : (tensor<i64>) -> tensor<1xi64>
    %v500 = "stablehlo.concatenate"(%v497, %v499) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v501 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l0, %v500) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v502 = "stablehlo.add"(%v496, %v501) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v503 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v504 = "stablehlo.reshape"(%v503) : (tensor<i64>) -> tensor<1xi64>
    %v505 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v506 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v507 = "stablehlo.reshape"(%v506) : (tensor<i64>) -> tensor<1xi64>
    %v508 = "stablehlo.concatenate"(%v504, %v505, %v507) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v509 = "stablehlo.dynamic_reshape"(%v502, %v508) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v510 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v511 = "stablehlo.reshape"(%v510) : (tensor<i64>) -> tensor<1xi64>
    %v512 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v513 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v514 = "stablehlo.reshape"(%v513) : (tensor<i64>) -> tensor<1xi64>
    %v515 = "stablehlo.concatenate"(%v511, %v512, %v514) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v516 = "stablehlo.dynamic_broadcast_in_dim"(%v187, %v515) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v517 = "stablehlo.add"(%v509, %v516) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v518 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v519 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v520 = "stablehlo.reshape"(%v519) : (tensor<i64>) -> tensor<1xi64>
    %v521 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v522 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v523 = "stablehlo.reshape"(%v522) : (tensor<i64>) -> tensor<1xi64>
    %v524 = "stablehlo.concatenate"(%v520, %v521, %v523) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v525 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v526 = "stablehlo.real_dynamic_slice"(%v517, %v518, %v524, %v525) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v527 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v528 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v529 = "stablehlo.reshape"(%v528) : (tensor<i64>) -> tensor<1xi64>
    %v530 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v531 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v532 = "stablehlo.reshape"(%v531) : (tensor<i64>) -> tensor<1xi64>
    %v533 = "stablehlo.concatenate"(%v529, %v530, %v532) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v534 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v535 = "stablehlo.real_dynamic_slice"(%v517, %v527, %v533, %v534) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v536 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v537 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v538 = "stablehlo.reshape"(%v537) : (tensor<i64>) -> tensor<1xi64>
    %v539 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v540 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v541 = "stablehlo.reshape"(%v540) : (tensor<i64>) -> tensor<1xi64>
    %v542 = "stablehlo.concatenate"(%v538, %v539, %v541) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v543 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v544 = "stablehlo.real_dynamic_slice"(%v517, %v536, %v542, %v543) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v545 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v546 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v547 = "stablehlo.reshape"(%v546) : (tensor<i64>) -> tensor<1xi64>
    %v548 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v549 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v550 = "stablehlo.reshape"(%v549) : (tensor<i64>) -> tensor<1xi64>
    %v551 = "stablehlo.concatenate"(%v547, %v548, %v550) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v552 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v553 = "stablehlo.real_dynamic_slice"(%v517, %v545, %v551, %v552) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v554 = "stablehlo.logistic"(%v526) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v555 = "stablehlo.logistic"(%v535) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v556 = "stablehlo.tanh"(%v544) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v557 = "stablehlo.logistic"(%v553) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v558 = "stablehlo.multiply"(%v555, %v487) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v559 = "stablehlo.multiply"(%v554, %v556) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v560 = "stablehlo.add"(%v558, %v559) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v561 = "stablehlo.tanh"(%v560) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v562 = "stablehlo.multiply"(%v557, %v561) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v563 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v564 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v565 = "stablehlo.reshape"(%v564) : (tensor<i64>) -> tensor<1xi64>
    %v566 = "stablehlo.concatenate"(%v563, %v565) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v567 = "stablehlo.dynamic_reshape"(%v562, %v566) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v568 = "stablehlo.transpose"(%weight_hh_l0) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v569 = "stablehlo.dot_general"(%v567, %v568) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v570 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v571 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v572 = "stablehlo.reshape"(%v571) : (tensor<i64>) -> tensor<1xi64>
    %v573 = "stablehlo.concatenate"(%v570, %v572) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v574 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l0, %v573) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v575 = "stablehlo.add"(%v569, %v574) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v576 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v577 = "stablehlo.reshape"(%v576) : (tensor<i64>) -> tensor<1xi64>
    %v578 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v579 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v580 = "stablehlo.reshape"(%v579) : (tensor<i64>) -> tensor<1xi64>
    %v581 = "stablehlo.concatenate"(%v577, %v578, %v580) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v582 = "stablehlo.dynamic_reshape"(%v575, %v581) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v583 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v584 = "stablehlo.reshape"(%v583) : (tensor<i64>) -> tensor<1xi64>
    %v585 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v586 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v587 = "stablehlo.reshape"(%v586) : (tensor<i64>) -> tensor<1xi64>
    %v588 = "stablehlo.concatenate"(%v584, %v585, %v587) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v589 = "stablehlo.dynamic_broadcast_in_dim"(%v192, %v588) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v590 = "stablehlo.add"(%v582, %v589) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v591 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v592 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v593 = "stablehlo.reshape"(%v592) : (tensor<i64>) -> tensor<1xi64>
    %v594 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v595 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v596 = "stablehlo.reshape"(%v595) : (tensor<i64>) -> tensor<1xi64>
    %v597 = "stablehlo.concatenate"(%v593, %v594, %v596) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v598 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v599 = "stablehlo.real_dynamic_slice"(%v590, %v591, %v597, %v598) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v600 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v601 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v602 = "stablehlo.reshape"(%v601) : (tensor<i64>) -> tensor<1xi64>
    %v603 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v604 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v605 = "stablehlo.reshape"(%v604) : (tensor<i64>) -> tensor<1xi64>
    %v606 = "stablehlo.concatenate"(%v602, %v603, %v605) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v607 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v608 = "stablehlo.real_dynamic_slice"(%v590, %v600, %v606, %v607) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v609 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v610 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v611 = "stablehlo.reshape"(%v610) : (tensor<i64>) -> tensor<1xi64>
    %v612 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v613 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v614 = "stablehlo.reshape"(%v613) : (tensor<i64>) -> tensor<1xi64>
    %v615 = "stablehlo.concatenate"(%v611, %v612, %v614) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v616 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v617 = "stablehlo.real_dynamic_slice"(%v590, %v609, %v615, %v616) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v618 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v619 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v620 = "stablehlo.reshape"(%v619) : (tensor<i64>) -> tensor<1xi64>
    %v621 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v622 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v623 = "stablehlo.reshape"(%v622) : (tensor<i64>) -> tensor<1xi64>
    %v624 = "stablehlo.concatenate"(%v620, %v621, %v623) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v625 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v626 = "stablehlo.real_dynamic_slice"(%v590, %v618, %v624, %v625) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v627 = "stablehlo.logistic"(%v599) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v628 = "stablehlo.logistic"(%v608) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v629 = "stablehlo.tanh"(%v617) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v630 = "stablehlo.logistic"(%v626) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v631 = "stablehlo.multiply"(%v628, %v560) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v632 = "stablehlo.multiply"(%v627, %v629) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v633 = "stablehlo.add"(%v631, %v632) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v634 = "stablehlo.tanh"(%v633) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v635 = "stablehlo.multiply"(%v630, %v634) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v636 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v637 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v638 = "stablehlo.reshape"(%v637) : (tensor<i64>) -> tensor<1xi64>
    %v639 = "stablehlo.concatenate"(%v636, %v638) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v640 = "stablehlo.dynamic_reshape"(%v635, %v639) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v641 = "stablehlo.transpose"(%weight_hh_l0) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v642 = "stablehlo.dot_general"(%v640, %v641) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v643 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v644 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v645 = "stablehlo.reshape"(%v644) : (tensor<i64>) -> tensor<1xi64>
    %v646 = "stablehlo.concatenate"(%v643, %v645) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v647 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l0, %v646) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v648 = "stablehlo.add"(%v642, %v647) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v649 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v650 = "stablehlo.reshape"(%v649) : (tensor<i64>) -> tensor<1xi64>
    %v651 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v652 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v653 = "stablehlo.reshape"(%v652) : (tensor<i64>) -> tensor<1xi64>
    %v654 = "stablehlo.concatenate"(%v650, %v651, %v653) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v655 = "stablehlo.dynamic_reshape"(%v648, %v654) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v656 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v657 = "stablehlo.reshape"(%v656) : (tensor<i64>) -> tensor<1xi64>
    %v658 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v659 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v660 = "stablehlo.reshape"(%v659) : (tensor<i64>) -> tensor<1xi64>
    %v661 = "stablehlo.concatenate"(%v657, %v658, %v660) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v662 = "stablehlo.dynamic_broadcast_in_dim"(%v197, %v661) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v663 = "stablehlo.add"(%v655, %v662) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v664 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v665 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v666 = "stablehlo.reshape"(%v665) : (tensor<i64>) -> tensor<1xi64>
    %v667 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v668 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v669 = "stablehlo.reshape"(%v668) : (tensor<i64>) -> tensor<1xi64>
    %v670 = "stablehlo.concatenate"(%v666, %v667, %v669) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v671 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v672 = "stablehlo.real_dynamic_slice"(%v663, %v664, %v670, %v671) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v673 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v674 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v675 = "stablehlo.reshape"(%v674) : (tensor<i64>) -> tensor<1xi64>
    %v676 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v677 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v678 = "stablehlo.reshape"(%v677) : (tensor<i64>) -> tensor<1xi64>
    %v679 = "stablehlo.concatenate"(%v675, %v676, %v678) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v680 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v681 = "stablehlo.real_dynamic_slice"(%v663, %v673, %v679, %v680) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v682 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v683 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v684 = "stablehlo.reshape"(%v683) : (tensor<i64>) -> tensor<1xi64>
    %v685 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v686 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v687 = "stablehlo.reshape"(%v686) : (tensor<i64>) -> tensor<1xi64>
    %v688 = "stablehlo.concatenate"(%v684, %v685, %v687) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v689 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v690 = "stablehlo.real_dynamic_slice"(%v663, %v682, %v688, %v689) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v691 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v692 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v693 = "stablehlo.reshape"(%v692) : (tensor<i64>) -> tensor<1xi64>
    %v694 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v695 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v696 = "stablehlo.reshape"(%v695) : (tensor<i64>) -> tensor<1xi64>
    %v697 = "stablehlo.concatenate"(%v693, %v694, %v696) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v698 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v699 = "stablehlo.real_dynamic_slice"(%v663, %v691, %v697, %v698) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v700 = "stablehlo.logistic"(%v672) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v701 = "stablehlo.logistic"(%v681) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v702 = "stablehlo.tanh"(%v690) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v703 = "stablehlo.logistic"(%v699) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v704 = "stablehlo.multiply"(%v701, %v633) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v705 = "stablehlo.multiply"(%v700, %v702) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v706 = "stablehlo.add"(%v704, %v705) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v707 = "stablehlo.tanh"(%v706) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v708 = "stablehlo.multiply"(%v703, %v707) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v709 = "stablehlo.concatenate"(%v270, %v343, %v416, %v489, %v562, %v635, %v708) {dimension = 0 : i64} : (tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<7x?x32xf32>
    %v710 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v711 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v712 = "stablehlo.reshape"(%v711) : (tensor<i64>) -> tensor<1xi64>
    %v713 = "stablehlo.concatenate"(%v710, %v712) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v714 = "stablehlo.dynamic_reshape"(%v708, %v713) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v715 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v716 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v717 = "stablehlo.reshape"(%v716) : (tensor<i64>) -> tensor<1xi64>
    %v718 = "stablehlo.concatenate"(%v715, %v717) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v719 = "stablehlo.dynamic_reshape"(%v706, %v718) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v720 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v721 = "stablehlo.reshape"(%v720) : (tensor<i64>) -> tensor<1xi64>
    %v722 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v723 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v724 = "stablehlo.reshape"(%v723) : (tensor<i64>) -> tensor<1xi64>
    %v725 = "stablehlo.concatenate"(%v721, %v722, %v724) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v726 = "stablehlo.dynamic_reshape"(%v45, %v725) : (tensor<?x32xf32>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v727 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v728 = "stablehlo.reshape"(%v727) : (tensor<i64>) -> tensor<1xi64>
    %v729 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v730 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v731 = "stablehlo.reshape"(%v730) : (tensor<i64>) -> tensor<1xi64>
    %v732 = "stablehlo.concatenate"(%v728, %v729, %v731) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v733 = "stablehlo.dynamic_reshape"(%v73, %v732) : (tensor<?x32xf32>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v734 = "stablehlo.constant"() {value = dense<7> : tensor<i64>} : () -> tensor<i64>
    %v735 = "stablehlo.multiply"(%v734, %v4) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %v736 = "stablehlo.reshape"(%v735) : (tensor<i64>) -> tensor<1xi64>
    %v737 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v738 = "stablehlo.reshape"(%v737) : (tensor<i64>) -> tensor<1xi64>
    %v739 = "stablehlo.concatenate"(%v736, %v738) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v740 = "stablehlo.dynamic_reshape"(%v709, %v739) : (tensor<7x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v741 = "stablehlo.transpose"(%weight_ih_l1) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v742 = "stablehlo.dot_general"(%v740, %v741) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v743 = "stablehlo.reshape"(%v735) : (tensor<i64>) -> tensor<1xi64>
    %v744 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v745 = "stablehlo.reshape"(%v744) : (tensor<i64>) -> tensor<1xi64>
    %v746 = "stablehlo.concatenate"(%v743, %v745) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v747 = "stablehlo.dynamic_broadcast_in_dim"(%bias_ih_l1, %v746) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v748 = "stablehlo.add"(%v742, %v747) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v749 = "stablehlo.constant"() {value = dense<7> : tensor<i64>} : () -> tensor<i64>
    %v750 = "stablehlo.reshape"(%v749) : (tensor<i64>) -> tensor<1xi64>
    %v751 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v752 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v753 = "stablehlo.reshape"(%v752) : (tensor<i64>) -> tensor<1xi64>
    %v754 = "stablehlo.concatenate"(%v750, %v751, %v753) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v755 = "stablehlo.dynamic_reshape"(%v748, %v754) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<7x?x128xf32>
    %v756 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v757 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v758 = "stablehlo.reshape"(%v757) : (tensor<i64>) -> tensor<1xi64>
    %v759 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v760 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v761 = "stablehlo.reshape"(%v760) : (tensor<i64>) -> tensor<1xi64>
    %v762 = "stablehlo.concatenate"(%v758, %v759, %v761) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v763 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v764 = "stablehlo.real_dynamic_slice"(%v755, %v756, %v762, %v763) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v765 = "stablehlo.constant"() {value = dense<[1, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v766 = "stablehlo.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %v767 = "stablehlo.reshape"(%v766) : (tensor<i64>) -> tensor<1xi64>
    %v768 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v769 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v770 = "stablehlo.reshape"(%v769) : (tensor<i64>) -> tensor<1xi64>
    %v771 = "stablehlo.concatenate"(%v767, %v768, %v770) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v772 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v773 = "stablehlo.real_dynamic_slice"(%v755, %v765, %v771, %v772) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v774 = "stablehlo.constant"() {value = dense<[2, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v775 = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %v776 = "stablehlo.reshape"(%v775) : (tensor<i64>) -> tensor<1xi64>
    %v777 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v778 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v779 = "stablehlo.reshape"(%v778) : (tensor<i64>) -> tensor<1xi64>
    %v780 = "stablehlo.concatenate"(%v776, %v777, %v779) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v781 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v782 = "stablehlo.real_dynamic_slice"(%v755, %v774, %v780, %v781) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v783 = "stablehlo.constant"() {value = dense<[3, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v784 = "stablehlo.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
    %v785 = "stablehlo.reshape"(%v784) : (tensor<i64>) -> tensor<1xi64>
    %v786 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v787 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v788 = "stablehlo.reshape"(%v787) : (tensor<i64>) -> tensor<1xi64>
    %v789 = "stablehlo.concatenate"(%v785, %v786, %v788) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v790 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v791 = "stablehlo.real_dynamic_slice"(%v755, %v783, %v789, %v790) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v792 = "stablehlo.constant"() {value = dense<[4, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v793 = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
    %v794 = "stablehlo.reshape"(%v793) : (tensor<i64>) -> tensor<1xi64>
    %v795 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v796 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v797 = "stablehlo.reshape"(%v796) : (tensor<i64>) -> tensor<1xi64>
    %v798 = "stablehlo.concatenate"(%v794, %v795, %v797) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v799 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v800 = "stablehlo.real_dynamic_slice"(%v755, %v792, %v798, %v799) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v801 = "stablehlo.constant"() {value = dense<[5, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v802 = "stablehlo.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
    %v803 = "stablehlo.reshape"(%v802) : (tensor<i64>) -> tensor<1xi64>
    %v804 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v805 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v806 = "stablehlo.reshape"(%v805) : (tensor<i64>) -> tensor<1xi64>
    %v807 = "stablehlo.concatenate"(%v803, %v804, %v806) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v808 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v809 = "stablehlo.real_dynamic_slice"(%v755, %v801, %v807, %v808) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v810 = "stablehlo.constant"() {value = dense<[6, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v811 = "stablehlo.constant"() {value = dense<7> : tensor<i64>} : () -> tensor<i64>
    %v812 = "stablehlo.reshape"(%v811) : (tensor<i64>) -> tensor<1xi64>
    %v813 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v814 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v815 = "stablehlo.reshape"(%v814) : (tensor<i64>) -> tensor<1xi64>
    %v816 = "stablehlo.concatenate"(%v812, %v813, %v815) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v817 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v818 = "stablehlo.real_dynamic_slice"(%v755, %v810, %v816, %v817) : (tensor<7x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v819 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v820 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v821 = "stablehlo.reshape"(%v820) : (tensor<i64>) -> tensor<1xi64>
    %v822 = "stablehlo.concatenate"(%v819, %v821) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v823 = "stablehlo.dynamic_reshape"(%v764, %v822) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v824 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v825 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v826 = "stablehlo.reshape"(%v825) : (tensor<i64>) -> tensor<1xi64>
    %v827 = "stablehlo.concatenate"(%v824, %v826) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v828 = "stablehlo.dynamic_reshape"(%v773, %v827) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v829 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v830 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v831 = "stablehlo.reshape"(%v830) : (tensor<i64>) -> tensor<1xi64>
    %v832 = "stablehlo.concatenate"(%v829, %v831) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v833 = "stablehlo.dynamic_reshape"(%v782, %v832) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v834 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v835 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v836 = "stablehlo.reshape"(%v835) : (tensor<i64>) -> tensor<1xi64>
    %v837 = "stablehlo.concatenate"(%v834, %v836) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v838 = "stablehlo.dynamic_reshape"(%v791, %v837) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v839 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v840 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v841 = "stablehlo.reshape"(%v840) : (tensor<i64>) -> tensor<1xi64>
    %v842 = "stablehlo.concatenate"(%v839, %v841) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v843 = "stablehlo.dynamic_reshape"(%v800, %v842) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v844 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v845 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v846 = "stablehlo.reshape"(%v845) : (tensor<i64>) -> tensor<1xi64>
    %v847 = "stablehlo.concatenate"(%v844, %v846) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v848 = "stablehlo.dynamic_reshape"(%v809, %v847) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v849 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v850 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v851 = "stablehlo.reshape"(%v850) : (tensor<i64>) -> tensor<1xi64>
    %v852 = "stablehlo.concatenate"(%v849, %v851) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v853 = "stablehlo.dynamic_reshape"(%v818, %v852) : (tensor<1x?x128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v854 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v855 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v856 = "stablehlo.reshape"(%v855) : (tensor<i64>) -> tensor<1xi64>
    %v857 = "stablehlo.concatenate"(%v854, %v856) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v858 = "stablehlo.dynamic_reshape"(%v726, %v857) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v859 = "stablehlo.transpose"(%weight_hh_l1) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v860 = "stablehlo.dot_general"(%v858, %v859) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v861 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v862 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v863 = "stablehlo.reshape"(%v862) : (tensor<i64>) -> tensor<1xi64>
    %v864 = "stablehlo.concatenate"(%v861, %v863) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v865 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l1, %v864) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v866 = "stablehlo.add"(%v860, %v865) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v867 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v868 = "stablehlo.reshape"(%v867) : (tensor<i64>) -> tensor<1xi64>
    %v869 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v870 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v871 = "stablehlo.reshape"(%v870) : (tensor<i64>) -> tensor<1xi64>
    %v872 = "stablehlo.concatenate"(%v868, %v869, %v871) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v873 = "stablehlo.dynamic_reshape"(%v866, %v872) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v874 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v875 = "stablehlo.reshape"(%v874) : (tensor<i64>) -> tensor<1xi64>
    %v876 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v877 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v878 = "stablehlo.reshape"(%v877) : (tensor<i64>) -> tensor<1xi64>
    %v879 = "stablehlo.concatenate"(%v875, %v876, %v878) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v880 = "stablehlo.dynamic_broadcast_in_dim"(%v823, %v879) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v881 = "stablehlo.add"(%v873, %v880) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v882 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v883 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v884 = "stablehlo.reshape"(%v883) : (tensor<i64>) -> tensor<1xi64>
    %v885 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v886 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v887 = "stablehlo.reshape"(%v886) : (tensor<i64>) -> tensor<1xi64>
    %v888 = "stablehlo.concatenate"(%v884, %v885, %v887) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v889 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v890 = "stablehlo.real_dynamic_slice"(%v881, %v882, %v888, %v889) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v891 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v892 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v893 = "stablehlo.reshape"(%v892) : (tensor<i64>) -> tensor<1xi64>
    %v894 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v895 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v896 = "stablehlo.reshape"(%v895) : (tensor<i64>) -> tensor<1xi64>
    %v897 = "stablehlo.concatenate"(%v893, %v894, %v896) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v898 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v899 = "stablehlo.real_dynamic_slice"(%v881, %v891, %v897, %v898) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v900 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v901 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v902 = "stablehlo.reshape"(%v901) : (tensor<i64>) -> tensor<1xi64>
    %v903 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v904 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v905 = "stablehlo.reshape"(%v904) : (tensor<i64>) -> tensor<1xi64>
    %v906 = "stablehlo.concatenate"(%v902, %v903, %v905) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v907 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v908 = "stablehlo.real_dynamic_slice"(%v881, %v900, %v906, %v907) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v909 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v910 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v911 = "stablehlo.reshape"(%v910) : (tensor<i64>) -> tensor<1xi64>
    %v912 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v913 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v914 = "stablehlo.reshape"(%v913) : (tensor<i64>) -> tensor<1xi64>
    %v915 = "stablehlo.concatenate"(%v911, %v912, %v914) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v916 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v917 = "stablehlo.real_dynamic_slice"(%v881, %v909, %v915, %v916) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v918 = "stablehlo.logistic"(%v890) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v919 = "stablehlo.logistic"(%v899) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v920 = "stablehlo.tanh"(%v908) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v921 = "stablehlo.logistic"(%v917) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v922 = "stablehlo.multiply"(%v919, %v733) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v923 = "stablehlo.multiply"(%v918, %v920) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v924 = "stablehlo.add"(%v922, %v923) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v925 = "stablehlo.tanh"(%v924) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v926 = "stablehlo.multiply"(%v921, %v925) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v927 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v928 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v929 = "stablehlo.reshape"(%v928) : (tensor<i64>) -> tensor<1xi64>
    %v930 = "stablehlo.concatenate"(%v927, %v929) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v931 = "stablehlo.dynamic_reshape"(%v926, %v930) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v932 = "stablehlo.transpose"(%weight_hh_l1) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v933 = "stablehlo.dot_general"(%v931, %v932) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v934 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v935 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v936 = "stablehlo.reshape"(%v935) : (tensor<i64>) -> tensor<1xi64>
    %v937 = "stablehlo.concatenate"(%v934, %v936) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v938 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l1, %v937) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v939 = "stablehlo.add"(%v933, %v938) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v940 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v941 = "stablehlo.reshape"(%v940) : (tensor<i64>) -> tensor<1xi64>
    %v942 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v943 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v944 = "stablehlo.reshape"(%v943) : (tensor<i64>) -> tensor<1xi64>
    %v945 = "stablehlo.concatenate"(%v941, %v942, %v944) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v946 = "stablehlo.dynamic_reshape"(%v939, %v945) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v947 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v948 = "stablehlo.reshape"(%v947) : (tensor<i64>) -> tensor<1xi64>
    %v949 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v950 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v951 = "stablehlo.reshape"(%v950) : (tensor<i64>) -> tensor<1xi64>
    %v952 = "stablehlo.concatenate"(%v948, %v949, %v951) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v953 = "stablehlo.dynamic_broadcast_in_dim"(%v828, %v952) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v954 = "stablehlo.add"(%v946, %v953) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v955 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v956 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v957 = "stablehlo.reshape"(%v956) : (tensor<i64>) -> tensor<1xi64>
    %v958 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v959 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v960 = "stablehlo.reshape"(%v959) : (tensor<i64>) -> tensor<1xi64>
    %v961 = "stablehlo.concatenate"(%v957, %v958, %v960) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v962 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v963 = "stablehlo.real_dynamic_slice"(%v954, %v955, %v961, %v962) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v964 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v965 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v966 = "stablehlo.reshape"(%v965) : (tensor<i64>) -> tensor<1xi64>
    %v967 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v968 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v969 = "stablehlo.reshape"(%v968) : (tensor<i64>) -> tensor<1xi64>
    %v970 = "stablehlo.concatenate"(%v966, %v967, %v969) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v971 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v972 = "stablehlo.real_dynamic_slice"(%v954, %v964, %v970, %v971) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v973 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v974 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v975 = "stablehlo.reshape"(%v974) : (tensor<i64>) -> tensor<1xi64>
    %v976 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v977 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v978 = "stablehlo.reshape"(%v977) : (tensor<i64>) -> tensor<1xi64>
    %v979 = "stablehlo.concatenate"(%v975, %v976, %v978) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v980 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v981 = "stablehlo.real_dynamic_slice"(%v954, %v973, %v979, %v980) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v982 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v983 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v984 = "stablehlo.reshape"(%v983) : (tensor<i64>) -> tensor<1xi64>
    %v985 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v986 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v987 = "stablehlo.reshape"(%v986) : (tensor<i64>) -> tensor<1xi64>
    %v988 = "stablehlo.concatenate"(%v984, %v985, %v987) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v989 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v990 = "stablehlo.real_dynamic_slice"(%v954, %v982, %v988, %v989) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v991 = "stablehlo.logistic"(%v963) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v992 = "stablehlo.logistic"(%v972) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v993 = "stablehlo.tanh"(%v981) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v994 = "stablehlo.logistic"(%v990) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v995 = "stablehlo.multiply"(%v992, %v924) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v996 = "stablehlo.multiply"(%v991, %v993) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v997 = "stablehlo.add"(%v995, %v996) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v998 = "stablehlo.tanh"(%v997) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v999 = "stablehlo.multiply"(%v994, %v998) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1000 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1001 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1002 = "stablehlo.reshape"(%v1001) : (tensor<i64>) -> tensor<1xi64>
    %v1003 = "stablehlo.concatenate"(%v1000, %v1002) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1004 = "stablehlo.dynamic_reshape"(%v999, %v1003) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v1005 = "stablehlo.transpose"(%weight_hh_l1) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v1006 = "stablehlo.dot_general"(%v1004, %v1005) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v1007 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1008 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1009 = "stablehlo.reshape"(%v1008) : (tensor<i64>) -> tensor<1xi64>
    %v1010 = "stablehlo.concatenate"(%v1007, %v1009) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1011 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l1, %v1010) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v1012 = "stablehlo.add"(%v1006, %v1011) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v1013 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1014 = "stablehlo.reshape"(%v1013) : (tensor<i64>) -> tensor<1xi64>
    %v1015 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1016 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1017 = "stablehlo.reshape"(%v1016) : (tensor<i64>) -> tensor<1xi64>
    %v1018 = "stablehlo.concatenate"(%v1014, %v1015, %v1017) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1019 = "stablehlo.dynamic_reshape"(%v1012, %v1018) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1020 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1021 = "stablehlo.reshape"(%v1020) : (tensor<i64>) -> tensor<1xi64>
    %v1022 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1023 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1024 = "stablehlo.reshape"(%v1023) : (tensor<i64>) -> tensor<1xi64>
    %v1025 = "stablehlo.concatenate"(%v1021, %v1022, %v1024) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1026 = "stablehlo.dynamic_broadcast_in_dim"(%v833, %v1025) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1027 = "stablehlo.add"(%v1019, %v1026) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v1028 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1029 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1030 = "stablehlo.reshape"(%v1029) : (tensor<i64>) -> tensor<1xi64>
    %v1031 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1032 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1033 = "stablehlo.reshape"(%v1032) : (tensor<i64>) -> tensor<1xi64>
    %v1034 = "stablehlo.concatenate"(%v1030, %v1031, %v1033) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1035 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1036 = "stablehlo.real_dynamic_slice"(%v1027, %v1028, %v1034, %v1035) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1037 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1038 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1039 = "stablehlo.reshape"(%v1038) : (tensor<i64>) -> tensor<1xi64>
    %v1040 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1041 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v1042 = "stablehlo.reshape"(%v1041) : (tensor<i64>) -> tensor<1xi64>
    %v1043 = "stablehlo.concatenate"(%v1039, %v1040, %v1042) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1044 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1045 = "stablehlo.real_dynamic_slice"(%v1027, %v1037, %v1043, %v1044) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1046 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1047 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1048 = "stablehlo.reshape"(%v1047) : (tensor<i64>) -> tensor<1xi64>
    %v1049 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1050 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v1051 = "stablehlo.reshape"(%v1050) : (tensor<i64>) -> tensor<1xi64>
    %v1052 = "stablehlo.concatenate"(%v1048, %v1049, %v1051) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1053 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1054 = "stablehlo.real_dynamic_slice"(%v1027, %v1046, %v1052, %v1053) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1055 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1056 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1057 = "stablehlo.reshape"(%v1056) : (tensor<i64>) -> tensor<1xi64>
    %v1058 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1059 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1060 = "stablehlo.reshape"(%v1059) : (tensor<i64>) -> tensor<1xi64>
    %v1061 = "stablehlo.concatenate"(%v1057, %v1058, %v1060) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1062 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1063 = "stablehlo.real_dynamic_slice"(%v1027, %v1055, %v1061, %v1062) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1064 = "stablehlo.logistic"(%v1036) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1065 = "stablehlo.logistic"(%v1045) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1066 = "stablehlo.tanh"(%v1054) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1067 = "stablehlo.logistic"(%v1063) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1068 = "stablehlo.multiply"(%v1065, %v997) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1069 = "stablehlo.multiply"(%v1064, %v1066) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1070 = "stablehlo.add"(%v1068, %v1069) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1071 = "stablehlo.tanh"(%v1070) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1072 = "stablehlo.multiply"(%v1067, %v1071) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1073 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1074 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1075 = "stablehlo.reshape"(%v1074) : (tensor<i64>) -> tensor<1xi64>
    %v1076 = "stablehlo.concatenate"(%v1073, %v1075) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1077 = "stablehlo.dynamic_reshape"(%v1072, %v1076) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v1078 = "stablehlo.transpose"(%weight_hh_l1) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v1079 = "stablehlo.dot_general"(%v1077, %v1078) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v1080 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1081 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1082 = "stablehlo.reshape"(%v1081) : (tensor<i64>) -> tensor<1xi64>
    %v1083 = "stablehlo.concatenate"(%v1080, %v1082) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1084 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l1, %v1083) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v1085 = "stablehlo.add"(%v1079, %v1084) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v1086 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1087 = "stablehlo.reshape"(%v1086) : (tensor<i64>) -> tensor<1xi64>
    %v1088 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1089 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1090 = "stablehlo.reshape"(%v1089) : (tensor<i64>) -> tensor<1xi64>
    %v1091 = "stablehlo.concatenate"(%v1087, %v1088, %v1090) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1092 = "stablehlo.dynamic_reshape"(%v1085, %v1091) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1093 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1094 = "stablehlo.reshape"(%v1093) : (tensor<i64>) -> tensor<1xi64>
    %v1095 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1096 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1097 = "stablehlo.reshape"(%v1096) : (tensor<i64>) -> tensor<1xi64>
    %v1098 = "stablehlo.concatenate"(%v1094, %v1095, %v1097) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1099 = "stablehlo.dynamic_broadcast_in_dim"(%v838, %v1098) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1100 = "stablehlo.add"(%v1092, %v1099) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v1101 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1102 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1103 = "stablehlo.reshape"(%v1102) : (tensor<i64>) -> tensor<1xi64>
    %v1104 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1105 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1106 = "stablehlo.reshape"(%v1105) : (tensor<i64>) -> tensor<1xi64>
    %v1107 = "stablehlo.concatenate"(%v1103, %v1104, %v1106) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1108 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1109 = "stablehlo.real_dynamic_slice"(%v1100, %v1101, %v1107, %v1108) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1110 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1111 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1112 = "stablehlo.reshape"(%v1111) : (tensor<i64>) -> tensor<1xi64>
    %v1113 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1114 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v1115 = "stablehlo.reshape"(%v1114) : (tensor<i64>) -> tensor<1xi64>
    %v1116 = "stablehlo.concatenate"(%v1112, %v1113, %v1115) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1117 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1118 = "stablehlo.real_dynamic_slice"(%v1100, %v1110, %v1116, %v1117) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1119 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1120 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1121 = "stablehlo.reshape"(%v1120) : (tensor<i64>) -> tensor<1xi64>
    %v1122 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1123 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v1124 = "stablehlo.reshape"(%v1123) : (tensor<i64>) -> tensor<1xi64>
    %v1125 = "stablehlo.concatenate"(%v1121, %v1122, %v1124) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1126 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1127 = "stablehlo.real_dynamic_slice"(%v1100, %v1119, %v1125, %v1126) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1128 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1129 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1130 = "stablehlo.reshape"(%v1129) : (tensor<i64>) -> tensor<1xi64>
    %v1131 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1132 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1133 = "stablehlo.reshape"(%v1132) : (tensor<i64>) -> tensor<1xi64>
    %v1134 = "stablehlo.concatenate"(%v1130, %v1131, %v1133) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1135 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1136 = "stablehlo.real_dynamic_slice"(%v1100, %v1128, %v1134, %v1135) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1137 = "stablehlo.logistic"(%v1109) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1138 = "stablehlo.logistic"(%v1118) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1139 = "stablehlo.tanh"(%v1127) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1140 = "stablehlo.logistic"(%v1136) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1141 = "stablehlo.multiply"(%v1138, %v1070) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1142 = "stablehlo.multiply"(%v1137, %v1139) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1143 = "stablehlo.add"(%v1141, %v1142) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1144 = "stablehlo.tanh"(%v1143) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1145 = "stablehlo.multiply"(%v1140, %v1144) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1146 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1147 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1148 = "stablehlo.reshape"(%v1147) : (tensor<i64>) -> tensor<1xi64>
    %v1149 = "stablehlo.concatenate"(%v1146, %v1148) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1150 = "stablehlo.dynamic_reshape"(%v1145, %v1149) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v1151 = "stablehlo.transpose"(%weight_hh_l1) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v1152 = "stablehlo.dot_general"(%v1150, %v1151) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v1153 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1154 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1155 = "stablehlo.reshape"(%v1154) : (tensor<i64>) -> tensor<1xi64>
    %v1156 = "stablehlo.concatenate"(%v1153, %v1155) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1157 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l1, %v1156) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v1158 = "stablehlo.add"(%v1152, %v1157) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v1159 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1160 = "stablehlo.reshape"(%v1159) : (tensor<i64>) -> tensor<1xi64>
    %v1161 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1162 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1163 = "stablehlo.reshape"(%v1162) : (tensor<i64>) -> tensor<1xi64>
    %v1164 = "stablehlo.concatenate"(%v1160, %v1161, %v1163) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1165 = "stablehlo.dynamic_reshape"(%v1158, %v1164) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1166 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1167 = "stablehlo.reshape"(%v1166) : (tensor<i64>) -> tensor<1xi64>
    %v1168 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1169 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1170 = "stablehlo.reshape"(%v1169) : (tensor<i64>) -> tensor<1xi64>
    %v1171 = "stablehlo.concatenate"(%v1167, %v1168, %v1170) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1172 = "stablehlo.dynamic_broadcast_in_dim"(%v843, %v1171) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1173 = "stablehlo.add"(%v1165, %v1172) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v1174 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1175 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1176 = "stablehlo.reshape"(%v1175) : (tensor<i64>) -> tensor<1xi64>
    %v1177 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1178 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1179 = "stablehlo.reshape"(%v1178) : (tensor<i64>) -> tensor<1xi64>
    %v1180 = "stablehlo.concatenate"(%v1176, %v1177, %v1179) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1181 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1182 = "stablehlo.real_dynamic_slice"(%v1173, %v1174, %v1180, %v1181) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1183 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1184 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1185 = "stablehlo.reshape"(%v1184) : (tensor<i64>) -> tensor<1xi64>
    %v1186 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1187 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v1188 = "stablehlo.reshape"(%v1187) : (tensor<i64>) -> tensor<1xi64>
    %v1189 = "stablehlo.concatenate"(%v1185, %v1186, %v1188) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1190 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1191 = "stablehlo.real_dynamic_slice"(%v1173, %v1183, %v1189, %v1190) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1192 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1193 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1194 = "stablehlo.reshape"(%v1193) : (tensor<i64>) -> tensor<1xi64>
    %v1195 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1196 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v1197 = "stablehlo.reshape"(%v1196) : (tensor<i64>) -> tensor<1xi64>
    %v1198 = "stablehlo.concatenate"(%v1194, %v1195, %v1197) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1199 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1200 = "stablehlo.real_dynamic_slice"(%v1173, %v1192, %v1198, %v1199) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1201 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1202 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1203 = "stablehlo.reshape"(%v1202) : (tensor<i64>) -> tensor<1xi64>
    %v1204 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1205 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1206 = "stablehlo.reshape"(%v1205) : (tensor<i64>) -> tensor<1xi64>
    %v1207 = "stablehlo.concatenate"(%v1203, %v1204, %v1206) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1208 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1209 = "stablehlo.real_dynamic_slice"(%v1173, %v1201, %v1207, %v1208) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1210 = "stablehlo.logistic"(%v1182) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1211 = "stablehlo.logistic"(%v1191) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1212 = "stablehlo.tanh"(%v1200) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1213 = "stablehlo.logistic"(%v1209) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1214 = "stablehlo.multiply"(%v1211, %v1143) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1215 = "stablehlo.multiply"(%v1210, %v1212) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1216 = "stablehlo.add"(%v1214, %v1215) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1217 = "stablehlo.tanh"(%v1216) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1218 = "stablehlo.multiply"(%v1213, %v1217) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1219 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1220 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1221 = "stablehlo.reshape"(%v1220) : (tensor<i64>) -> tensor<1xi64>
    %v1222 = "stablehlo.concatenate"(%v1219, %v1221) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1223 = "stablehlo.dynamic_reshape"(%v1218, %v1222) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v1224 = "stablehlo.transpose"(%weight_hh_l1) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v1225 = "stablehlo.dot_general"(%v1223, %v1224) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v1226 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1227 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1228 = "stablehlo.reshape"(%v1227) : (tensor<i64>) -> tensor<1xi64>
    %v1229 = "stablehlo.concatenate"(%v1226, %v1228) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1230 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l1, %v1229) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v1231 = "stablehlo.add"(%v1225, %v1230) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v1232 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1233 = "stablehlo.reshape"(%v1232) : (tensor<i64>) -> tensor<1xi64>
    %v1234 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1235 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1236 = "stablehlo.reshape"(%v1235) : (tensor<i64>) -> tensor<1xi64>
    %v1237 = "stablehlo.concatenate"(%v1233, %v1234, %v1236) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1238 = "stablehlo.dynamic_reshape"(%v1231, %v1237) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1239 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1240 = "stablehlo.reshape"(%v1239) : (tensor<i64>) -> tensor<1xi64>
    %v1241 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1242 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1243 = "stablehlo.reshape"(%v1242) : (tensor<i64>) -> tensor<1xi64>
    %v1244 = "stablehlo.concatenate"(%v1240, %v1241, %v1243) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1245 = "stablehlo.dynamic_broadcast_in_dim"(%v848, %v1244) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1246 = "stablehlo.add"(%v1238, %v1245) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v1247 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1248 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1249 = "stablehlo.reshape"(%v1248) : (tensor<i64>) -> tensor<1xi64>
    %v1250 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1251 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1252 = "stablehlo.reshape"(%v1251) : (tensor<i64>) -> tensor<1xi64>
    %v1253 = "stablehlo.concatenate"(%v1249, %v1250, %v1252) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1254 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1255 = "stablehlo.real_dynamic_slice"(%v1246, %v1247, %v1253, %v1254) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1256 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1257 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1258 = "stablehlo.reshape"(%v1257) : (tensor<i64>) -> tensor<1xi64>
    %v1259 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1260 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v1261 = "stablehlo.reshape"(%v1260) : (tensor<i64>) -> tensor<1xi64>
    %v1262 = "stablehlo.concatenate"(%v1258, %v1259, %v1261) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1263 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1264 = "stablehlo.real_dynamic_slice"(%v1246, %v1256, %v1262, %v1263) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1265 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1266 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1267 = "stablehlo.reshape"(%v1266) : (tensor<i64>) -> tensor<1xi64>
    %v1268 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1269 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v1270 = "stablehlo.reshape"(%v1269) : (tensor<i64>) -> tensor<1xi64>
    %v1271 = "stablehlo.concatenate"(%v1267, %v1268, %v1270) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1272 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1273 = "stablehlo.real_dynamic_slice"(%v1246, %v1265, %v1271, %v1272) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1274 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1275 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1276 = "stablehlo.reshape"(%v1275) : (tensor<i64>) -> tensor<1xi64>
    %v1277 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1278 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1279 = "stablehlo.reshape"(%v1278) : (tensor<i64>) -> tensor<1xi64>
    %v1280 = "stablehlo.concatenate"(%v1276, %v1277, %v1279) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1281 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1282 = "stablehlo.real_dynamic_slice"(%v1246, %v1274, %v1280, %v1281) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1283 = "stablehlo.logistic"(%v1255) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1284 = "stablehlo.logistic"(%v1264) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1285 = "stablehlo.tanh"(%v1273) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1286 = "stablehlo.logistic"(%v1282) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1287 = "stablehlo.multiply"(%v1284, %v1216) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1288 = "stablehlo.multiply"(%v1283, %v1285) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1289 = "stablehlo.add"(%v1287, %v1288) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1290 = "stablehlo.tanh"(%v1289) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1291 = "stablehlo.multiply"(%v1286, %v1290) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1292 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1293 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1294 = "stablehlo.reshape"(%v1293) : (tensor<i64>) -> tensor<1xi64>
    %v1295 = "stablehlo.concatenate"(%v1292, %v1294) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1296 = "stablehlo.dynamic_reshape"(%v1291, %v1295) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v1297 = "stablehlo.transpose"(%weight_hh_l1) {permutation = array<i64: 1, 0>} : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %v1298 = "stablehlo.dot_general"(%v1296, %v1297) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<?x32xf32>, tensor<32x128xf32>) -> tensor<?x128xf32>
    %v1299 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1300 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1301 = "stablehlo.reshape"(%v1300) : (tensor<i64>) -> tensor<1xi64>
    %v1302 = "stablehlo.concatenate"(%v1299, %v1301) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1303 = "stablehlo.dynamic_broadcast_in_dim"(%bias_hh_l1, %v1302) {broadcast_dimensions = array<i64: 1>} : (tensor<128xf32>, tensor<2xi64>) -> tensor<?x128xf32>
    %v1304 = "stablehlo.add"(%v1298, %v1303) : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %v1305 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1306 = "stablehlo.reshape"(%v1305) : (tensor<i64>) -> tensor<1xi64>
    %v1307 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1308 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1309 = "stablehlo.reshape"(%v1308) : (tensor<i64>) -> tensor<1xi64>
    %v1310 = "stablehlo.concatenate"(%v1306, %v1307, %v1309) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1311 = "stablehlo.dynamic_reshape"(%v1304, %v1310) : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1312 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1313 = "stablehlo.reshape"(%v1312) : (tensor<i64>) -> tensor<1xi64>
    %v1314 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1315 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1316 = "stablehlo.reshape"(%v1315) : (tensor<i64>) -> tensor<1xi64>
    %v1317 = "stablehlo.concatenate"(%v1313, %v1314, %v1316) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1318 = "stablehlo.dynamic_broadcast_in_dim"(%v853, %v1317) {broadcast_dimensions = array<i64: 1, 2>} : (tensor<?x128xf32>, tensor<3xi64>) -> tensor<1x?x128xf32>
    %v1319 = "stablehlo.add"(%v1311, %v1318) : (tensor<1x?x128xf32>, tensor<1x?x128xf32>) -> tensor<1x?x128xf32>
    %v1320 = "stablehlo.constant"() {value = dense<[0, 0, 0]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1321 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1322 = "stablehlo.reshape"(%v1321) : (tensor<i64>) -> tensor<1xi64>
    %v1323 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1324 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1325 = "stablehlo.reshape"(%v1324) : (tensor<i64>) -> tensor<1xi64>
    %v1326 = "stablehlo.concatenate"(%v1322, %v1323, %v1325) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1327 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1328 = "stablehlo.real_dynamic_slice"(%v1319, %v1320, %v1326, %v1327) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1329 = "stablehlo.constant"() {value = dense<[0, 0, 32]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1330 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1331 = "stablehlo.reshape"(%v1330) : (tensor<i64>) -> tensor<1xi64>
    %v1332 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1333 = "stablehlo.constant"() {value = dense<64> : tensor<i64>} : () -> tensor<i64>
    %v1334 = "stablehlo.reshape"(%v1333) : (tensor<i64>) -> tensor<1xi64>
    %v1335 = "stablehlo.concatenate"(%v1331, %v1332, %v1334) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1336 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1337 = "stablehlo.real_dynamic_slice"(%v1319, %v1329, %v1335, %v1336) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1338 = "stablehlo.constant"() {value = dense<[0, 0, 64]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1339 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1340 = "stablehlo.reshape"(%v1339) : (tensor<i64>) -> tensor<1xi64>
    %v1341 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1342 = "stablehlo.constant"() {value = dense<96> : tensor<i64>} : () -> tensor<i64>
    %v1343 = "stablehlo.reshape"(%v1342) : (tensor<i64>) -> tensor<1xi64>
    %v1344 = "stablehlo.concatenate"(%v1340, %v1341, %v1343) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1345 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1346 = "stablehlo.real_dynamic_slice"(%v1319, %v1338, %v1344, %v1345) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1347 = "stablehlo.constant"() {value = dense<[0, 0, 96]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1348 = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %v1349 = "stablehlo.reshape"(%v1348) : (tensor<i64>) -> tensor<1xi64>
    %v1350 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1351 = "stablehlo.constant"() {value = dense<128> : tensor<i64>} : () -> tensor<i64>
    %v1352 = "stablehlo.reshape"(%v1351) : (tensor<i64>) -> tensor<1xi64>
    %v1353 = "stablehlo.concatenate"(%v1349, %v1350, %v1352) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1354 = "stablehlo.constant"() {value = dense<[1, 1, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %v1355 = "stablehlo.real_dynamic_slice"(%v1319, %v1347, %v1353, %v1354) : (tensor<1x?x128xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) -> tensor<1x?x32xf32>
    %v1356 = "stablehlo.logistic"(%v1328) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1357 = "stablehlo.logistic"(%v1337) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1358 = "stablehlo.tanh"(%v1346) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1359 = "stablehlo.logistic"(%v1355) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1360 = "stablehlo.multiply"(%v1357, %v1289) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1361 = "stablehlo.multiply"(%v1356, %v1358) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1362 = "stablehlo.add"(%v1360, %v1361) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1363 = "stablehlo.tanh"(%v1362) : (tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1364 = "stablehlo.multiply"(%v1359, %v1363) : (tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<1x?x32xf32>
    %v1365 = "stablehlo.concatenate"(%v926, %v999, %v1072, %v1145, %v1218, %v1291, %v1364) {dimension = 0 : i64} : (tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>) -> tensor<7x?x32xf32>
    %v1366 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1367 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1368 = "stablehlo.reshape"(%v1367) : (tensor<i64>) -> tensor<1xi64>
    %v1369 = "stablehlo.concatenate"(%v1366, %v1368) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1370 = "stablehlo.dynamic_reshape"(%v1364, %v1369) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v1371 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1372 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1373 = "stablehlo.reshape"(%v1372) : (tensor<i64>) -> tensor<1xi64>
    %v1374 = "stablehlo.concatenate"(%v1371, %v1373) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    %v1375 = "stablehlo.dynamic_reshape"(%v1362, %v1374) : (tensor<1x?x32xf32>, tensor<2xi64>) -> tensor<?x32xf32>
    %v1376 = "stablehlo.transpose"(%v1365) {permutation = array<i64: 1, 0, 2>} : (tensor<7x?x32xf32>) -> tensor<?x7x32xf32>
    %v1377 = "stablehlo.concatenate"(%v714, %v1370) {dimension = 0 : i64} : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
    %v1378 = "stablehlo.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %v1379 = "stablehlo.reshape"(%v1378) : (tensor<i64>) -> tensor<1xi64>
    %v1380 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1381 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1382 = "stablehlo.reshape"(%v1381) : (tensor<i64>) -> tensor<1xi64>
    %v1383 = "stablehlo.concatenate"(%v1379, %v1380, %v1382) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1384 = "stablehlo.dynamic_reshape"(%v1377, %v1383) : (tensor<?x32xf32>, tensor<3xi64>) -> tensor<2x?x32xf32>
    %v1385 = "stablehlo.concatenate"(%v719, %v1375) {dimension = 0 : i64} : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
    %v1386 = "stablehlo.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %v1387 = "stablehlo.reshape"(%v1386) : (tensor<i64>) -> tensor<1xi64>
    %v1388 = "stablehlo.reshape"(%v4) : (tensor<i64>) -> tensor<1xi64>
    %v1389 = "stablehlo.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
    %v1390 = "stablehlo.reshape"(%v1389) : (tensor<i64>) -> tensor<1xi64>
    %v1391 = "stablehlo.concatenate"(%v1387, %v1388, %v1390) {dimension = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
    %v1392 = "stablehlo.dynamic_reshape"(%v1385, %v1391) : (tensor<?x32xf32>, tensor<3xi64>) -> tensor<2x?x32xf32>
    func.return %v1376, %v1384, %v1392 : tensor<?x7x32xf32>, tensor<2x?x32xf32>, tensor<2x?x32xf32>
  }
}
