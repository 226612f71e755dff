// Layout ops: convert, broadcast_to, transpose, and the upstream-syntax ops
// dim, expand_shape, collapse_shape and extract.
//
// The printed custom form is checked, then shown to be stable: printed in
// the generic form, re-parsed and printed again it is the same text.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom --print-op-generic | dvm-opt | diff %t.custom -

// CHECK: builtin.module {

// CHECK-LABEL: func.func @convert(%x: tensor<?x64xf16>, %n: tensor<?x1xi32>, %m: tensor<4xi1>) -> (tensor<?x64xf32>, tensor<?x1xf64>, tensor<4xi8>) {
// CHECK-NEXT:    %0 = tensor.convert %x : tensor<?x64xf16> -> tensor<?x64xf32>
// CHECK-NEXT:    %1 = tensor.convert %n : tensor<?x1xi32> -> tensor<?x1xf64>
// CHECK-NEXT:    %2 = tensor.convert %m : tensor<4xi1> -> tensor<4xi8>
// CHECK-NEXT:    func.return %0, %1, %2 : tensor<?x64xf32>, tensor<?x1xf64>, tensor<4xi8>
// CHECK-NEXT:  }
func.func @convert(%x: tensor<?x64xf16>, %n: tensor<?x1xi32>, %m: tensor<4xi1>) -> (tensor<?x64xf32>, tensor<?x1xf64>, tensor<4xi8>) {
  %0 = tensor.convert %x : tensor<?x64xf16> -> tensor<?x64xf32>
  %1 = tensor.convert %n : tensor<?x1xi32> -> tensor<?x1xf64>
  %2 = tensor.convert %m : tensor<4xi1> -> tensor<4xi8>
  func.return %0, %1, %2 : tensor<?x64xf32>, tensor<?x1xf64>, tensor<4xi8>
}

