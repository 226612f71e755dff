func.func @segment(%a0: tensor<?x?x?xf32>, %a1: tensor<f64>, %a2: tensor<?xf32>, %a3: tensor<?x?xf32>, %a4: tensor<?xf32>, %a5: tensor<?x?xf32>, %a6: tensor<?xf32>, %a7: tensor<?x?xf32>, %a8: tensor<?xf32>, %i0: index, %i1: index, %i2: index, %i3: index, %i4: index, %i5: index, %i6: index, %i7: index, %i8: index, %i9: index, %i10: index, %i11: index, %i12: index, %i13: index, %i14: index) -> (tensor<?x?x?xf32>) {
  %v0 = tensor.mul %a0, %a0 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v1 = tensor.reduce_mean %v0 {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %v2 = tensor.convert %a1 : tensor<f64> -> tensor<f64>
  %v3 = tensor.convert %v2 : tensor<f64> -> tensor<f32>
  %v4 = tensor.add %v1, %v3 : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %v5 = tensor.rsqrt %v4 : tensor<?x?x1xf32>
  %v6 = tensor.mul %a0, %v5 : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %v7 = tensor.mul %v6, %a2 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %v8 = tensor.collapse_shape %v7 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v9 = tensor.expand_shape %v8 [[0, 1]] output_shape [%i0, %i1] : tensor<?xf32> into tensor<?x?xf32>
  %v10 = tensor.transpose %a3 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v11 = tensor.matmul %v9, %v10 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v12 = tensor.add %v11, %a4 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v13 = tensor.collapse_shape %v12 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v14 = tensor.expand_shape %v13 [[0, 1, 2]] output_shape [%i2, %i3, %i4] : tensor<?xf32> into tensor<?x?x?xf32>
  %v15 = tensor.sigmoid %v14 : tensor<?x?x?xf32>
  %v16 = tensor.mul %v14, %v15 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v17 = tensor.collapse_shape %v7 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v18 = tensor.expand_shape %v17 [[0, 1]] output_shape [%i5, %i6] : tensor<?xf32> into tensor<?x?xf32>
  %v19 = tensor.transpose %a5 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v20 = tensor.matmul %v18, %v19 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v21 = tensor.add %v20, %a6 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v22 = tensor.collapse_shape %v21 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v23 = tensor.expand_shape %v22 [[0, 1, 2]] output_shape [%i7, %i8, %i9] : tensor<?xf32> into tensor<?x?x?xf32>
  %v24 = tensor.mul %v16, %v23 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %v25 = tensor.collapse_shape %v24 [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %v26 = tensor.expand_shape %v25 [[0, 1]] output_shape [%i10, %i11] : tensor<?xf32> into tensor<?x?xf32>
  %v27 = tensor.transpose %a7 {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %v28 = tensor.matmul %v26, %v27 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v29 = tensor.add %v28, %a8 : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %v30 = tensor.collapse_shape %v29 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %v31 = tensor.expand_shape %v30 [[0, 1, 2]] output_shape [%i12, %i13, %i14] : tensor<?xf32> into tensor<?x?x?xf32>
  %v32 = tensor.add %a0, %v31 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %v32 : tensor<?x?x?xf32>
}

