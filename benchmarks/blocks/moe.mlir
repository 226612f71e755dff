func.func @segment(%a0: tensor<?x?xf32>, %a1: tensor<?x?xf32>, %a2: tensor<?xf32>, %a3: tensor<f32>, %a4: tensor<?x?xf32>, %a5: tensor<?xf32>, %a6: tensor<f32>, %a7: tensor<?x?xf32>, %a8: tensor<?xf32>, %a9: tensor<f32>, %a10: tensor<?x?xf32>, %a11: tensor<?xf32>, %a12: tensor<f32>, %a13: tensor<?x?xf32>, %a14: tensor<?xf32>, %a15: tensor<1x?xf32>, %a16: tensor<1xf32>, %a17: tensor<?x?xf32>, %a18: tensor<?xf32>, %a19: tensor<1x?xf32>, %a20: tensor<1xf32>, %i0: index, %i1: index, %i2: index, %i3: index, %i4: index, %i5: index, %i6: index) -> (tensor<?x?xf32>) {
  %v0 = tensor.transpose %a0 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v1 = tensor.matmul %a1, %v0 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v2 = tensor.add %v1, %a2 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v3 = tensor.max %v2, %a3 : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %v4 = tensor.transpose %a4 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v5 = tensor.matmul %a1, %v4 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v6 = tensor.add %v5, %a5 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v7 = tensor.max %v6, %a6 : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %v8 = tensor.transpose %a7 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v9 = tensor.matmul %a1, %v8 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v10 = tensor.add %v9, %a8 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v11 = tensor.max %v10, %a9 : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %v12 = tensor.transpose %a10 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v13 = tensor.matmul %a1, %v12 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v14 = tensor.add %v13, %a11 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v15 = tensor.max %v14, %a12 : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %v16 = tensor.concat dim(1) %v3, %v7, %v11, %v15 : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v17 = tensor.collapse_shape %v16 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v18 = tensor.expand_shape %v17 [[0, 1, 2]] output_shape [%i0, %i1, %i2] : tensor<?xf32> into tensor<?x?x?xf32>
  %v19 = tensor.transpose %a13 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v20 = tensor.matmul %a1, %v19 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v21 = tensor.add %v20, %a14 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v22 = tensor.reduce_max %v21 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %v23 = tensor.sub %v21, %v22 : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %v24 = tensor.exp %v23 : tensor<?x?xf32>
  %v25 = tensor.reduce_sum %v24 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %v26 = tensor.div %v24, %v25 : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %v27 = tensor.expand_shape %v26 [[0], [1, 2]] output_shape [%i3, %i4, 1] : tensor<?x?xf32> into tensor<?x?x1xf32>
  %v28 = tensor.mul %v27, %v18 : (tensor<?x?x1xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v29 = tensor.reduce_sum %v28 {axes = [1], keepdims = false} : tensor<?x?x?xf32> -> tensor<?x?xf32>
  %v30 = tensor.transpose %a15 {perm = [1, 0]} : tensor<1x?xf32> -> tensor<?x1xf32>
  %v31 = tensor.matmul %v29, %v30 : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  %v32 = tensor.add %v31, %a16 : (tensor<?x1xf32>, tensor<1xf32>) -> tensor<?x1xf32>
  %v33 = tensor.sigmoid %v32 : tensor<?x1xf32>
  %v34 = tensor.transpose %a17 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v35 = tensor.matmul %a1, %v34 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v36 = tensor.add %v35, %a18 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v37 = tensor.reduce_max %v36 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %v38 = tensor.sub %v36, %v37 : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %v39 = tensor.exp %v38 : tensor<?x?xf32>
  %v40 = tensor.reduce_sum %v39 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %v41 = tensor.div %v39, %v40 : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %v42 = tensor.expand_shape %v41 [[0], [1, 2]] output_shape [%i5, %i6, 1] : tensor<?x?xf32> into tensor<?x?x1xf32>
  %v43 = tensor.mul %v42, %v18 : (tensor<?x?x1xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v44 = tensor.reduce_sum %v43 {axes = [1], keepdims = false} : tensor<?x?x?xf32> -> tensor<?x?xf32>
  %v45 = tensor.transpose %a19 {perm = [1, 0]} : tensor<1x?xf32> -> tensor<?x1xf32>
  %v46 = tensor.matmul %v44, %v45 : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  %v47 = tensor.add %v46, %a20 : (tensor<?x1xf32>, tensor<1xf32>) -> tensor<?x1xf32>
  %v48 = tensor.sigmoid %v47 : tensor<?x1xf32>
  %v49 = tensor.concat dim(1) %v33, %v48 : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %v49 : tensor<?x?xf32>
}