// CHECK-LABEL: func.func @broadcast_to(%b: tensor<64xf32>, %s: tensor<f32>, %n: index) -> (tensor<?x64xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:    %0 = tensor.broadcast_to %b to [%n, 64] : tensor<64xf32> -> tensor<?x64xf32>
// CHECK-NEXT:    %1 = tensor.broadcast_to %s to [2, 3] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %0, %1 : tensor<?x64xf32>, tensor<2x3xf32>
// CHECK-NEXT:  }
func.func @broadcast_to(%b: tensor<64xf32>, %s: tensor<f32>, %n: index) -> (tensor<?x64xf32>, tensor<2x3xf32>) {
  %0 = tensor.broadcast_to %b to [%n, 64] : tensor<64xf32> -> tensor<?x64xf32>
  %1 = tensor.broadcast_to %s to [2, 3] : tensor<f32> -> tensor<2x3xf32>
  func.return %0, %1 : tensor<?x64xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @transpose(%x: tensor<?x4x?x16xf32>, %m: tensor<3x5xi64>) -> (tensor<?x?x4x16xf32>, tensor<5x3xi64>) {
// CHECK-NEXT:    %0 = tensor.transpose %x {perm = [0 : i64, 2 : i64, 1 : i64, 3 : i64]} : tensor<?x4x?x16xf32> -> tensor<?x?x4x16xf32>
// CHECK-NEXT:    %1 = tensor.transpose %m {perm = [1 : i64, 0 : i64]} : tensor<3x5xi64> -> tensor<5x3xi64>
// CHECK-NEXT:    func.return %0, %1 : tensor<?x?x4x16xf32>, tensor<5x3xi64>
// CHECK-NEXT:  }
func.func @transpose(%x: tensor<?x4x?x16xf32>, %m: tensor<3x5xi64>) -> (tensor<?x?x4x16xf32>, tensor<5x3xi64>) {
  %0 = tensor.transpose %x {perm = [0, 2, 1, 3]} : tensor<?x4x?x16xf32> -> tensor<?x?x4x16xf32>
  %1 = tensor.transpose %m {perm = [1, 0]} : tensor<3x5xi64> -> tensor<5x3xi64>
  func.return %0, %1 : tensor<?x?x4x16xf32>, tensor<5x3xi64>
}

// CHECK-LABEL: func.func @reshape(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %b = tensor.dim %x, %c0 : tensor<?x?x64xf32>
// CHECK-NEXT:    %s = tensor.dim %x, %c1 : tensor<?x?x64xf32>
// CHECK-NEXT:    %e = tensor.expand_shape %x {{\[\[}}0 : i64], [1 : i64], [2 : i64, 3 : i64]] output_shape [%b, %s, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
// CHECK-NEXT:    %c = tensor.collapse_shape %e {{\[\[}}0 : i64], [1 : i64], [2 : i64, 3 : i64]] : tensor<?x?x4x16xf32> into tensor<?x?x64xf32>
// CHECK-NEXT:    func.return %c : tensor<?x?x64xf32>
// CHECK-NEXT:  }
func.func @reshape(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %e = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [%b, %s, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
  %c = tensor.collapse_shape %e [[0], [1], [2, 3]] : tensor<?x?x4x16xf32> into tensor<?x?x64xf32>
  func.return %c : tensor<?x?x64xf32>
}

// CHECK-LABEL: func.func @static_reshape(%x: tensor<12xi32>) -> tensor<12xi32> {
// CHECK-NEXT:    %e = tensor.expand_shape %x {{\[\[}}0 : i64, 1 : i64]] output_shape [3, 4] : tensor<12xi32> into tensor<3x4xi32>
// CHECK-NEXT:    %c = tensor.collapse_shape %e {{\[\[}}0 : i64, 1 : i64]] : tensor<3x4xi32> into tensor<12xi32>
// CHECK-NEXT:    func.return %c : tensor<12xi32>
// CHECK-NEXT:  }
func.func @static_reshape(%x: tensor<12xi32>) -> tensor<12xi32> {
  %e = tensor.expand_shape %x [[0, 1]] output_shape [3, 4] : tensor<12xi32> into tensor<3x4xi32>
  %c = tensor.collapse_shape %e [[0, 1]] : tensor<3x4xi32> into tensor<12xi32>
  func.return %c : tensor<12xi32>
}

// An empty reassociation reshapes between rank 0 and static 1s (upstream's rule).
// CHECK-LABEL: func.func @rank0_reshape(%x: tensor<1x1xf32>) -> tensor<1x1x1xf32> {
// CHECK-NEXT:    %c = tensor.collapse_shape %x [] : tensor<1x1xf32> into tensor<f32>
// CHECK-NEXT:    %e = tensor.expand_shape %c [] output_shape [1, 1, 1] : tensor<f32> into tensor<1x1x1xf32>
// CHECK-NEXT:    func.return %e : tensor<1x1x1xf32>
// CHECK-NEXT:  }
func.func @rank0_reshape(%x: tensor<1x1xf32>) -> tensor<1x1x1xf32> {
  %c = tensor.collapse_shape %x [] : tensor<1x1xf32> into tensor<f32>
  %e = tensor.expand_shape %c [] output_shape [1, 1, 1] : tensor<f32> into tensor<1x1x1xf32>
  func.return %e : tensor<1x1x1xf32>
}

// CHECK-LABEL: func.func @extract(%p: tensor<i1>, %m: tensor<?x?xf32>, %i: index) -> (i1, f32) {
// CHECK-NEXT:    %b = tensor.extract %p[] : tensor<i1>
// CHECK-NEXT:    %v = tensor.extract %m[%i, %i] : tensor<?x?xf32>
// CHECK-NEXT:    func.return %b, %v : i1, f32
// CHECK-NEXT:  }
func.func @extract(%p: tensor<i1>, %m: tensor<?x?xf32>, %i: index) -> (i1, f32) {
  %b = tensor.extract %p[] : tensor<i1>
  %v = tensor.extract %m[%i, %i] : tensor<?x?xf32>
  func.return %b, %v : i1, f32
}

