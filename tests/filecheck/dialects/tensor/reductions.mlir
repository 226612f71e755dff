// Reductions with {axes, keepdims}: keepdims = false is the default and is not
// printed; axes may be listed in any order or be empty.
//
// The printed custom form is checked, then shown to be stable: printed in
// the generic form, re-parsed and printed again it is the same text.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom --print-op-generic | dvm-opt | diff %t.custom -

// CHECK: builtin.module {

// CHECK-LABEL: func.func @reduce(%x: tensor<?x?x128xf32>) -> (tensor<?x?x1xf32>, tensor<?x128xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<?x?xf32>) {
// CHECK-NEXT:    %max = tensor.reduce_max %x {axes = [2 : i64], keepdims = true} : tensor<?x?x128xf32> -> tensor<?x?x1xf32>
// CHECK-NEXT:    %sum = tensor.reduce_sum %x {axes = [0 : i64]} : tensor<?x?x128xf32> -> tensor<?x128xf32>
// CHECK-NEXT:    %mean = tensor.reduce_mean %x {axes = [0 : i64, 1 : i64, 2 : i64]} : tensor<?x?x128xf32> -> tensor<f32>
// CHECK-NEXT:    %min = tensor.reduce_min %x {axes = [2 : i64, 0 : i64, 1 : i64], keepdims = true} : tensor<?x?x128xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %prod = tensor.reduce_prod %x {axes = [2 : i64]} : tensor<?x?x128xf32> -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %max, %sum, %mean, %min, %prod : tensor<?x?x1xf32>, tensor<?x128xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @reduce(%x: tensor<?x?x128xf32>) -> (tensor<?x?x1xf32>, tensor<?x128xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<?x?xf32>) {
  %max = tensor.reduce_max %x {axes = [2], keepdims = true} : tensor<?x?x128xf32> -> tensor<?x?x1xf32>
  %sum = tensor.reduce_sum %x {axes = [0]} : tensor<?x?x128xf32> -> tensor<?x128xf32>
  %mean = tensor.reduce_mean %x {axes = [0, 1, 2]} : tensor<?x?x128xf32> -> tensor<f32>
  %min = tensor.reduce_min %x {axes = [2, 0, 1], keepdims = true} : tensor<?x?x128xf32> -> tensor<1x1x1xf32>
  %prod = tensor.reduce_prod %x {axes = [2], keepdims = false} : tensor<?x?x128xf32> -> tensor<?x?xf32>
  func.return %max, %sum, %mean, %min, %prod : tensor<?x?x1xf32>, tensor<?x128xf32>, tensor<f32>, tensor<1x1x1xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @integer_reduce(%x: tensor<4x?xi32>, %y: tensor<?xi64>) -> (tensor<4xi32>, tensor<i64>) {
// CHECK-NEXT:    %0 = tensor.reduce_sum %x {axes = [1 : i64]} : tensor<4x?xi32> -> tensor<4xi32>
// CHECK-NEXT:    %1 = tensor.reduce_max %y {axes = [0 : i64]} : tensor<?xi64> -> tensor<i64>
// CHECK-NEXT:    func.return %0, %1 : tensor<4xi32>, tensor<i64>
// CHECK-NEXT:  }
func.func @integer_reduce(%x: tensor<4x?xi32>, %y: tensor<?xi64>) -> (tensor<4xi32>, tensor<i64>) {
  %0 = tensor.reduce_sum %x {axes = [1]} : tensor<4x?xi32> -> tensor<4xi32>
  %1 = tensor.reduce_max %y {axes = [0]} : tensor<?xi64> -> tensor<i64>
  func.return %0, %1 : tensor<4xi32>, tensor<i64>
}

// CHECK-LABEL: func.func @no_axes(%x: tensor<?x3xf16>) -> tensor<?x3xf16> {
// CHECK-NEXT:    %0 = tensor.reduce_sum %x {axes = []} : tensor<?x3xf16> -> tensor<?x3xf16>
// CHECK-NEXT:    func.return %0 : tensor<?x3xf16>
// CHECK-NEXT:  }
func.func @no_axes(%x: tensor<?x3xf16>) -> tensor<?x3xf16> {
  %0 = tensor.reduce_sum %x {axes = []} : tensor<?x3xf16> -> tensor<?x3xf16>
  func.return %0 : tensor<?x3xf16>
}

