// Tensors through upstream control flow: scf.if, scf.for with iter_args and
// scf.while, with the predicate taken from a 0-d i1 tensor by tensor.extract.
//
// The printed custom form is checked, then shown to be stable: printed in
// the generic form, re-parsed and printed again it is the same text.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom --print-op-generic | dvm-opt | diff %t.custom -

// CHECK: builtin.module {

// CHECK-LABEL: func.func @if_else(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT:    %zero = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %s = tensor.reduce_sum %x {axes = [0 : i64, 1 : i64]} : tensor<?x?xf32> -> tensor<f32>
// CHECK-NEXT:    %p = tensor.gt %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT:    %c = tensor.extract %p[] : tensor<i1>
// CHECK-NEXT:    %y = scf.if %c -> (tensor<?x?xf32>) {
// CHECK-NEXT:      %t = tensor.exp %x : tensor<?x?xf32>
// CHECK-NEXT:      scf.yield %t : tensor<?x?xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %t_1 = tensor.neg %x : tensor<?x?xf32>
// CHECK-NEXT:      scf.yield %t_1 : tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @if_else(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %s = tensor.reduce_sum %x {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  %p = tensor.gt %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %c = tensor.extract %p[] : tensor<i1>
  %y = scf.if %c -> (tensor<?x?xf32>) {
    %t = tensor.exp %x : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  } else {
    %t = tensor.neg %x : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  func.return %y : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @for_loop(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x?xf32>) {
// CHECK-NEXT:      %m = tensor.matmul %acc, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:      %t = tensor.tanh %m : tensor<?x?xf32>
// CHECK-NEXT:      scf.yield %t : tensor<?x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<?x?xf32>
// CHECK-NEXT:  }
func.func @for_loop(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x?xf32>) {
    %m = tensor.matmul %acc, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    %t = tensor.tanh %m : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @while_loop(%x: tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT:    %limit = arith.constant dense<1.000000e+02> : tensor<f32>
// CHECK-NEXT:    %two = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %r = scf.while (%v = %x) : (tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT:      %total = tensor.reduce_sum %v {axes = [0 : i64]} : tensor<?xf32> -> tensor<f32>
// CHECK-NEXT:      %small = tensor.lt %total, %limit : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT:      %go = tensor.extract %small[] : tensor<i1>
// CHECK-NEXT:      scf.condition(%go) %v : tensor<?xf32>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%v_1: tensor<?xf32>):
// CHECK-NEXT:      %next = tensor.mul %v_1, %two : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
// CHECK-NEXT:      scf.yield %next : tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<?xf32>
// CHECK-NEXT:  }
func.func @while_loop(%x: tensor<?xf32>) -> tensor<?xf32> {
  %limit = arith.constant dense<1.000000e+02> : tensor<f32>
  %two = arith.constant dense<2.000000e+00> : tensor<f32>
  %r = scf.while (%v = %x) : (tensor<?xf32>) -> tensor<?xf32> {
    %total = tensor.reduce_sum %v {axes = [0]} : tensor<?xf32> -> tensor<f32>
    %small = tensor.lt %total, %limit : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %go = tensor.extract %small[] : tensor<i1>
    scf.condition(%go) %v : tensor<?xf32>
  } do {
  ^bb0(%v: tensor<?xf32>):
    %next = tensor.mul %v, %two : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    scf.yield %next : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}

