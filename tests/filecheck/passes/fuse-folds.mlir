// Before `fuse` groups ops, it drops same-type converts and reads the dims of
// computed values from the arguments' dims (`passes/prefuse_folds.py`): each
// would otherwise keep a value alive outside the kernel that computes it.
//
// RUN: dvm-opt %s --split-input-file -p symbolic-shapes,fuse | filecheck %s

// A convert to its own type is a copy: its users read its source, so the matmul
// reads an argument and the exp after it joins its kernel (the copy was a kernel
// of its own before the matmul's).

// CHECK-LABEL: func.func @copies(
// CHECK-NEXT:    %e = tensor.fusion mix (%x, %w)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %m = tensor.matmul
// CHECK-NEXT:      %e_1 = tensor.exp %m
// CHECK-NEXT:      tensor.yield %e_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %e
func.func @copies(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = tensor.convert %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %m = tensor.matmul %c, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %m2 = tensor.convert %m : tensor<?x?xf32> -> tensor<?x?xf32>
  %e = tensor.exp %m2 : tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}

// -----

// A copy of an argument that the function returns stays: each output is an
// array of its own.

// CHECK-LABEL: func.func @returned_copy(
// CHECK-NEXT:    %kept = tensor.fusion vector (%x)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %kept_1 = tensor.convert
// CHECK:         func.return %kept, %x
func.func @returned_copy(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %kept = tensor.convert %x : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %kept, %x : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// A dim of a computed value is read from the arguments' dims instead: the value
// it measures is then not needed outside the kernel that computes it.

// CHECK-LABEL: func.func @dims(
// CHECK:         %n = tensor.dim {{.*}} %x,
// CHECK:         %m = tensor.dim {{.*}} %x,
// CHECK-NEXT:    %r = tensor.fusion vector (%x, %n, %m)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %e = tensor.exp
// CHECK-NEXT:      %b = tensor.broadcast_to
// CHECK-NEXT:      %r_1 = tensor.add
func.func @dims(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.exp %x : tensor<?x?xf32>
  %n = tensor.dim %e, %c0 : tensor<?x?xf32>
  %m = tensor.dim %e, %c1 : tensor<?x?xf32>
  %b = tensor.broadcast_to %e to [%n, %m] : tensor<?x?xf32> -> tensor<?x?xf32>
  %r = tensor.add %b, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
