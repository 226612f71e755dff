// The math ops round-trip: trigonometric and hyperbolic functions, expm1, log1p,
// sign, remainder and fmod on floats; isinf and isnan (float -> i1); bitwise ops,
// shifts, integer pow, remainder and sign on integers; clamp with a tensor and a
// 0-d bound. Printed in the generic form, re-parsed and printed again, the text
// is the same.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom --print-op-generic | dvm-opt | diff %t.custom -

// CHECK: builtin.module {
// CHECK-LABEL: func.func @float_math(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT:    %0 = tensor.tan %x : tensor<?x?xf32>
// CHECK-NEXT:    %1 = tensor.asin %0 : tensor<?x?xf32>
// CHECK-NEXT:    %2 = tensor.acos %1 : tensor<?x?xf32>
// CHECK-NEXT:    %3 = tensor.atan %2 : tensor<?x?xf32>
// CHECK-NEXT:    %4 = tensor.sinh %3 : tensor<?x?xf32>
// CHECK-NEXT:    %5 = tensor.cosh %4 : tensor<?x?xf32>
// CHECK-NEXT:    %6 = tensor.asinh %5 : tensor<?x?xf32>
// CHECK-NEXT:    %7 = tensor.acosh %6 : tensor<?x?xf32>
// CHECK-NEXT:    %8 = tensor.atanh %7 : tensor<?x?xf32>
// CHECK-NEXT:    %9 = tensor.expm1 %8 : tensor<?x?xf32>
// CHECK-NEXT:    %10 = tensor.log1p %9 : tensor<?x?xf32>
// CHECK-NEXT:    %11 = tensor.sign %10 : tensor<?x?xf32>
// CHECK-NEXT:    %12 = tensor.remainder %11, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %13 = tensor.fmod %12, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %13 : tensor<?x?xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @tests(%x: tensor<4xf16>) -> (tensor<4xi1>, tensor<4xi1>) {
// CHECK-NEXT:    %0 = tensor.isinf %x : tensor<4xf16> -> tensor<4xi1>
// CHECK-NEXT:    %1 = tensor.isnan %x : tensor<4xf16> -> tensor<4xi1>
// CHECK-NEXT:    func.return %0, %1 : tensor<4xi1>, tensor<4xi1>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @integer_math(%a: tensor<?xi32>, %b: tensor<i32>) -> tensor<?xi32> {
// CHECK-NEXT:    %0 = tensor.bitwise_not %a : tensor<?xi32>
// CHECK-NEXT:    %1 = tensor.bitwise_and %0, %b : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
// CHECK-NEXT:    %2 = tensor.bitwise_or %1, %a : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
// CHECK-NEXT:    %3 = tensor.bitwise_xor %2, %a : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
// CHECK-NEXT:    %4 = tensor.shl %3, %b : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
// CHECK-NEXT:    %5 = tensor.shr %4, %b : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
// CHECK-NEXT:    %6 = tensor.pow %5, %b : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
// CHECK-NEXT:    %7 = tensor.remainder %6, %a : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
// CHECK-NEXT:    %8 = tensor.sign %7 : tensor<?xi32>
// CHECK-NEXT:    func.return %8 : tensor<?xi32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @clamp(%x: tensor<?x8xf32>, %lo: tensor<8xf32>, %hi: tensor<f32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    %0 = tensor.clamp %x, %lo, %hi : (tensor<?x8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<?x8xf32>
// CHECK-NEXT:    func.return %0 : tensor<?x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  }

func.func @float_math(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = tensor.tan %x : tensor<?x?xf32>
  %1 = tensor.asin %0 : tensor<?x?xf32>
  %2 = tensor.acos %1 : tensor<?x?xf32>
  %3 = tensor.atan %2 : tensor<?x?xf32>
  %4 = tensor.sinh %3 : tensor<?x?xf32>
  %5 = tensor.cosh %4 : tensor<?x?xf32>
  %6 = tensor.asinh %5 : tensor<?x?xf32>
  %7 = tensor.acosh %6 : tensor<?x?xf32>
  %8 = tensor.atanh %7 : tensor<?x?xf32>
  %9 = tensor.expm1 %8 : tensor<?x?xf32>
  %10 = tensor.log1p %9 : tensor<?x?xf32>
  %11 = tensor.sign %10 : tensor<?x?xf32>
  %12 = tensor.remainder %11, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %13 = tensor.fmod %12, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %13 : tensor<?x?xf32>
}
func.func @tests(%x: tensor<4xf16>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = tensor.isinf %x : tensor<4xf16> -> tensor<4xi1>
  %1 = tensor.isnan %x : tensor<4xf16> -> tensor<4xi1>
  func.return %0, %1 : tensor<4xi1>, tensor<4xi1>
}
func.func @integer_math(%a: tensor<?xi32>, %b: tensor<i32>) -> tensor<?xi32> {
  %0 = tensor.bitwise_not %a : tensor<?xi32>
  %1 = tensor.bitwise_and %0, %b : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %2 = tensor.bitwise_or %1, %a : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  %3 = tensor.bitwise_xor %2, %a : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  %4 = tensor.shl %3, %b : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %5 = tensor.shr %4, %b : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %6 = tensor.pow %5, %b : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
  %7 = tensor.remainder %6, %a : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  %8 = tensor.sign %7 : tensor<?xi32>
  func.return %8 : tensor<?xi32>
}
func.func @clamp(%x: tensor<?x8xf32>, %lo: tensor<8xf32>, %hi: tensor<f32>) -> tensor<?x8xf32> {
  %0 = tensor.clamp %x, %lo, %hi : (tensor<?x8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<?x8xf32>
  func.return %0 : tensor<?x8xf32>
}
