// Elementwise unary ops: float-only ops on f16/f32/f64, neg/abs on integers,
// isfinite (float -> i1) and logical_not (i1), on dynamic, static and 0-d tensors.
//
// The printed custom form is checked, then shown to be stable: printed in
// the generic form, re-parsed and printed again it is the same text.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom --print-op-generic | dvm-opt | diff %t.custom -

// CHECK: builtin.module {

// CHECK-LABEL: func.func @float_unary(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT:    %0 = tensor.neg %x : tensor<?x?xf32>
// CHECK-NEXT:    %1 = tensor.abs %0 : tensor<?x?xf32>
// CHECK-NEXT:    %2 = tensor.exp %1 : tensor<?x?xf32>
// CHECK-NEXT:    %3 = tensor.log %2 : tensor<?x?xf32>
// CHECK-NEXT:    %4 = tensor.sqrt %3 : tensor<?x?xf32>
// CHECK-NEXT:    %5 = tensor.rsqrt %4 : tensor<?x?xf32>
// CHECK-NEXT:    %6 = tensor.reciprocal %5 : tensor<?x?xf32>
// CHECK-NEXT:    %7 = tensor.tanh %6 : tensor<?x?xf32>
// CHECK-NEXT:    %8 = tensor.sigmoid %7 : tensor<?x?xf32>
// CHECK-NEXT:    %9 = tensor.erf %8 : tensor<?x?xf32>
// CHECK-NEXT:    %10 = tensor.floor %9 : tensor<?x?xf32>
// CHECK-NEXT:    %11 = tensor.ceil %10 : tensor<?x?xf32>
// CHECK-NEXT:    %12 = tensor.round %11 : tensor<?x?xf32>
// CHECK-NEXT:    %13 = tensor.trunc %12 : tensor<?x?xf32>
// CHECK-NEXT:    func.return %13 : tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @float_unary(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = tensor.neg %x : tensor<?x?xf32>
  %1 = tensor.abs %0 : tensor<?x?xf32>
  %2 = tensor.exp %1 : tensor<?x?xf32>
  %3 = tensor.log %2 : tensor<?x?xf32>
  %4 = tensor.sqrt %3 : tensor<?x?xf32>
  %5 = tensor.rsqrt %4 : tensor<?x?xf32>
  %6 = tensor.reciprocal %5 : tensor<?x?xf32>
  %7 = tensor.tanh %6 : tensor<?x?xf32>
  %8 = tensor.sigmoid %7 : tensor<?x?xf32>
  %9 = tensor.erf %8 : tensor<?x?xf32>
  %10 = tensor.floor %9 : tensor<?x?xf32>
  %11 = tensor.ceil %10 : tensor<?x?xf32>
  %12 = tensor.round %11 : tensor<?x?xf32>
  %13 = tensor.trunc %12 : tensor<?x?xf32>
  func.return %13 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @other_floats(%h: tensor<8xf16>, %d: tensor<2x?x4xf64>, %s: tensor<f32>) -> (tensor<8xf16>, tensor<2x?x4xf64>, tensor<f32>) {
// CHECK-NEXT:    %h1 = tensor.exp %h : tensor<8xf16>
// CHECK-NEXT:    %d1 = tensor.tanh %d : tensor<2x?x4xf64>
// CHECK-NEXT:    %s1 = tensor.sqrt %s : tensor<f32>
// CHECK-NEXT:    func.return %h1, %d1, %s1 : tensor<8xf16>, tensor<2x?x4xf64>, tensor<f32>
// CHECK-NEXT:  }
func.func @other_floats(%h: tensor<8xf16>, %d: tensor<2x?x4xf64>, %s: tensor<f32>) -> (tensor<8xf16>, tensor<2x?x4xf64>, tensor<f32>) {
  %h1 = tensor.exp %h : tensor<8xf16>
  %d1 = tensor.tanh %d : tensor<2x?x4xf64>
  %s1 = tensor.sqrt %s : tensor<f32>
  func.return %h1, %d1, %s1 : tensor<8xf16>, tensor<2x?x4xf64>, tensor<f32>
}

// CHECK-LABEL: func.func @integer_unary(%a: tensor<?xi32>, %b: tensor<3x?xi64>, %c: tensor<i8>) -> (tensor<?xi32>, tensor<3x?xi64>, tensor<i8>) {
// CHECK-NEXT:    %a1 = tensor.neg %a : tensor<?xi32>
// CHECK-NEXT:    %b1 = tensor.abs %b : tensor<3x?xi64>
// CHECK-NEXT:    %c1 = tensor.neg %c : tensor<i8>
// CHECK-NEXT:    func.return %a1, %b1, %c1 : tensor<?xi32>, tensor<3x?xi64>, tensor<i8>
// CHECK-NEXT:  }
func.func @integer_unary(%a: tensor<?xi32>, %b: tensor<3x?xi64>, %c: tensor<i8>) -> (tensor<?xi32>, tensor<3x?xi64>, tensor<i8>) {
  %a1 = tensor.neg %a : tensor<?xi32>
  %b1 = tensor.abs %b : tensor<3x?xi64>
  %c1 = tensor.neg %c : tensor<i8>
  func.return %a1, %b1, %c1 : tensor<?xi32>, tensor<3x?xi64>, tensor<i8>
}

// CHECK-LABEL: func.func @bool_results(%x: tensor<?x4xf32>, %m: tensor<?x4xi1>) -> (tensor<?x4xi1>, tensor<?x4xi1>) {
// CHECK-NEXT:    %fin = tensor.isfinite %x : tensor<?x4xf32> -> tensor<?x4xi1>
// CHECK-NEXT:    %not = tensor.logical_not %m : tensor<?x4xi1>
// CHECK-NEXT:    func.return %fin, %not : tensor<?x4xi1>, tensor<?x4xi1>
// CHECK-NEXT:  }
func.func @bool_results(%x: tensor<?x4xf32>, %m: tensor<?x4xi1>) -> (tensor<?x4xi1>, tensor<?x4xi1>) {
  %fin = tensor.isfinite %x : tensor<?x4xf32> -> tensor<?x4xi1>
  %not = tensor.logical_not %m : tensor<?x4xi1>
  func.return %fin, %not : tensor<?x4xi1>, tensor<?x4xi1>
}

