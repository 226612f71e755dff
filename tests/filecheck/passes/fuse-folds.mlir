// Before `fuse` groups ops, it erases `scf.if`s whose results nothing reads,
// drops same-type converts and reads the dims of computed values from the
// arguments' dims (`passes/prefuse_folds.py`): a dead `if` would run its
// branches' kernels, the others would keep a value alive outside the kernel
// that computes it.
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

// -----

// An `scf.if` whose results nothing reads is erased, with its predicate's chain
// (the sum, the extract, the compare) and the exp that only its branches read:
// no kernel of them is left to run.

// CHECK-LABEL: func.func @dead_branches(
// CHECK-NEXT:    %y = tensor.fusion vector (%x)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %y_1 = tensor.abs
// CHECK-NEXT:      tensor.yield %y_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
func.func @dead_branches(%x: tensor<?xf32>) -> tensor<?xf32> {
  %e = tensor.exp %x : tensor<?xf32>
  %s = tensor.reduce_sum %x {axes = [0]} : tensor<?xf32> -> tensor<f32>
  %sv = tensor.extract %s[] : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %p = arith.cmpf ogt, %sv, %zero : f32
  %r = scf.if %p -> (tensor<?xf32>) {
    %a = tensor.tanh %e : tensor<?xf32>
    scf.yield %a : tensor<?xf32>
  } else {
    %b = tensor.neg %e : tensor<?xf32>
    scf.yield %b : tensor<?xf32>
  }
  %y = tensor.abs %x : tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// Inside a loop body too; a value the function returns keeps its producers, and
// an `if` whose result is read stays.

// CHECK-LABEL: func.func @dead_branch_in_a_loop(
// CHECK:         scf.for
// CHECK-NOT:       tensor.tanh
// CHECK:           tensor.fusion vector
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        tensor.add
// CHECK-NOT:     tensor.tanh
// CHECK:         %kept = scf.if %p
// CHECK:         func.return
func.func @dead_branch_in_a_loop(%x: tensor<?xf32>, %q: tensor<i1>, %n: index) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p = tensor.extract %q[] : tensor<i1>
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?xf32>) {
    %unused = scf.if %p -> (tensor<?xf32>) {
      %a = tensor.tanh %acc : tensor<?xf32>
      scf.yield %a : tensor<?xf32>
    } else {
      scf.yield %acc : tensor<?xf32>
    }
    %d = tensor.add %acc, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    scf.yield %d : tensor<?xf32>
  }
  %kept = scf.if %p -> (tensor<?xf32>) {
    %a = tensor.neg %x : tensor<?xf32>
    scf.yield %a : tensor<?xf32>
  } else {
    scf.yield %x : tensor<?xf32>
  }
  func.return %l, %kept : tensor<?xf32>, tensor<?xf32>
}

// -----

// One that holds an `scf.while` stays: the loop might never end, and a call that
// never returns must not return once compiled.

// CHECK-LABEL: func.func @dead_branch_with_a_loop(
// CHECK:         scf.if
// CHECK:           scf.while
func.func @dead_branch_with_a_loop(%x: tensor<?xf32>, %q: tensor<i1>) -> tensor<?xf32> {
  %p = tensor.extract %q[] : tensor<i1>
  %r = scf.if %p -> (tensor<?xf32>) {
    %w = scf.while (%v = %x) : (tensor<?xf32>) -> tensor<?xf32> {
      %t = tensor.extract %q[] : tensor<i1>
      scf.condition(%t) %v : tensor<?xf32>
    } do {
    ^bb0(%v: tensor<?xf32>):
      %twice = tensor.add %v, %v : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      scf.yield %twice : tensor<?xf32>
    }
    scf.yield %w : tensor<?xf32>
  } else {
    scf.yield %x : tensor<?xf32>
  }
  %y = tensor.abs %x : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
