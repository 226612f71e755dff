// Elementwise binary ops with numpy broadcasting (0-d operands included),
// comparisons to i1, logical and/or on i1, and select.
//
// The printed custom form is checked, then shown to be stable: printed in
// the generic form, re-parsed and printed again it is the same text.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom --print-op-generic | dvm-opt | diff %t.custom -

// CHECK: builtin.module {

// CHECK-LABEL: func.func @arithmetic(%a: tensor<?x?xf32>, %b: tensor<?xf32>, %s: tensor<f32>) -> tensor<?x?xf32> {
// CHECK-NEXT:    %0 = tensor.add %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %1 = tensor.sub %0, %s : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %2 = tensor.mul %s, %1 : (tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %3 = tensor.div %2, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %4 = tensor.pow %3, %s : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %5 = tensor.max %4, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %6 = tensor.min %5, %s : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
// CHECK-NEXT:    func.return %6 : tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @arithmetic(%a: tensor<?x?xf32>, %b: tensor<?xf32>, %s: tensor<f32>) -> tensor<?x?xf32> {
  %0 = tensor.add %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %1 = tensor.sub %0, %s : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %2 = tensor.mul %s, %1 : (tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %3 = tensor.div %2, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %4 = tensor.pow %3, %s : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %5 = tensor.max %4, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %6 = tensor.min %5, %s : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  func.return %6 : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @broadcast_static(%col: tensor<4x1xf64>, %row: tensor<1x5xf64>, %s: tensor<f64>) -> (tensor<4x5xf64>, tensor<f64>) {
// CHECK-NEXT:    %outer = tensor.mul %col, %row : (tensor<4x1xf64>, tensor<1x5xf64>) -> tensor<4x5xf64>
// CHECK-NEXT:    %scalar = tensor.add %s, %s : (tensor<f64>, tensor<f64>) -> tensor<f64>
// CHECK-NEXT:    func.return %outer, %scalar : tensor<4x5xf64>, tensor<f64>
// CHECK-NEXT:  }
func.func @broadcast_static(%col: tensor<4x1xf64>, %row: tensor<1x5xf64>, %s: tensor<f64>) -> (tensor<4x5xf64>, tensor<f64>) {
  %outer = tensor.mul %col, %row : (tensor<4x1xf64>, tensor<1x5xf64>) -> tensor<4x5xf64>
  %scalar = tensor.add %s, %s : (tensor<f64>, tensor<f64>) -> tensor<f64>
  func.return %outer, %scalar : tensor<4x5xf64>, tensor<f64>
}

// CHECK-LABEL: func.func @integers(%a: tensor<?x8xi32>, %b: tensor<8xi32>, %c: tensor<?xi64>, %d: tensor<i8>) -> (tensor<?x8xi32>, tensor<?xi64>, tensor<i8>) {
// CHECK-NEXT:    %0 = tensor.div %a, %b : (tensor<?x8xi32>, tensor<8xi32>) -> tensor<?x8xi32>
// CHECK-NEXT:    %1 = tensor.max %c, %c : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
// CHECK-NEXT:    %2 = tensor.sub %d, %d : (tensor<i8>, tensor<i8>) -> tensor<i8>
// CHECK-NEXT:    func.return %0, %1, %2 : tensor<?x8xi32>, tensor<?xi64>, tensor<i8>
// CHECK-NEXT:  }
func.func @integers(%a: tensor<?x8xi32>, %b: tensor<8xi32>, %c: tensor<?xi64>, %d: tensor<i8>) -> (tensor<?x8xi32>, tensor<?xi64>, tensor<i8>) {
  %0 = tensor.div %a, %b : (tensor<?x8xi32>, tensor<8xi32>) -> tensor<?x8xi32>
  %1 = tensor.max %c, %c : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi64>
  %2 = tensor.sub %d, %d : (tensor<i8>, tensor<i8>) -> tensor<i8>
  func.return %0, %1, %2 : tensor<?x8xi32>, tensor<?xi64>, tensor<i8>
}

// CHECK-LABEL: func.func @compare(%a: tensor<?x?xf32>, %b: tensor<?xf32>, %i: tensor<?xi32>, %m: tensor<?xi1>) -> (tensor<?x?xi1>, tensor<?xi1>) {
// CHECK-NEXT:    %eq = tensor.eq %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xi1>
// CHECK-NEXT:    %ne = tensor.ne %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xi1>
// CHECK-NEXT:    %lt = tensor.lt %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xi1>
// CHECK-NEXT:    %le = tensor.le %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xi1>
// CHECK-NEXT:    %gt = tensor.gt %i, %i : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
// CHECK-NEXT:    %ge = tensor.ge %m, %m : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
// CHECK-NEXT:    %or = tensor.logical_or %eq, %ne : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
// CHECK-NEXT:    %and = tensor.logical_and %or, %ge : (tensor<?x?xi1>, tensor<?xi1>) -> tensor<?x?xi1>
// CHECK-NEXT:    %both = tensor.logical_and %gt, %m : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
// CHECK-NEXT:    func.return %and, %both : tensor<?x?xi1>, tensor<?xi1>
// CHECK-NEXT:  }
func.func @compare(%a: tensor<?x?xf32>, %b: tensor<?xf32>, %i: tensor<?xi32>, %m: tensor<?xi1>) -> (tensor<?x?xi1>, tensor<?xi1>) {
  %eq = tensor.eq %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xi1>
  %ne = tensor.ne %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xi1>
  %lt = tensor.lt %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xi1>
  %le = tensor.le %a, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xi1>
  %gt = tensor.gt %i, %i : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi1>
  %ge = tensor.ge %m, %m : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  %or = tensor.logical_or %eq, %ne : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
  %and = tensor.logical_and %or, %ge : (tensor<?x?xi1>, tensor<?xi1>) -> tensor<?x?xi1>
  %both = tensor.logical_and %gt, %m : (tensor<?xi1>, tensor<?xi1>) -> tensor<?xi1>
  func.return %and, %both : tensor<?x?xi1>, tensor<?xi1>
}

// CHECK-LABEL: func.func @select(%c: tensor<?x?xi1>, %a: tensor<?x?xf32>, %s: tensor<f32>, %k: tensor<i1>, %i: tensor<3xi32>) -> (tensor<?x?xf32>, tensor<3xi32>) {
// CHECK-NEXT:    %0 = tensor.select %c, %a, %s : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
// CHECK-NEXT:    %1 = tensor.select %k, %i, %i : (tensor<i1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
// CHECK-NEXT:    func.return %0, %1 : tensor<?x?xf32>, tensor<3xi32>
// CHECK-NEXT:  }
func.func @select(%c: tensor<?x?xi1>, %a: tensor<?x?xf32>, %s: tensor<f32>, %k: tensor<i1>, %i: tensor<3xi32>) -> (tensor<?x?xf32>, tensor<3xi32>) {
  %0 = tensor.select %c, %a, %s : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %1 = tensor.select %k, %i, %i : (tensor<i1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %0, %1 : tensor<?x?xf32>, tensor<3xi32>
}

