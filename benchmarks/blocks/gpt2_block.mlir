func.func @segment(%a0: tensor<?x?x?xf32>, %a1: tensor<f32>, %a2: tensor<f32>, %a3: tensor<?xf32>, %a4: tensor<?xf32>, %a5: tensor<?x?xf32>, %a6: tensor<?xf32>, %a7: tensor<f32>, %a8: tensor<1x1x?x?xf32>, %a9: tensor<f32>, %a10: tensor<f32>, %a11: tensor<?x?xf32>, %a12: tensor<?xf32>, %a13: tensor<f32>, %a14: tensor<f32>, %a15: tensor<?xf32>, %a16: tensor<?xf32>, %a17: tensor<?x?xf32>, %a18: tensor<?xf32>, %a19: tensor<f32>, %a20: tensor<f32>, %a21: tensor<f32>, %a22: tensor<?x?xf32>, %a23: tensor<?xf32>, %i0: index, %i1: index, %i2: index, %i3: index, %i4: index, %i5: index, %i6: index, %i7: index, %i8: index, %i9: index, %i10: index, %i11: index, %i12: index, %i13: index, %i14: index, %i15: index, %i16: index, %i17: index, %i18: index, %i19: index, %i20: index, %i21: index, %i22: index, %i23: index, %i24: index, %i25: index, %i26: index, %i27: index, %i28: index, %i29: index, %i30: index, %i31: index, %i32: index, %i33: index, %i34: index, %i35: index, %i36: index, %i37: index, %i38: index, %i39: index, %i40: index, %i41: index, %i42: index, %i43: index, %i44: index, %i45: index, %i46: index, %i47: index, %i48: index, %i49: index, %i50: index, %i51: index, %i52: index, %i53: index, %i54: index, %i55: index, %i56: index, %i57: index, %i58: index, %i59: index, %i60: index, %i61: index, %i62: index, %i63: index, %i64: index, %i65: index, %i66: index, %i67: index, %i68: index, %i69: index, %i70: index, %i71: index, %i72: index, %i73: index, %i74: index, %i75: index, %i76: index, %i77: index, %i78: index, %i79: index, %i80: index) -> (tensor<?x?x?xf32>) {
  %v0 = tensor.reduce_mean %a0 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v1 = tensor.sub %a0, %v0 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v2 = tensor.mul %v1, %v1 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v3 = tensor.reduce_mean %v2 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v4 = tensor.add %v3, %a1 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v5 = tensor.sqrt %v4 : tensor<?x?x1xf32>
  %v6 = tensor.div %a2, %v5 : (tensor<f32>, tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %v7 = tensor.mul %v1, %v6 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v8 = tensor.mul %v7, %a3 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v9 = tensor.add %v8, %a4 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v10 = tensor.collapse_shape %v9 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v11 = tensor.expand_shape %v10 [[0, 1]] output_shape [%i0, %i1] : tensor<?xf32> into tensor<?x?xf32>
  %v12 = tensor.transpose %a5 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v13 = tensor.matmul %v11, %v12 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v14 = tensor.add %v13, %a6 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v15 = tensor.collapse_shape %v14 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v16 = tensor.expand_shape %v15 [[0, 1, 2]] output_shape [%i2, %i3, %i4] : tensor<?xf32> into tensor<?x?x?xf32>
  %c0 = arith.constant 0 : index
  %d17 = tensor.dim %v16, %c0 : tensor<?x?x?xf32>
  %c1 = arith.constant 1 : index
  %d19 = tensor.dim %v16, %c1 : tensor<?x?x?xf32>
  %v17 = tensor.extract_slice %v16[0, 0, %i5] [%d17, %d19, %i6] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d22 = tensor.dim %v16, %c0 : tensor<?x?x?xf32>
  %d23 = tensor.dim %v16, %c1 : tensor<?x?x?xf32>
  %v18 = tensor.extract_slice %v16[0, 0, %i7] [%d22, %d23, %i8] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d25 = tensor.dim %v16, %c0 : tensor<?x?x?xf32>
  %d26 = tensor.dim %v16, %c1 : tensor<?x?x?xf32>
  %v19 = tensor.extract_slice %v16[0, 0, %i9] [%d25, %d26, %i10] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %v20 = tensor.collapse_shape %v17 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v21 = tensor.expand_shape %v20 [[0, 1, 2, 3]] output_shape [%i11, %i12, %i13, %i14] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v22 = tensor.transpose %v21 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v23 = tensor.collapse_shape %v18 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v24 = tensor.expand_shape %v23 [[0, 1, 2, 3]] output_shape [%i15, %i16, %i17, %i18] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v25 = tensor.transpose %v24 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v26 = tensor.collapse_shape %v19 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v27 = tensor.expand_shape %v26 [[0, 1, 2, 3]] output_shape [%i19, %i20, %i21, %i22] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v28 = tensor.transpose %v27 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v29 = tensor.transpose %v25 {perm = [0, 1, 3, 2]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v30 = tensor.broadcast_to %v22 to [%i23, %i24, %i25, %i26] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v31 = tensor.convert %v30 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v32 = tensor.collapse_shape %v31 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v33 = tensor.expand_shape %v32 [[0, 1, 2]] output_shape [%i27, %i28, %i29] : tensor<?xf32> into tensor<?x?x?xf32>
  %v34 = tensor.broadcast_to %v29 to [%i30, %i31, %i32, %i33] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v35 = tensor.convert %v34 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v36 = tensor.collapse_shape %v35 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v37 = tensor.expand_shape %v36 [[0, 1, 2]] output_shape [%i34, %i35, %i36] : tensor<?xf32> into tensor<?x?x?xf32>
  %v38 = tensor.matmul %v33, %v37 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v39 = tensor.collapse_shape %v38 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v40 = tensor.expand_shape %v39 [[0, 1, 2, 3]] output_shape [%i37, %i38, %i39, %i40] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v41 = tensor.mul %v40, %a7 : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %d50 = tensor.dim %a8, %c0 : tensor<1x1x?x?xf32>
  %d51 = tensor.dim %a8, %c1 : tensor<1x1x?x?xf32>
  %c3 = arith.constant 3 : index
  %d52 = tensor.dim %a8, %c3 : tensor<1x1x?x?xf32>
  %v42 = tensor.extract_slice %a8[0, 0, %i41, 0] [%d50, %d51, %i42, %d52] [1, 1, 1, 1] : tensor<1x1x?x?xf32> to tensor<1x1x?x?xf32>
  %d55 = tensor.dim %v42, %c0 : tensor<1x1x?x?xf32>
  %d56 = tensor.dim %v42, %c1 : tensor<1x1x?x?xf32>
  %c2 = arith.constant 2 : index
  %d57 = tensor.dim %v42, %c2 : tensor<1x1x?x?xf32>
  %v43 = tensor.extract_slice %v42[0, 0, 0, %i43] [%d55, %d56, %d57, %i44] [1, 1, 1, 1] : tensor<1x1x?x?xf32> to tensor<1x1x?x?xf32>
  %v44 = tensor.eq %v43, %a9 : (tensor<1x1x?x?xf32>, tensor<f32>) -> tensor<1x1x?x?xi1>
  %v45 = tensor.select %v44, %a10, %v41 : (tensor<1x1x?x?xi1>, tensor<f32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v46 = tensor.reduce_max %v45 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v47 = tensor.sub %v45, %v46 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v48 = tensor.exp %v47 : tensor<?x?x?x?xf32>
  %v49 = tensor.reduce_sum %v48 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v50 = tensor.div %v48, %v49 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v51 = tensor.broadcast_to %v50 to [%i45, %i46, %i47, %i48] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v52 = tensor.collapse_shape %v51 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v53 = tensor.expand_shape %v52 [[0, 1, 2]] output_shape [%i49, %i50, %i51] : tensor<?xf32> into tensor<?x?x?xf32>
  %v54 = tensor.broadcast_to %v28 to [%i52, %i53, %i54, %i55] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v55 = tensor.convert %v54 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v56 = tensor.collapse_shape %v55 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v57 = tensor.expand_shape %v56 [[0, 1, 2]] output_shape [%i56, %i57, %i58] : tensor<?xf32> into tensor<?x?x?xf32>
  %v58 = tensor.matmul %v53, %v57 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v59 = tensor.collapse_shape %v58 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v60 = tensor.expand_shape %v59 [[0, 1, 2, 3]] output_shape [%i59, %i60, %i61, %i62] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v61 = tensor.transpose %v60 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v62 = tensor.convert %v61 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v63 = tensor.collapse_shape %v62 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v64 = tensor.expand_shape %v63 [[0, 1, 2]] output_shape [%i63, %i64, %i65] : tensor<?xf32> into tensor<?x?x?xf32>
  %v65 = tensor.collapse_shape %v64 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v66 = tensor.expand_shape %v65 [[0, 1]] output_shape [%i66, %i67] : tensor<?xf32> into tensor<?x?xf32>
  %v67 = tensor.transpose %a11 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v68 = tensor.matmul %v66, %v67 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v69 = tensor.add %v68, %a12 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v70 = tensor.collapse_shape %v69 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v71 = tensor.expand_shape %v70 [[0, 1, 2]] output_shape [%i68, %i69, %i70] : tensor<?xf32> into tensor<?x?x?xf32>
  %v72 = tensor.add %a0, %v71 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v73 = tensor.reduce_mean %v72 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v74 = tensor.sub %v72, %v73 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v75 = tensor.mul %v74, %v74 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v76 = tensor.reduce_mean %v75 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v77 = tensor.add %v76, %a13 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v78 = tensor.sqrt %v77 : tensor<?x?x1xf32>
  %v79 = tensor.div %a14, %v78 : (tensor<f32>, tensor<?x?x1xf32>) -> tensor<?x?x1xf32>
  %v80 = tensor.mul %v74, %v79 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v81 = tensor.mul %v80, %a15 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v82 = tensor.add %v81, %a16 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v83 = tensor.collapse_shape %v82 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v84 = tensor.expand_shape %v83 [[0, 1]] output_shape [%i71, %i72] : tensor<?xf32> into tensor<?x?xf32>
  %v85 = tensor.transpose %a17 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v86 = tensor.matmul %v84, %v85 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v87 = tensor.add %v86, %a18 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v88 = tensor.collapse_shape %v87 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v89 = tensor.expand_shape %v88 [[0, 1, 2]] output_shape [%i73, %i74, %i75] : tensor<?xf32> into tensor<?x?x?xf32>
  %v90 = tensor.mul %a19, %v89 : (tensor<f32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v91 = tensor.mul %v89, %a20 : (tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %v92 = tensor.erf %v91 : tensor<?x?x?xf32>
  %v93 = tensor.add %a21, %v92 : (tensor<f32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v94 = tensor.mul %v90, %v93 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v95 = tensor.collapse_shape %v94 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v96 = tensor.expand_shape %v95 [[0, 1]] output_shape [%i76, %i77] : tensor<?xf32> into tensor<?x?xf32>
  %v97 = tensor.transpose %a22 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v98 = tensor.matmul %v96, %v97 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v99 = tensor.add %v98, %a23 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v100 = tensor.collapse_shape %v99 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v101 = tensor.expand_shape %v100 [[0, 1, 2]] output_shape [%i78, %i79, %i80] : tensor<?xf32> into tensor<?x?x?xf32>
  %v102 = tensor.add %v72, %v101 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %v102 : tensor<?x?x?xf32>
}

