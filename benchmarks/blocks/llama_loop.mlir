func.func @segment(%a0: tensor<?x?x?xf32>, %a1: tensor<f64>, %a2: tensor<?xf32>, %a3: tensor<?x?xf32>, %a4: tensor<?xf32>, %a5: tensor<?xf32>, %a6: tensor<f32>, %a7: tensor<?x?xf32>, %a8: tensor<f64>, %a9: tensor<?xf32>, %a10: tensor<?x?xf32>, %a11: tensor<?x?xf32>, %a12: tensor<?x?xf32>, %a13: tensor<f64>, %a14: tensor<?xf32>, %a15: tensor<?x?xf32>, %i0: index, %i1: index, %i2: index, %i3: index, %i4: index, %i5: index, %i6: index, %i7: index, %i8: index, %i9: index, %i10: index, %i11: index, %i12: index, %i13: index, %i14: index, %i15: index, %i16: index, %i17: index, %i18: index, %i19: index, %i20: index, %i21: index, %i22: index, %i23: index, %i24: index, %i25: index, %i26: index, %i27: index, %i28: index, %i29: index, %i30: index, %i31: index, %i32: index, %i33: index, %i34: index, %i35: index, %i36: index, %i37: index, %i38: index, %i39: index, %i40: index, %i41: index, %i42: index, %i43: index, %i44: index, %i45: index, %i46: index, %i47: index, %i48: index, %i49: index, %i50: index, %i51: index, %i52: index, %i53: index, %i54: index, %i55: index, %i56: index, %i57: index, %i58: index, %i59: index, %i60: index, %i61: index, %i62: index, %i63: index, %i64: index, %i65: index, %i66: index, %i67: index, %i68: index, %i69: index, %i70: index, %i71: index, %i72: index, %i73: index, %i74: index, %i75: index, %i76: index, %i77: index, %i78: index, %i79: index, %i80: index, %i81: index, %i82: index, %i83: index, %i84: index, %i85: index, %i86: index, %i87: index, %i88: index, %i89: index, %i90: index, %i91: index, %i92: index, %i93: index, %i94: index, %i95: index, %i96: index, %i97: index) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %v0 = tensor.mul %a0, %a0 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v1 = tensor.reduce_mean %v0 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v2 = tensor.convert %a1 : tensor<f64> -> tensor<f64>
  %v3 = tensor.convert %v2 : tensor<f64> -> tensor<f32>
  %v4 = tensor.add %v1, %v3 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v5 = tensor.rsqrt %v4 : tensor<?x?x1xf32>
  %v6 = tensor.mul %a0, %v5 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v7 = tensor.mul %v6, %a2 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v8 = tensor.transpose %a3 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v9 = tensor.collapse_shape %v7 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v10 = tensor.expand_shape %v9 [[0, 1]] output_shape [%i0, %i1] : tensor<?xf32> into tensor<?x?xf32>
  %v11 = tensor.matmul %v10, %v8 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v12 = tensor.collapse_shape %v11 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v13 = tensor.expand_shape %v12 [[0, 1, 2]] output_shape [%i2, %i3, %i4] : tensor<?xf32> into tensor<?x?x?xf32>
  %c0 = arith.constant 0 : index
  %d14 = tensor.dim %v13, %c0 : tensor<?x?x?xf32>
  %c1 = arith.constant 1 : index
  %d16 = tensor.dim %v13, %c1 : tensor<?x?x?xf32>
  %v14 = tensor.extract_slice %v13[0, 0, %i5] [%d14, %d16, %i6] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d19 = tensor.dim %v13, %c0 : tensor<?x?x?xf32>
  %d20 = tensor.dim %v13, %c1 : tensor<?x?x?xf32>
  %v15 = tensor.extract_slice %v13[0, 0, %i7] [%d19, %d20, %i8] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d22 = tensor.dim %v13, %c0 : tensor<?x?x?xf32>
  %d23 = tensor.dim %v13, %c1 : tensor<?x?x?xf32>
  %v16 = tensor.extract_slice %v13[0, 0, %i9] [%d22, %d23, %i10] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %v17 = tensor.collapse_shape %v14 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v18 = tensor.expand_shape %v17 [[0, 1, 2, 3]] output_shape [%i11, %i12, %i13, %i14] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v19 = tensor.transpose %v18 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v20 = tensor.collapse_shape %v15 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v21 = tensor.expand_shape %v20 [[0, 1, 2, 3]] output_shape [%i15, %i16, %i17, %i18] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v22 = tensor.transpose %v21 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v23 = tensor.collapse_shape %v16 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v24 = tensor.expand_shape %v23 [[0, 1, 2, 3]] output_shape [%i19, %i20, %i21, %i22] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v25 = tensor.transpose %v24 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v26 = tensor.expand_shape %a4 [[0, 1]] output_shape [%i23, 1] : tensor<?xf32> into tensor<?x1xf32>
  %v27 = tensor.mul %v26, %a5 : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v28 = tensor.concat dim(1) %v27, %v27 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v29 = tensor.cos %v28 : tensor<?x?xf32>
  %v30 = tensor.sin %v28 : tensor<?x?xf32>
  %v31 = tensor.mul %v19, %v29 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %d40 = tensor.dim %v19, %c0 : tensor<?x?x?x?xf32>
  %d41 = tensor.dim %v19, %c1 : tensor<?x?x?x?xf32>
  %c2 = arith.constant 2 : index
  %d42 = tensor.dim %v19, %c2 : tensor<?x?x?x?xf32>
  %v32 = tensor.extract_slice %v19[0, 0, 0, %i24] [%d40, %d41, %d42, %i25] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %d45 = tensor.dim %v19, %c0 : tensor<?x?x?x?xf32>
  %d46 = tensor.dim %v19, %c1 : tensor<?x?x?x?xf32>
  %d47 = tensor.dim %v19, %c2 : tensor<?x?x?x?xf32>
  %v33 = tensor.extract_slice %v19[0, 0, 0, %i26] [%d45, %d46, %d47, %i27] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %v34 = tensor.neg %v33 : tensor<?x?x?x?xf32>
  %v35 = tensor.concat dim(3) %v34, %v32 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v36 = tensor.mul %v35, %v30 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %v37 = tensor.add %v31, %v36 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v38 = tensor.mul %v22, %v29 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %d54 = tensor.dim %v22, %c0 : tensor<?x?x?x?xf32>
  %d55 = tensor.dim %v22, %c1 : tensor<?x?x?x?xf32>
  %d56 = tensor.dim %v22, %c2 : tensor<?x?x?x?xf32>
  %v39 = tensor.extract_slice %v22[0, 0, 0, %i28] [%d54, %d55, %d56, %i29] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %d58 = tensor.dim %v22, %c0 : tensor<?x?x?x?xf32>
  %d59 = tensor.dim %v22, %c1 : tensor<?x?x?x?xf32>
  %d60 = tensor.dim %v22, %c2 : tensor<?x?x?x?xf32>
  %v40 = tensor.extract_slice %v22[0, 0, 0, %i30] [%d58, %d59, %d60, %i31] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %v41 = tensor.neg %v40 : tensor<?x?x?x?xf32>
  %v42 = tensor.concat dim(3) %v41, %v39 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v43 = tensor.mul %v42, %v30 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %v44 = tensor.add %v38, %v43 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v45 = tensor.transpose %v44 {perm = [0, 1, 3, 2]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v46 = tensor.broadcast_to %v37 to [%i32, %i33, %i34, %i35] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v47 = tensor.convert %v46 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v48 = tensor.collapse_shape %v47 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v49 = tensor.expand_shape %v48 [[0, 1, 2]] output_shape [%i36, %i37, %i38] : tensor<?xf32> into tensor<?x?x?xf32>
  %v50 = tensor.broadcast_to %v45 to [%i39, %i40, %i41, %i42] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v51 = tensor.convert %v50 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v52 = tensor.collapse_shape %v51 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v53 = tensor.expand_shape %v52 [[0, 1, 2]] output_shape [%i43, %i44, %i45] : tensor<?xf32> into tensor<?x?x?xf32>
  %v54 = tensor.matmul %v49, %v53 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v55 = tensor.collapse_shape %v54 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v56 = tensor.expand_shape %v55 [[0, 1, 2, 3]] output_shape [%i46, %i47, %i48, %i49] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v57 = tensor.div %v56, %a6 : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %v58 = tensor.reduce_max %v57 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v59 = tensor.sub %v57, %v58 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v60 = tensor.exp %v59 : tensor<?x?x?x?xf32>
  %v61 = tensor.reduce_sum %v60 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v62 = tensor.div %v60, %v61 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v63 = tensor.broadcast_to %v62 to [%i50, %i51, %i52, %i53] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v64 = tensor.collapse_shape %v63 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v65 = tensor.expand_shape %v64 [[0, 1, 2]] output_shape [%i54, %i55, %i56] : tensor<?xf32> into tensor<?x?x?xf32>
  %v66 = tensor.broadcast_to %v25 to [%i57, %i58, %i59, %i60] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v67 = tensor.convert %v66 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v68 = tensor.collapse_shape %v67 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v69 = tensor.expand_shape %v68 [[0, 1, 2]] output_shape [%i61, %i62, %i63] : tensor<?xf32> into tensor<?x?x?xf32>
  %v70 = tensor.matmul %v65, %v69 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v71 = tensor.collapse_shape %v70 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v72 = tensor.expand_shape %v71 [[0, 1, 2, 3]] output_shape [%i64, %i65, %i66, %i67] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v73 = tensor.transpose %v72 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v74 = tensor.convert %v73 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v75 = tensor.collapse_shape %v74 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v76 = tensor.expand_shape %v75 [[0, 1, 2]] output_shape [%i68, %i69, %i70] : tensor<?xf32> into tensor<?x?x?xf32>
  %v77 = tensor.transpose %a7 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v78 = tensor.collapse_shape %v76 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v79 = tensor.expand_shape %v78 [[0, 1]] output_shape [%i71, %i72] : tensor<?xf32> into tensor<?x?xf32>
  %v80 = tensor.matmul %v79, %v77 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v81 = tensor.collapse_shape %v80 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v82 = tensor.expand_shape %v81 [[0, 1, 2]] output_shape [%i73, %i74, %i75] : tensor<?xf32> into tensor<?x?x?xf32>
  %v83 = tensor.add %a0, %v82 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v84 = tensor.mul %v83, %v83 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v85 = tensor.reduce_mean %v84 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v86 = tensor.convert %a8 : tensor<f64> -> tensor<f64>
  %v87 = tensor.convert %v86 : tensor<f64> -> tensor<f32>
  %v88 = tensor.add %v85, %v87 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v89 = tensor.rsqrt %v88 : tensor<?x?x1xf32>
  %v90 = tensor.mul %v83, %v89 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v91 = tensor.mul %v90, %a9 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v92 = tensor.transpose %a10 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v93 = tensor.collapse_shape %v91 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v94 = tensor.expand_shape %v93 [[0, 1]] output_shape [%i76, %i77] : tensor<?xf32> into tensor<?x?xf32>
  %v95 = tensor.matmul %v94, %v92 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v96 = tensor.collapse_shape %v95 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v97 = tensor.expand_shape %v96 [[0, 1, 2]] output_shape [%i78, %i79, %i80] : tensor<?xf32> into tensor<?x?x?xf32>
  %v98 = tensor.sigmoid %v97 : tensor<?x?x?xf32>
  %v99 = tensor.mul %v97, %v98 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v100 = tensor.transpose %a11 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v101 = tensor.collapse_shape %v91 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v102 = tensor.expand_shape %v101 [[0, 1]] output_shape [%i81, %i82] : tensor<?xf32> into tensor<?x?xf32>
  %v103 = tensor.matmul %v102, %v100 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v104 = tensor.collapse_shape %v103 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v105 = tensor.expand_shape %v104 [[0, 1, 2]] output_shape [%i83, %i84, %i85] : tensor<?xf32> into tensor<?x?x?xf32>
  %v106 = tensor.mul %v99, %v105 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v107 = tensor.transpose %a12 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v108 = tensor.collapse_shape %v106 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v109 = tensor.expand_shape %v108 [[0, 1]] output_shape [%i86, %i87] : tensor<?xf32> into tensor<?x?xf32>
  %v110 = tensor.matmul %v109, %v107 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v111 = tensor.collapse_shape %v110 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v112 = tensor.expand_shape %v111 [[0, 1, 2]] output_shape [%i88, %i89, %i90] : tensor<?xf32> into tensor<?x?x?xf32>
  %v113 = tensor.add %v83, %v112 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v114 = tensor.mul %v113, %v113 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v115 = tensor.reduce_mean %v114 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v116 = tensor.convert %a13 : tensor<f64> -> tensor<f64>
  %v117 = tensor.convert %v116 : tensor<f64> -> tensor<f32>
  %v118 = tensor.add %v115, %v117 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v119 = tensor.rsqrt %v118 : tensor<?x?x1xf32>
  %v120 = tensor.mul %v113, %v119 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v121 = tensor.mul %v120, %a14 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v122 = tensor.transpose %a15 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v123 = tensor.collapse_shape %v121 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v124 = tensor.expand_shape %v123 [[0, 1]] output_shape [%i91, %i92] : tensor<?xf32> into tensor<?x?xf32>
  %v125 = tensor.matmul %v124, %v122 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v126 = tensor.collapse_shape %v125 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v127 = tensor.expand_shape %v126 [[0, 1, 2]] output_shape [%i93, %i94, %i95] : tensor<?xf32> into tensor<?x?x?xf32>
  %d149 = tensor.dim %v127, %c0 : tensor<?x?x?xf32>
  %d150 = tensor.dim %v127, %c1 : tensor<?x?x?xf32>
  %v128 = tensor.extract_slice %v127[0, 0, %i96] [%d149, %d150, %i97] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  func.return %v113, %v127, %v128 : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// -----
func.func @segment(%a0: tensor<?x?x?xf32>, %a1: tensor<?x?x?xf32>, %a2: tensor<?xf32>, %a3: tensor<?xf32>, %a4: tensor<f32>, %a5: tensor<?x?xf32>, %a6: tensor<?x?x?xf32>, %a7: tensor<f64>, %a8: tensor<?xf32>, %a9: tensor<?x?xf32>, %a10: tensor<?x?xf32>, %a11: tensor<?x?xf32>, %a12: tensor<f64>, %a13: tensor<?xf32>, %a14: tensor<?x?xf32>, %a15: tensor<?xf32>, %a16: tensor<?xf32>, %i0: index, %i1: index, %i2: index, %i3: index, %i4: index, %i5: index, %i6: index, %i7: index, %i8: index, %i9: index, %i10: index, %i11: index, %i12: index, %i13: index, %i14: index, %i15: index, %i16: index, %i17: index, %i18: index, %i19: index, %i20: index, %i21: index, %i22: index, %i23: index, %i24: index, %i25: index, %i26: index, %i27: index, %i28: index, %i29: index, %i30: index, %i31: index, %i32: index, %i33: index, %i34: index, %i35: index, %i36: index, %i37: index, %i38: index, %i39: index, %i40: index, %i41: index, %i42: index, %i43: index, %i44: index, %i45: index, %i46: index, %i47: index, %i48: index, %i49: index, %i50: index, %i51: index, %i52: index, %i53: index, %i54: index, %i55: index, %i56: index, %i57: index, %i58: index, %i59: index, %i60: index, %i61: index, %i62: index, %i63: index, %i64: index, %i65: index, %i66: index, %i67: index, %i68: index, %i69: index, %i70: index, %i71: index, %i72: index, %i73: index, %i74: index, %i75: index, %i76: index, %i77: index, %i78: index, %i79: index, %i80: index, %i81: index, %i82: index, %i83: index, %i84: index, %i85: index, %i86: index, %i87: index, %i88: index, %i89: index, %i90: index, %i91: index, %i92: index, %i93: index, %i94: index, %i95: index, %i96: index, %i97: index, %i98: index, %i99: index, %i100: index, %i101: index, %i102: index, %i103: index, %i104: index, %i105: index, %i106: index, %i107: index) -> (tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %a0, %c0 : tensor<?x?x?xf32>
  %c1 = arith.constant 1 : index
  %d2 = tensor.dim %a0, %c1 : tensor<?x?x?xf32>
  %v0 = tensor.extract_slice %a0[0, 0, %i0] [%d0, %d2, %i1] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d5 = tensor.dim %a0, %c0 : tensor<?x?x?xf32>
  %d6 = tensor.dim %a0, %c1 : tensor<?x?x?xf32>
  %v1 = tensor.extract_slice %a0[0, 0, %i2] [%d5, %d6, %i3] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %v2 = tensor.collapse_shape %a1 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v3 = tensor.expand_shape %v2 [[0, 1, 2, 3]] output_shape [%i4, %i5, %i6, %i7] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v4 = tensor.transpose %v3 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v5 = tensor.collapse_shape %v0 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v6 = tensor.expand_shape %v5 [[0, 1, 2, 3]] output_shape [%i8, %i9, %i10, %i11] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v7 = tensor.transpose %v6 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v8 = tensor.collapse_shape %v1 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v9 = tensor.expand_shape %v8 [[0, 1, 2, 3]] output_shape [%i12, %i13, %i14, %i15] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v10 = tensor.transpose %v9 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v11 = tensor.expand_shape %a2 [[0, 1]] output_shape [%i16, 1] : tensor<?xf32> into tensor<?x1xf32>
  %v12 = tensor.mul %v11, %a3 : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v13 = tensor.concat dim(1) %v12, %v12 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v14 = tensor.cos %v13 : tensor<?x?xf32>
  %v15 = tensor.sin %v13 : tensor<?x?xf32>
  %v16 = tensor.mul %v4, %v14 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %d23 = tensor.dim %v4, %c0 : tensor<?x?x?x?xf32>
  %d24 = tensor.dim %v4, %c1 : tensor<?x?x?x?xf32>
  %c2 = arith.constant 2 : index
  %d25 = tensor.dim %v4, %c2 : tensor<?x?x?x?xf32>
  %v17 = tensor.extract_slice %v4[0, 0, 0, %i17] [%d23, %d24, %d25, %i18] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %d28 = tensor.dim %v4, %c0 : tensor<?x?x?x?xf32>
  %d29 = tensor.dim %v4, %c1 : tensor<?x?x?x?xf32>
  %d30 = tensor.dim %v4, %c2 : tensor<?x?x?x?xf32>
  %v18 = tensor.extract_slice %v4[0, 0, 0, %i19] [%d28, %d29, %d30, %i20] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %v19 = tensor.neg %v18 : tensor<?x?x?x?xf32>
  %v20 = tensor.concat dim(3) %v19, %v17 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v21 = tensor.mul %v20, %v15 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %v22 = tensor.add %v16, %v21 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v23 = tensor.mul %v7, %v14 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %d37 = tensor.dim %v7, %c0 : tensor<?x?x?x?xf32>
  %d38 = tensor.dim %v7, %c1 : tensor<?x?x?x?xf32>
  %d39 = tensor.dim %v7, %c2 : tensor<?x?x?x?xf32>
  %v24 = tensor.extract_slice %v7[0, 0, 0, %i21] [%d37, %d38, %d39, %i22] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %d41 = tensor.dim %v7, %c0 : tensor<?x?x?x?xf32>
  %d42 = tensor.dim %v7, %c1 : tensor<?x?x?x?xf32>
  %d43 = tensor.dim %v7, %c2 : tensor<?x?x?x?xf32>
  %v25 = tensor.extract_slice %v7[0, 0, 0, %i23] [%d41, %d42, %d43, %i24] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %v26 = tensor.neg %v25 : tensor<?x?x?x?xf32>
  %v27 = tensor.concat dim(3) %v26, %v24 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v28 = tensor.mul %v27, %v15 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %v29 = tensor.add %v23, %v28 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v30 = tensor.transpose %v29 {perm = [0, 1, 3, 2]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v31 = tensor.broadcast_to %v22 to [%i25, %i26, %i27, %i28] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v32 = tensor.convert %v31 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v33 = tensor.collapse_shape %v32 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v34 = tensor.expand_shape %v33 [[0, 1, 2]] output_shape [%i29, %i30, %i31] : tensor<?xf32> into tensor<?x?x?xf32>
  %v35 = tensor.broadcast_to %v30 to [%i32, %i33, %i34, %i35] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v36 = tensor.convert %v35 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v37 = tensor.collapse_shape %v36 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v38 = tensor.expand_shape %v37 [[0, 1, 2]] output_shape [%i36, %i37, %i38] : tensor<?xf32> into tensor<?x?x?xf32>
  %v39 = tensor.matmul %v34, %v38 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v40 = tensor.collapse_shape %v39 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v41 = tensor.expand_shape %v40 [[0, 1, 2, 3]] output_shape [%i39, %i40, %i41, %i42] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v42 = tensor.div %v41, %a4 : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %v43 = tensor.reduce_max %v42 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v44 = tensor.sub %v42, %v43 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v45 = tensor.exp %v44 : tensor<?x?x?x?xf32>
  %v46 = tensor.reduce_sum %v45 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v47 = tensor.div %v45, %v46 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v48 = tensor.broadcast_to %v47 to [%i43, %i44, %i45, %i46] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v49 = tensor.collapse_shape %v48 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v50 = tensor.expand_shape %v49 [[0, 1, 2]] output_shape [%i47, %i48, %i49] : tensor<?xf32> into tensor<?x?x?xf32>
  %v51 = tensor.broadcast_to %v10 to [%i50, %i51, %i52, %i53] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v52 = tensor.convert %v51 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v53 = tensor.collapse_shape %v52 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v54 = tensor.expand_shape %v53 [[0, 1, 2]] output_shape [%i54, %i55, %i56] : tensor<?xf32> into tensor<?x?x?xf32>
  %v55 = tensor.matmul %v50, %v54 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v56 = tensor.collapse_shape %v55 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v57 = tensor.expand_shape %v56 [[0, 1, 2, 3]] output_shape [%i57, %i58, %i59, %i60] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v58 = tensor.transpose %v57 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v59 = tensor.convert %v58 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v60 = tensor.collapse_shape %v59 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v61 = tensor.expand_shape %v60 [[0, 1, 2]] output_shape [%i61, %i62, %i63] : tensor<?xf32> into tensor<?x?x?xf32>
  %v62 = tensor.transpose %a5 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v63 = tensor.collapse_shape %v61 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v64 = tensor.expand_shape %v63 [[0, 1]] output_shape [%i64, %i65] : tensor<?xf32> into tensor<?x?xf32>
  %v65 = tensor.matmul %v64, %v62 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v66 = tensor.collapse_shape %v65 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v67 = tensor.expand_shape %v66 [[0, 1, 2]] output_shape [%i66, %i67, %i68] : tensor<?xf32> into tensor<?x?x?xf32>
  %v68 = tensor.add %a6, %v67 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v69 = tensor.mul %v68, %v68 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v70 = tensor.reduce_mean %v69 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v71 = tensor.convert %a7 : tensor<f64> -> tensor<f64>
  %v72 = tensor.convert %v71 : tensor<f64> -> tensor<f32>
  %v73 = tensor.add %v70, %v72 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v74 = tensor.rsqrt %v73 : tensor<?x?x1xf32>
  %v75 = tensor.mul %v68, %v74 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v76 = tensor.mul %v75, %a8 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v77 = tensor.transpose %a9 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v78 = tensor.collapse_shape %v76 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v79 = tensor.expand_shape %v78 [[0, 1]] output_shape [%i69, %i70] : tensor<?xf32> into tensor<?x?xf32>
  %v80 = tensor.matmul %v79, %v77 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v81 = tensor.collapse_shape %v80 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v82 = tensor.expand_shape %v81 [[0, 1, 2]] output_shape [%i71, %i72, %i73] : tensor<?xf32> into tensor<?x?x?xf32>
  %v83 = tensor.sigmoid %v82 : tensor<?x?x?xf32>
  %v84 = tensor.mul %v82, %v83 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v85 = tensor.transpose %a10 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v86 = tensor.collapse_shape %v76 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v87 = tensor.expand_shape %v86 [[0, 1]] output_shape [%i74, %i75] : tensor<?xf32> into tensor<?x?xf32>
  %v88 = tensor.matmul %v87, %v85 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v89 = tensor.collapse_shape %v88 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v90 = tensor.expand_shape %v89 [[0, 1, 2]] output_shape [%i76, %i77, %i78] : tensor<?xf32> into tensor<?x?x?xf32>
  %v91 = tensor.mul %v84, %v90 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v92 = tensor.transpose %a11 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v93 = tensor.collapse_shape %v91 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v94 = tensor.expand_shape %v93 [[0, 1]] output_shape [%i79, %i80] : tensor<?xf32> into tensor<?x?xf32>
  %v95 = tensor.matmul %v94, %v92 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v96 = tensor.collapse_shape %v95 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v97 = tensor.expand_shape %v96 [[0, 1, 2]] output_shape [%i81, %i82, %i83] : tensor<?xf32> into tensor<?x?x?xf32>
  %v98 = tensor.add %v68, %v97 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v99 = tensor.mul %v98, %v98 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v100 = tensor.reduce_mean %v99 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v101 = tensor.convert %a12 : tensor<f64> -> tensor<f64>
  %v102 = tensor.convert %v101 : tensor<f64> -> tensor<f32>
  %v103 = tensor.add %v100, %v102 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v104 = tensor.rsqrt %v103 : tensor<?x?x1xf32>
  %v105 = tensor.mul %v98, %v104 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v106 = tensor.mul %v105, %a13 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v107 = tensor.transpose %a14 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v108 = tensor.collapse_shape %v106 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v109 = tensor.expand_shape %v108 [[0, 1]] output_shape [%i84, %i85] : tensor<?xf32> into tensor<?x?xf32>
  %v110 = tensor.matmul %v109, %v107 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v111 = tensor.collapse_shape %v110 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v112 = tensor.expand_shape %v111 [[0, 1, 2]] output_shape [%i86, %i87, %i88] : tensor<?xf32> into tensor<?x?x?xf32>
  %d132 = tensor.dim %v112, %c0 : tensor<?x?x?xf32>
  %d133 = tensor.dim %v112, %c1 : tensor<?x?x?xf32>
  %v113 = tensor.extract_slice %v112[0, 0, %i89] [%d132, %d133, %i90] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d135 = tensor.dim %v112, %c0 : tensor<?x?x?xf32>
  %d136 = tensor.dim %v112, %c1 : tensor<?x?x?xf32>
  %v114 = tensor.extract_slice %v112[0, 0, %i91] [%d135, %d136, %i92] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d138 = tensor.dim %v112, %c0 : tensor<?x?x?xf32>
  %d139 = tensor.dim %v112, %c1 : tensor<?x?x?xf32>
  %v115 = tensor.extract_slice %v112[0, 0, %i93] [%d138, %d139, %i94] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %v116 = tensor.collapse_shape %v113 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v117 = tensor.expand_shape %v116 [[0, 1, 2, 3]] output_shape [%i95, %i96, %i97, %i98] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v118 = tensor.transpose %v117 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v119 = tensor.collapse_shape %v114 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v120 = tensor.expand_shape %v119 [[0, 1, 2, 3]] output_shape [%i99, %i100, %i101, %i102] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v121 = tensor.transpose %v120 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v122 = tensor.collapse_shape %v115 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v123 = tensor.expand_shape %v122 [[0, 1, 2, 3]] output_shape [%i103, %i104, %i105, %i106] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v124 = tensor.transpose %v123 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v125 = tensor.expand_shape %a15 [[0, 1]] output_shape [%i107, 1] : tensor<?xf32> into tensor<?x1xf32>
  %v126 = tensor.mul %v125, %a16 : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v127 = tensor.concat dim(1) %v126, %v126 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v128 = tensor.cos %v127 : tensor<?x?xf32>
  func.return %v98, %v118, %v121, %v124, %v127, %v128 : tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// -----
func.func @segment(%a0: tensor<?x?xf32>, %a1: tensor<?x?x?x?xf32>, %a2: tensor<?x?xf32>, %a3: tensor<?x?x?x?xf32>, %a4: tensor<f32>, %a5: tensor<?x?x?x?xf32>, %a6: tensor<?x?xf32>, %a7: tensor<?x?x?xf32>, %a8: tensor<f64>, %a9: tensor<?xf32>, %a10: tensor<?x?xf32>, %a11: tensor<?x?xf32>, %a12: tensor<?x?xf32>, %a13: tensor<f64>, %a14: tensor<?xf32>, %a15: tensor<?x?xf32>, %a16: tensor<?xf32>, %a17: tensor<?xf32>, %i0: index, %i1: index, %i2: index, %i3: index, %i4: index, %i5: index, %i6: index, %i7: index, %i8: index, %i9: index, %i10: index, %i11: index, %i12: index, %i13: index, %i14: index, %i15: index, %i16: index, %i17: index, %i18: index, %i19: index, %i20: index, %i21: index, %i22: index, %i23: index, %i24: index, %i25: index, %i26: index, %i27: index, %i28: index, %i29: index, %i30: index, %i31: index, %i32: index, %i33: index, %i34: index, %i35: index, %i36: index, %i37: index, %i38: index, %i39: index, %i40: index, %i41: index, %i42: index, %i43: index, %i44: index, %i45: index, %i46: index, %i47: index, %i48: index, %i49: index, %i50: index, %i51: index, %i52: index, %i53: index, %i54: index, %i55: index, %i56: index, %i57: index, %i58: index, %i59: index, %i60: index, %i61: index, %i62: index, %i63: index, %i64: index, %i65: index, %i66: index, %i67: index, %i68: index, %i69: index, %i70: index, %i71: index, %i72: index, %i73: index, %i74: index, %i75: index, %i76: index, %i77: index, %i78: index, %i79: index, %i80: index, %i81: index, %i82: index, %i83: index, %i84: index, %i85: index, %i86: index, %i87: index, %i88: index, %i89: index, %i90: index, %i91: index, %i92: index, %i93: index, %i94: index, %i95: index, %i96: index, %i97: index, %i98: index) -> (tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %v0 = tensor.sin %a0 : tensor<?x?xf32>
  %v1 = tensor.mul %a1, %a2 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %c0 = arith.constant 0 : index
  %d2 = tensor.dim %a1, %c0 : tensor<?x?x?x?xf32>
  %c1 = arith.constant 1 : index
  %d4 = tensor.dim %a1, %c1 : tensor<?x?x?x?xf32>
  %c2 = arith.constant 2 : index
  %d6 = tensor.dim %a1, %c2 : tensor<?x?x?x?xf32>
  %v2 = tensor.extract_slice %a1[0, 0, 0, %i0] [%d2, %d4, %d6, %i1] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %d9 = tensor.dim %a1, %c0 : tensor<?x?x?x?xf32>
  %d10 = tensor.dim %a1, %c1 : tensor<?x?x?x?xf32>
  %d11 = tensor.dim %a1, %c2 : tensor<?x?x?x?xf32>
  %v3 = tensor.extract_slice %a1[0, 0, 0, %i2] [%d9, %d10, %d11, %i3] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %v4 = tensor.neg %v3 : tensor<?x?x?x?xf32>
  %v5 = tensor.concat dim(3) %v4, %v2 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v6 = tensor.mul %v5, %v0 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %v7 = tensor.add %v1, %v6 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v8 = tensor.mul %a3, %a2 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %d18 = tensor.dim %a3, %c0 : tensor<?x?x?x?xf32>
  %d19 = tensor.dim %a3, %c1 : tensor<?x?x?x?xf32>
  %d20 = tensor.dim %a3, %c2 : tensor<?x?x?x?xf32>
  %v9 = tensor.extract_slice %a3[0, 0, 0, %i4] [%d18, %d19, %d20, %i5] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %d22 = tensor.dim %a3, %c0 : tensor<?x?x?x?xf32>
  %d23 = tensor.dim %a3, %c1 : tensor<?x?x?x?xf32>
  %d24 = tensor.dim %a3, %c2 : tensor<?x?x?x?xf32>
  %v10 = tensor.extract_slice %a3[0, 0, 0, %i6] [%d22, %d23, %d24, %i7] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %v11 = tensor.neg %v10 : tensor<?x?x?x?xf32>
  %v12 = tensor.concat dim(3) %v11, %v9 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v13 = tensor.mul %v12, %v0 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %v14 = tensor.add %v8, %v13 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v15 = tensor.transpose %v14 {perm = [0, 1, 3, 2]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v16 = tensor.broadcast_to %v7 to [%i8, %i9, %i10, %i11] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v17 = tensor.convert %v16 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v18 = tensor.collapse_shape %v17 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v19 = tensor.expand_shape %v18 [[0, 1, 2]] output_shape [%i12, %i13, %i14] : tensor<?xf32> into tensor<?x?x?xf32>
  %v20 = tensor.broadcast_to %v15 to [%i15, %i16, %i17, %i18] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v21 = tensor.convert %v20 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v22 = tensor.collapse_shape %v21 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v23 = tensor.expand_shape %v22 [[0, 1, 2]] output_shape [%i19, %i20, %i21] : tensor<?xf32> into tensor<?x?x?xf32>
  %v24 = tensor.matmul %v19, %v23 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v25 = tensor.collapse_shape %v24 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v26 = tensor.expand_shape %v25 [[0, 1, 2, 3]] output_shape [%i22, %i23, %i24, %i25] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v27 = tensor.div %v26, %a4 : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %v28 = tensor.reduce_max %v27 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v29 = tensor.sub %v27, %v28 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v30 = tensor.exp %v29 : tensor<?x?x?x?xf32>
  %v31 = tensor.reduce_sum %v30 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v32 = tensor.div %v30, %v31 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v33 = tensor.broadcast_to %v32 to [%i26, %i27, %i28, %i29] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v34 = tensor.collapse_shape %v33 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v35 = tensor.expand_shape %v34 [[0, 1, 2]] output_shape [%i30, %i31, %i32] : tensor<?xf32> into tensor<?x?x?xf32>
  %v36 = tensor.broadcast_to %a5 to [%i33, %i34, %i35, %i36] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v37 = tensor.convert %v36 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v38 = tensor.collapse_shape %v37 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v39 = tensor.expand_shape %v38 [[0, 1, 2]] output_shape [%i37, %i38, %i39] : tensor<?xf32> into tensor<?x?x?xf32>
  %v40 = tensor.matmul %v35, %v39 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v41 = tensor.collapse_shape %v40 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v42 = tensor.expand_shape %v41 [[0, 1, 2, 3]] output_shape [%i40, %i41, %i42, %i43] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v43 = tensor.transpose %v42 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v44 = tensor.convert %v43 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v45 = tensor.collapse_shape %v44 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v46 = tensor.expand_shape %v45 [[0, 1, 2]] output_shape [%i44, %i45, %i46] : tensor<?xf32> into tensor<?x?x?xf32>
  %v47 = tensor.transpose %a6 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v48 = tensor.collapse_shape %v46 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v49 = tensor.expand_shape %v48 [[0, 1]] output_shape [%i47, %i48] : tensor<?xf32> into tensor<?x?xf32>
  %v50 = tensor.matmul %v49, %v47 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v51 = tensor.collapse_shape %v50 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v52 = tensor.expand_shape %v51 [[0, 1, 2]] output_shape [%i49, %i50, %i51] : tensor<?xf32> into tensor<?x?x?xf32>
  %v53 = tensor.add %a7, %v52 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v54 = tensor.mul %v53, %v53 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v55 = tensor.reduce_mean %v54 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v56 = tensor.convert %a8 : tensor<f64> -> tensor<f64>
  %v57 = tensor.convert %v56 : tensor<f64> -> tensor<f32>
  %v58 = tensor.add %v55, %v57 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v59 = tensor.rsqrt %v58 : tensor<?x?x1xf32>
  %v60 = tensor.mul %v53, %v59 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v61 = tensor.mul %v60, %a9 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v62 = tensor.transpose %a10 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v63 = tensor.collapse_shape %v61 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v64 = tensor.expand_shape %v63 [[0, 1]] output_shape [%i52, %i53] : tensor<?xf32> into tensor<?x?xf32>
  %v65 = tensor.matmul %v64, %v62 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v66 = tensor.collapse_shape %v65 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v67 = tensor.expand_shape %v66 [[0, 1, 2]] output_shape [%i54, %i55, %i56] : tensor<?xf32> into tensor<?x?x?xf32>
  %v68 = tensor.sigmoid %v67 : tensor<?x?x?xf32>
  %v69 = tensor.mul %v67, %v68 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v70 = tensor.transpose %a11 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v71 = tensor.collapse_shape %v61 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v72 = tensor.expand_shape %v71 [[0, 1]] output_shape [%i57, %i58] : tensor<?xf32> into tensor<?x?xf32>
  %v73 = tensor.matmul %v72, %v70 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v74 = tensor.collapse_shape %v73 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v75 = tensor.expand_shape %v74 [[0, 1, 2]] output_shape [%i59, %i60, %i61] : tensor<?xf32> into tensor<?x?x?xf32>
  %v76 = tensor.mul %v69, %v75 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v77 = tensor.transpose %a12 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v78 = tensor.collapse_shape %v76 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v79 = tensor.expand_shape %v78 [[0, 1]] output_shape [%i62, %i63] : tensor<?xf32> into tensor<?x?xf32>
  %v80 = tensor.matmul %v79, %v77 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v81 = tensor.collapse_shape %v80 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v82 = tensor.expand_shape %v81 [[0, 1, 2]] output_shape [%i64, %i65, %i66] : tensor<?xf32> into tensor<?x?x?xf32>
  %v83 = tensor.add %v53, %v82 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v84 = tensor.mul %v83, %v83 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v85 = tensor.reduce_mean %v84 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v86 = tensor.convert %a13 : tensor<f64> -> tensor<f64>
  %v87 = tensor.convert %v86 : tensor<f64> -> tensor<f32>
  %v88 = tensor.add %v85, %v87 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v89 = tensor.rsqrt %v88 : tensor<?x?x1xf32>
  %v90 = tensor.mul %v83, %v89 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v91 = tensor.mul %v90, %a14 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v92 = tensor.transpose %a15 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v93 = tensor.collapse_shape %v91 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v94 = tensor.expand_shape %v93 [[0, 1]] output_shape [%i67, %i68] : tensor<?xf32> into tensor<?x?xf32>
  %v95 = tensor.matmul %v94, %v92 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v96 = tensor.collapse_shape %v95 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v97 = tensor.expand_shape %v96 [[0, 1, 2]] output_shape [%i69, %i70, %i71] : tensor<?xf32> into tensor<?x?x?xf32>
  %d113 = tensor.dim %v97, %c0 : tensor<?x?x?xf32>
  %d114 = tensor.dim %v97, %c1 : tensor<?x?x?xf32>
  %v98 = tensor.extract_slice %v97[0, 0, %i72] [%d113, %d114, %i73] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d116 = tensor.dim %v97, %c0 : tensor<?x?x?xf32>
  %d117 = tensor.dim %v97, %c1 : tensor<?x?x?xf32>
  %v99 = tensor.extract_slice %v97[0, 0, %i74] [%d116, %d117, %i75] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d119 = tensor.dim %v97, %c0 : tensor<?x?x?xf32>
  %d120 = tensor.dim %v97, %c1 : tensor<?x?x?xf32>
  %v100 = tensor.extract_slice %v97[0, 0, %i76] [%d119, %d120, %i77] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %v101 = tensor.collapse_shape %v98 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v102 = tensor.expand_shape %v101 [[0, 1, 2, 3]] output_shape [%i78, %i79, %i80, %i81] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v103 = tensor.transpose %v102 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v104 = tensor.collapse_shape %v99 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v105 = tensor.expand_shape %v104 [[0, 1, 2, 3]] output_shape [%i82, %i83, %i84, %i85] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v106 = tensor.transpose %v105 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v107 = tensor.collapse_shape %v100 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v108 = tensor.expand_shape %v107 [[0, 1, 2, 3]] output_shape [%i86, %i87, %i88, %i89] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v109 = tensor.transpose %v108 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v110 = tensor.expand_shape %a16 [[0, 1]] output_shape [%i90, 1] : tensor<?xf32> into tensor<?x1xf32>
  %v111 = tensor.mul %v110, %a17 : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v112 = tensor.concat dim(1) %v111, %v111 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v113 = tensor.cos %v112 : tensor<?x?xf32>
  %v114 = tensor.sin %v112 : tensor<?x?xf32>
  %v115 = tensor.mul %v103, %v113 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %d137 = tensor.dim %v103, %c0 : tensor<?x?x?x?xf32>
  %d138 = tensor.dim %v103, %c1 : tensor<?x?x?x?xf32>
  %d139 = tensor.dim %v103, %c2 : tensor<?x?x?x?xf32>
  %v116 = tensor.extract_slice %v103[0, 0, 0, %i91] [%d137, %d138, %d139, %i92] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %d141 = tensor.dim %v103, %c0 : tensor<?x?x?x?xf32>
  %d142 = tensor.dim %v103, %c1 : tensor<?x?x?x?xf32>
  %d143 = tensor.dim %v103, %c2 : tensor<?x?x?x?xf32>
  %v117 = tensor.extract_slice %v103[0, 0, 0, %i93] [%d141, %d142, %d143, %i94] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %v118 = tensor.neg %v117 : tensor<?x?x?x?xf32>
  %v119 = tensor.concat dim(3) %v118, %v116 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v120 = tensor.mul %v119, %v114 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %v121 = tensor.add %v115, %v120 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v122 = tensor.mul %v106, %v113 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %d150 = tensor.dim %v106, %c0 : tensor<?x?x?x?xf32>
  %d151 = tensor.dim %v106, %c1 : tensor<?x?x?x?xf32>
  %d152 = tensor.dim %v106, %c2 : tensor<?x?x?x?xf32>
  %v123 = tensor.extract_slice %v106[0, 0, 0, %i95] [%d150, %d151, %d152, %i96] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %d154 = tensor.dim %v106, %c0 : tensor<?x?x?x?xf32>
  %d155 = tensor.dim %v106, %c1 : tensor<?x?x?x?xf32>
  %d156 = tensor.dim %v106, %c2 : tensor<?x?x?x?xf32>
  %v124 = tensor.extract_slice %v106[0, 0, 0, %i97] [%d154, %d155, %d156, %i98] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf32>
  %v125 = tensor.neg %v124 : tensor<?x?x?x?xf32>
  %v126 = tensor.concat dim(3) %v125, %v123 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v127 = tensor.mul %v126, %v114 : (tensor<?x?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?x?xf32>
  %v128 = tensor.add %v122, %v127 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  func.return %v83, %v109, %v121, %v122, %v127, %v128 : tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

// -----
func.func @segment(%a0: tensor<?x?x?x?xf32>, %a1: tensor<?x?x?x?xf32>, %a2: tensor<f32>, %a3: tensor<?x?x?x?xf32>, %a4: tensor<?x?xf32>, %a5: tensor<?x?x?xf32>, %a6: tensor<f64>, %a7: tensor<?xf32>, %a8: tensor<?x?xf32>, %a9: tensor<?x?xf32>, %a10: tensor<?x?xf32>, %i0: index, %i1: index, %i2: index, %i3: index, %i4: index, %i5: index, %i6: index, %i7: index, %i8: index, %i9: index, %i10: index, %i11: index, %i12: index, %i13: index, %i14: index, %i15: index, %i16: index, %i17: index, %i18: index, %i19: index, %i20: index, %i21: index, %i22: index, %i23: index, %i24: index, %i25: index, %i26: index, %i27: index, %i28: index, %i29: index, %i30: index, %i31: index, %i32: index, %i33: index, %i34: index, %i35: index, %i36: index, %i37: index, %i38: index, %i39: index, %i40: index, %i41: index, %i42: index, %i43: index, %i44: index, %i45: index, %i46: index, %i47: index, %i48: index, %i49: index, %i50: index, %i51: index, %i52: index, %i53: index, %i54: index, %i55: index, %i56: index, %i57: index, %i58: index) -> (tensor<?x?x?xf32>) {
  %v0 = tensor.transpose %a0 {perm = [0, 1, 3, 2]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v1 = tensor.broadcast_to %a1 to [%i0, %i1, %i2, %i3] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v2 = tensor.convert %v1 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v3 = tensor.collapse_shape %v2 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v4 = tensor.expand_shape %v3 [[0, 1, 2]] output_shape [%i4, %i5, %i6] : tensor<?xf32> into tensor<?x?x?xf32>
  %v5 = tensor.broadcast_to %v0 to [%i7, %i8, %i9, %i10] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v6 = tensor.convert %v5 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v7 = tensor.collapse_shape %v6 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v8 = tensor.expand_shape %v7 [[0, 1, 2]] output_shape [%i11, %i12, %i13] : tensor<?xf32> into tensor<?x?x?xf32>
  %v9 = tensor.matmul %v4, %v8 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v10 = tensor.collapse_shape %v9 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v11 = tensor.expand_shape %v10 [[0, 1, 2, 3]] output_shape [%i14, %i15, %i16, %i17] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v12 = tensor.div %v11, %a2 : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %v13 = tensor.reduce_max %v12 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v14 = tensor.sub %v12, %v13 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v15 = tensor.exp %v14 : tensor<?x?x?x?xf32>
  %v16 = tensor.reduce_sum %v15 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v17 = tensor.div %v15, %v16 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v18 = tensor.broadcast_to %v17 to [%i18, %i19, %i20, %i21] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v19 = tensor.collapse_shape %v18 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v20 = tensor.expand_shape %v19 [[0, 1, 2]] output_shape [%i22, %i23, %i24] : tensor<?xf32> into tensor<?x?x?xf32>
  %v21 = tensor.broadcast_to %a3 to [%i25, %i26, %i27, %i28] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v22 = tensor.convert %v21 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v23 = tensor.collapse_shape %v22 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v24 = tensor.expand_shape %v23 [[0, 1, 2]] output_shape [%i29, %i30, %i31] : tensor<?xf32> into tensor<?x?x?xf32>
  %v25 = tensor.matmul %v20, %v24 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v26 = tensor.collapse_shape %v25 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v27 = tensor.expand_shape %v26 [[0, 1, 2, 3]] output_shape [%i32, %i33, %i34, %i35] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v28 = tensor.transpose %v27 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v29 = tensor.convert %v28 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v30 = tensor.collapse_shape %v29 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v31 = tensor.expand_shape %v30 [[0, 1, 2]] output_shape [%i36, %i37, %i38] : tensor<?xf32> into tensor<?x?x?xf32>
  %v32 = tensor.transpose %a4 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v33 = tensor.collapse_shape %v31 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v34 = tensor.expand_shape %v33 [[0, 1]] output_shape [%i39, %i40] : tensor<?xf32> into tensor<?x?xf32>
  %v35 = tensor.matmul %v34, %v32 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v36 = tensor.collapse_shape %v35 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v37 = tensor.expand_shape %v36 [[0, 1, 2]] output_shape [%i41, %i42, %i43] : tensor<?xf32> into tensor<?x?x?xf32>
  %v38 = tensor.add %a5, %v37 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v39 = tensor.mul %v38, %v38 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v40 = tensor.reduce_mean %v39 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v41 = tensor.convert %a6 : tensor<f64> -> tensor<f64>
  %v42 = tensor.convert %v41 : tensor<f64> -> tensor<f32>
  %v43 = tensor.add %v40, %v42 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v44 = tensor.rsqrt %v43 : tensor<?x?x1xf32>
  %v45 = tensor.mul %v38, %v44 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v46 = tensor.mul %v45, %a7 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v47 = tensor.transpose %a8 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v48 = tensor.collapse_shape %v46 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v49 = tensor.expand_shape %v48 [[0, 1]] output_shape [%i44, %i45] : tensor<?xf32> into tensor<?x?xf32>
  %v50 = tensor.matmul %v49, %v47 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v51 = tensor.collapse_shape %v50 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v52 = tensor.expand_shape %v51 [[0, 1, 2]] output_shape [%i46, %i47, %i48] : tensor<?xf32> into tensor<?x?x?xf32>
  %v53 = tensor.sigmoid %v52 : tensor<?x?x?xf32>
  %v54 = tensor.mul %v52, %v53 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v55 = tensor.transpose %a9 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v56 = tensor.collapse_shape %v46 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v57 = tensor.expand_shape %v56 [[0, 1]] output_shape [%i49, %i50] : tensor<?xf32> into tensor<?x?xf32>
  %v58 = tensor.matmul %v57, %v55 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v59 = tensor.collapse_shape %v58 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v60 = tensor.expand_shape %v59 [[0, 1, 2]] output_shape [%i51, %i52, %i53] : tensor<?xf32> into tensor<?x?x?xf32>
  %v61 = tensor.mul %v54, %v60 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v62 = tensor.transpose %a10 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v63 = tensor.collapse_shape %v61 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v64 = tensor.expand_shape %v63 [[0, 1]] output_shape [%i54, %i55] : tensor<?xf32> into tensor<?x?xf32>
  %v65 = tensor.matmul %v64, %v62 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v66 = tensor.collapse_shape %v65 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v67 = tensor.expand_shape %v66 [[0, 1, 2]] output_shape [%i56, %i57, %i58] : tensor<?xf32> into tensor<?x?x?xf32>
  %v68 = tensor.add %v38, %v67 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %v68 : tensor<?x?x?xf32>
}

