// RUN: dvm-opt %s -p symbolic-shapes,expand-arg-reductions | filecheck %s
// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s --check-prefix=ALONE

// `expand-arg-reductions` alone: an argmax becomes a max over its axis, a
// compare with it (or `isnan`: the first NaN wins), an iota of the positions, a
// select (the largest i64 where the element is not the max) and a min over the
// axis, each with its shape; an argmin likewise with a min; a boolean row is
// compared as `ui8`. Without the pass, `fuse` leaves an argmax out of kernels.

func.func @pick(%x: tensor<?x?xf32>, %b: tensor<?x?xi1>) -> (tensor<?xi64>, tensor<?x1xi32>) {
  %a = tensor.argmax %x {axis = 1} : tensor<?x?xf32> -> tensor<?xi64>
  %m = tensor.argmin %b {axis = 1, keepdims = true} : tensor<?x?xi1> -> tensor<?x1xi32>
  func.return %a, %m : tensor<?xi64>, tensor<?x1xi32>
}

// CHECK:      %{{.*}} = tensor.reduce_max %x {dvm.shape = #dvm.shape<x_0, 1>, axes = [1 : i64], keepdims = true}
// CHECK-NEXT: %{{.*}} = tensor.eq
// CHECK-NEXT: %{{.*}} = tensor.isnan %x
// CHECK-NEXT: %{{.*}} = tensor.logical_or
// CHECK:      %{{.*}} = tensor.iota dim(1)
// CHECK-SAME:   tensor<?x?xi64>
// CHECK:      %{{.*}} = arith.constant {{.*}}dense<9223372036854775807> : tensor<i64>
// CHECK-NEXT: %{{.*}} = tensor.select
// CHECK-NEXT: %{{.*}} = tensor.reduce_min {{.*}}#dvm.shape<x_0>, axes = [1 : i64]}
// CHECK:      %{{.*}} = tensor.convert %b {{.*}} -> tensor<?x?xui8>
// CHECK-NEXT: %{{.*}} = tensor.reduce_min
// CHECK-NEXT: %{{.*}} = tensor.eq
// CHECK-NOT:  tensor.isnan
// CHECK:      %{{.*}} = tensor.reduce_min {{.*}}keepdims = true{{.*}} -> tensor<?x1xi32>
// CHECK-NOT:  tensor.argm

// ALONE:      tensor.argmax %x
// ALONE:      tensor.argmin %b
