func.func @segment(%a0: tensor<?x?x?xf32>, %a1: tensor<?x?xf32>, %a2: tensor<?xf32>, %a3: tensor<f32>, %a4: tensor<1x1x?x?xf32>, %a5: tensor<f32>, %a6: tensor<f32>, %a7: tensor<?x?xf32>, %a8: tensor<?xf32>, %i0: index, %i1: index, %i2: index, %i3: index, %i4: index, %i5: index, %i6: index, %i7: index, %i8: index, %i9: index, %i10: index, %i11: index, %i12: index, %i13: index, %i14: index, %i15: index, %i16: index, %i17: index, %i18: index, %i19: index, %i20: index, %i21: index, %i22: index, %i23: index, %i24: index, %i25: index, %i26: index, %i27: index, %i28: index, %i29: index, %i30: index, %i31: index, %i32: index, %i33: index, %i34: index, %i35: index, %i36: index, %i37: index, %i38: index, %i39: index, %i40: index, %i41: index, %i42: index, %i43: index, %i44: index, %i45: index, %i46: index, %i47: index, %i48: index, %i49: index, %i50: index, %i51: index, %i52: index, %i53: index, %i54: index, %i55: index, %i56: index, %i57: index, %i58: index, %i59: index, %i60: index, %i61: index, %i62: index, %i63: index, %i64: index, %i65: index, %i66: index, %i67: index, %i68: index, %i69: index, %i70: index) -> (tensor<?x?x?xf32>) {
  %v0 = tensor.collapse_shape %a0 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v1 = tensor.expand_shape %v0 [[0, 1]] output_shape [%i0, %i1] : tensor<?xf32> into tensor<?x?xf32>
  %v2 = tensor.transpose %a1 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v3 = tensor.matmul %v1, %v2 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v4 = tensor.add %v3, %a2 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v5 = tensor.collapse_shape %v4 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v6 = tensor.expand_shape %v5 [[0, 1, 2]] output_shape [%i2, %i3, %i4] : tensor<?xf32> into tensor<?x?x?xf32>
  %c0 = arith.constant 0 : index
  %d7 = tensor.dim %v6, %c0 : tensor<?x?x?xf32>
  %c1 = arith.constant 1 : index
  %d9 = tensor.dim %v6, %c1 : tensor<?x?x?xf32>
  %v7 = tensor.extract_slice %v6[0, 0, %i5] [%d7, %d9, %i6] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d12 = tensor.dim %v6, %c0 : tensor<?x?x?xf32>
  %d13 = tensor.dim %v6, %c1 : tensor<?x?x?xf32>
  %v8 = tensor.extract_slice %v6[0, 0, %i7] [%d12, %d13, %i8] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %d15 = tensor.dim %v6, %c0 : tensor<?x?x?xf32>
  %d16 = tensor.dim %v6, %c1 : tensor<?x?x?xf32>
  %v9 = tensor.extract_slice %v6[0, 0, %i9] [%d15, %d16, %i10] [1, 1, 1] : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %v10 = tensor.collapse_shape %v7 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v11 = tensor.expand_shape %v10 [[0, 1, 2, 3]] output_shape [%i11, %i12, %i13, %i14] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v12 = tensor.transpose %v11 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v13 = tensor.collapse_shape %v8 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v14 = tensor.expand_shape %v13 [[0, 1, 2, 3]] output_shape [%i15, %i16, %i17, %i18] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v15 = tensor.transpose %v14 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v16 = tensor.collapse_shape %v9 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v17 = tensor.expand_shape %v16 [[0, 1, 2, 3]] output_shape [%i19, %i20, %i21, %i22] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v18 = tensor.transpose %v17 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v19 = tensor.transpose %v15 {perm = [0, 1, 3, 2]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v20 = tensor.broadcast_to %v12 to [%i23, %i24, %i25, %i26] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v21 = tensor.convert %v20 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v22 = tensor.collapse_shape %v21 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v23 = tensor.expand_shape %v22 [[0, 1, 2]] output_shape [%i27, %i28, %i29] : tensor<?xf32> into tensor<?x?x?xf32>
  %v24 = tensor.broadcast_to %v19 to [%i30, %i31, %i32, %i33] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v25 = tensor.convert %v24 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v26 = tensor.collapse_shape %v25 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v27 = tensor.expand_shape %v26 [[0, 1, 2]] output_shape [%i34, %i35, %i36] : tensor<?xf32> into tensor<?x?x?xf32>
  %v28 = tensor.matmul %v23, %v27 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v29 = tensor.collapse_shape %v28 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v30 = tensor.expand_shape %v29 [[0, 1, 2, 3]] output_shape [%i37, %i38, %i39, %i40] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v31 = tensor.mul %v30, %a3 : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
  %d40 = tensor.dim %a4, %c0 : tensor<1x1x?x?xf32>
  %d41 = tensor.dim %a4, %c1 : tensor<1x1x?x?xf32>
  %c3 = arith.constant 3 : index
  %d42 = tensor.dim %a4, %c3 : tensor<1x1x?x?xf32>
  %v32 = tensor.extract_slice %a4[0, 0, %i41, 0] [%d40, %d41, %i42, %d42] [1, 1, 1, 1] : tensor<1x1x?x?xf32> to tensor<1x1x?x?xf32>
  %d45 = tensor.dim %v32, %c0 : tensor<1x1x?x?xf32>
  %d46 = tensor.dim %v32, %c1 : tensor<1x1x?x?xf32>
  %c2 = arith.constant 2 : index
  %d47 = tensor.dim %v32, %c2 : tensor<1x1x?x?xf32>
  %v33 = tensor.extract_slice %v32[0, 0, 0, %i43] [%d45, %d46, %d47, %i44] [1, 1, 1, 1] : tensor<1x1x?x?xf32> to tensor<1x1x?x?xf32>
  %v34 = tensor.eq %v33, %a5 : (tensor<1x1x?x?xf32>, tensor<f32>) -> tensor<1x1x?x?xi1>
  %v35 = tensor.select %v34, %a6, %v31 : (tensor<1x1x?x?xi1>, tensor<f32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %v36 = tensor.reduce_max %v35 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v37 = tensor.sub %v35, %v36 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v38 = tensor.exp %v37 : tensor<?x?x?x?xf32>
  %v39 = tensor.reduce_sum %v38 {axes = [3], keepdims = true} : tensor<?x?x?x?xf32> -> tensor<?x?x?x1xf32>
  %v40 = tensor.div %v38, %v39 : (tensor<?x?x?x?xf32>, tensor<?x?x?x1xf32>) -> tensor<?x?x?x?xf32>
  %v41 = tensor.broadcast_to %v40 to [%i45, %i46, %i47, %i48] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v42 = tensor.collapse_shape %v41 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v43 = tensor.expand_shape %v42 [[0, 1, 2]] output_shape [%i49, %i50, %i51] : tensor<?xf32> into tensor<?x?x?xf32>
  %v44 = tensor.broadcast_to %v18 to [%i52, %i53, %i54, %i55] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v45 = tensor.convert %v44 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v46 = tensor.collapse_shape %v45 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v47 = tensor.expand_shape %v46 [[0, 1, 2]] output_shape [%i56, %i57, %i58] : tensor<?xf32> into tensor<?x?x?xf32>
  %v48 = tensor.matmul %v43, %v47 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v49 = tensor.collapse_shape %v48 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v50 = tensor.expand_shape %v49 [[0, 1, 2, 3]] output_shape [%i59, %i60, %i61, %i62] : tensor<?xf32> into tensor<?x?x?x?xf32>
  %v51 = tensor.transpose %v50 {perm = [0, 2, 1, 3]} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v52 = tensor.convert %v51 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %v53 = tensor.collapse_shape %v52 [[0, 1, 2, 3]] : tensor<?x?x?x?xf32> into tensor<?xf32>
  %v54 = tensor.expand_shape %v53 [[0, 1, 2]] output_shape [%i63, %i64, %i65] : tensor<?xf32> into tensor<?x?x?xf32>
  %v55 = tensor.collapse_shape %v54 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v56 = tensor.expand_shape %v55 [[0, 1]] output_shape [%i66, %i67] : tensor<?xf32> into tensor<?x?xf32>
  %v57 = tensor.transpose %a7 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v58 = tensor.matmul %v56, %v57 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v59 = tensor.add %v58, %a8 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v60 = tensor.collapse_shape %v59 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v61 = tensor.expand_shape %v60 [[0, 1, 2]] output_shape [%i68, %i69, %i70] : tensor<?xf32> into tensor<?x?x?xf32>
  func.return %v61 : tensor<?x?x?xf32>
}

