// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// An overflow guard: whether a row holds an inf, and whether all of it is
// finite. The tests and both reductions over rows are one vector kernel.

func.func @overflow(%x: tensor<?x?xf32>) -> (tensor<?xi1>, tensor<?x1xi1>) {
  %inf = tensor.isinf %x : tensor<?x?xf32> -> tensor<?x?xi1>
  %fin = tensor.isfinite %x : tensor<?x?xf32> -> tensor<?x?xi1>
  %a = tensor.reduce_any %inf {axes = [1]} : tensor<?x?xi1> -> tensor<?xi1>
  %l = tensor.reduce_all %fin {axes = [1], keepdims = true} : tensor<?x?xi1> -> tensor<?x1xi1>
  func.return %a, %l : tensor<?xi1>, tensor<?x1xi1>
}

// CHECK:      tensor.fusion vector (%x) {dvm.domain = #dvm.shape<x_0, x_1>, dvm.reduced = [1 : i64]
// CHECK:        tensor.isinf
// CHECK-NEXT:   tensor.isfinite
// CHECK-NEXT:   tensor.reduce_any {{.*}}axes = [1 : i64]
// CHECK-NEXT:   tensor.reduce_all {{.*}}axes = [1 : i64], keepdims = true
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

// ROUND: %a = tensor.reduce_any %inf {axes = [1 : i64]} : tensor<?x?xi1> -> tensor<?xi1>
// ROUND: %l = tensor.reduce_all %fin {axes = [1 : i64], keepdims = true} : tensor<?x?xi1> -> tensor<?x1xi1>
