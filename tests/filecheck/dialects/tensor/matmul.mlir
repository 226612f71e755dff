// matmul: 2-D, batched with numpy batch broadcasting, transpose_a/transpose_b
// (false is the default and is not printed), float and integer.
//
// The printed custom form is checked, then shown to be stable: printed in
// the generic form, re-parsed and printed again it is the same text.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom --print-op-generic | dvm-opt | diff %t.custom -

// CHECK: builtin.module {

// CHECK-LABEL: func.func @matmul_2d(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT:    %c = tensor.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %c : tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @matmul_2d(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = tensor.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @matmul_static(%a: tensor<4x8xf16>, %b: tensor<8x2xf16>) -> tensor<4x2xf16> {
// CHECK-NEXT:    %c = tensor.matmul %a, %b : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
// CHECK-NEXT:    func.return %c : tensor<4x2xf16>
// CHECK-NEXT:  }
func.func @matmul_static(%a: tensor<4x8xf16>, %b: tensor<8x2xf16>) -> tensor<4x2xf16> {
  %c = tensor.matmul %a, %b : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
  func.return %c : tensor<4x2xf16>
}

// CHECK-LABEL: func.func @batched(%x: tensor<?x?x64xf32>, %w: tensor<64x256xf32>, %e: tensor<?x32x16xf32>, %v: tensor<?x32xf32>) -> (tensor<?x?x256xf32>, tensor<?x?x16xf32>) {
// CHECK-NEXT:    %0 = tensor.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
// CHECK-NEXT:    %1 = tensor.matmul %v, %e : (tensor<?x32xf32>, tensor<?x32x16xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT:    func.return %0, %1 : tensor<?x?x256xf32>, tensor<?x?x16xf32>
// CHECK-NEXT:  }
func.func @batched(%x: tensor<?x?x64xf32>, %w: tensor<64x256xf32>, %e: tensor<?x32x16xf32>, %v: tensor<?x32xf32>) -> (tensor<?x?x256xf32>, tensor<?x?x16xf32>) {
  %0 = tensor.matmul %x, %w : (tensor<?x?x64xf32>, tensor<64x256xf32>) -> tensor<?x?x256xf32>
  %1 = tensor.matmul %v, %e : (tensor<?x32xf32>, tensor<?x32x16xf32>) -> tensor<?x?x16xf32>
  func.return %0, %1 : tensor<?x?x256xf32>, tensor<?x?x16xf32>
}

// CHECK-LABEL: func.func @batch_broadcast(%a: tensor<2x1x4x8xf64>, %b: tensor<3x8x5xf64>) -> tensor<2x3x4x5xf64> {
// CHECK-NEXT:    %c = tensor.matmul %a, %b : (tensor<2x1x4x8xf64>, tensor<3x8x5xf64>) -> tensor<2x3x4x5xf64>
// CHECK-NEXT:    func.return %c : tensor<2x3x4x5xf64>
// CHECK-NEXT:  }
func.func @batch_broadcast(%a: tensor<2x1x4x8xf64>, %b: tensor<3x8x5xf64>) -> tensor<2x3x4x5xf64> {
  %c = tensor.matmul %a, %b : (tensor<2x1x4x8xf64>, tensor<3x8x5xf64>) -> tensor<2x3x4x5xf64>
  func.return %c : tensor<2x3x4x5xf64>
}

// CHECK-LABEL: func.func @transposed(%a: tensor<8x4xf32>, %b: tensor<5x8xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x4xf32>) {
// CHECK-NEXT:    %bt = tensor.transpose %b {perm = [1 : i64, 0 : i64]} : tensor<5x8xf32> -> tensor<8x5xf32>
// CHECK-NEXT:    %0 = tensor.matmul %a, %bt {transpose_a = true} : (tensor<8x4xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %1 = tensor.matmul %a, %b {transpose_a = true, transpose_b = true} : (tensor<8x4xf32>, tensor<5x8xf32>) -> tensor<4x5xf32>
// CHECK-NEXT:    %2 = tensor.matmul %a, %a {transpose_a = true} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %0, %1, %2 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x4xf32>
// CHECK-NEXT:  }
func.func @transposed(%a: tensor<8x4xf32>, %b: tensor<5x8xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x4xf32>) {
  %bt = tensor.transpose %b {perm = [1, 0]} : tensor<5x8xf32> -> tensor<8x5xf32>
  %0 = tensor.matmul %a, %bt {transpose_a = true} : (tensor<8x4xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %1 = tensor.matmul %a, %b {transpose_a = true, transpose_b = true} : (tensor<8x4xf32>, tensor<5x8xf32>) -> tensor<4x5xf32>
  %2 = tensor.matmul %a, %a {transpose_a = true, transpose_b = false} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  func.return %0, %1, %2 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @integer_matmul(%a: tensor<?x3xi32>, %b: tensor<3x?xi32>) -> tensor<?x?xi32> {
// CHECK-NEXT:    %c = tensor.matmul %a, %b : (tensor<?x3xi32>, tensor<3x?xi32>) -> tensor<?x?xi32>
// CHECK-NEXT:    func.return %c : tensor<?x?xi32>
// CHECK-NEXT:  }
func.func @integer_matmul(%a: tensor<?x3xi32>, %b: tensor<3x?xi32>) -> tensor<?x?xi32> {
  %c = tensor.matmul %a, %b : (tensor<?x3xi32>, tensor<3x?xi32>) -> tensor<?x?xi32>
  func.return %c : tensor<?x?xi32>
}

