// RUN: dvm-opt %s -p symbolic-shapes,sink-into-branches | filecheck %s
// RUN: dvm-opt %s -p symbolic-shapes,sink-into-branches,fuse | filecheck %s --check-prefix=FUSED

// `sink-into-branches`: an elementwise consumer of an `scf.if` result is cloned
// into both branches when each yields that result from an op it fuses with; the
// `if` then yields the consumer's result, and `fuse` makes each branch one kernel.

func.func @if_else_add(%x: tensor<?x?xf32>, %c: i1) -> tensor<?x?xf32> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %y = scf.if %c -> (tensor<?x?xf32>) {
    %t = tensor.add %x, %one : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  } else {
    %t = tensor.sub %x, %one : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  %r = tensor.add %y, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %e = tensor.exp %r : tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}

// A chain moves in whole; nothing is left after the `if`.
// CHECK-LABEL: func.func @if_else_add
// CHECK:       %{{.*}} = scf.if %c -> (tensor<?x?xf32>) {
// CHECK-NEXT:    %[[T:.*]] = tensor.add %x, %one
// CHECK-NEXT:    %[[R:.*]] = tensor.add %[[T]], %x
// CHECK-NEXT:    %[[E:.*]] = tensor.exp %[[R]]
// CHECK-NEXT:    scf.yield %[[E]]
// CHECK-NEXT:  } else {
// CHECK-NEXT:    %[[T2:.*]] = tensor.sub %x, %one
// CHECK-NEXT:    %[[R2:.*]] = tensor.add %[[T2]], %x
// CHECK-NEXT:    %[[E2:.*]] = tensor.exp %[[R2]]
// CHECK-NEXT:    scf.yield %[[E2]]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return

// FUSED-LABEL: func.func @if_else_add
// FUSED:       scf.if %c
// FUSED-NEXT:    tensor.fusion vector
// FUSED:         scf.yield
// FUSED-NEXT:  } else {
// FUSED-NEXT:    tensor.fusion vector
// FUSED:         scf.yield
// FUSED-NEXT:  }
// FUSED-NEXT:  func.return

func.func @used_twice(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %c: i1) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %before = tensor.mul %w, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = scf.if %c -> (tensor<?x?xf32>) {
    %t = tensor.neg %x : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  } else {
    %t = tensor.abs %x : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  %r = tensor.add %y, %before : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.mul %y, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r, %s, %y : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// Both readers of %y sink (the first reads a value defined before the `if`);
// %y is returned too, so it stays yielded.
// CHECK-LABEL: func.func @used_twice
// CHECK:       %{{.*}}, %{{.*}}, %{{.*}} = scf.if %c -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
// CHECK-NEXT:    %[[T:.*]] = tensor.neg %x
// CHECK-NEXT:    %[[R:.*]] = tensor.add %[[T]], %before
// CHECK-NEXT:    %[[S:.*]] = tensor.mul %[[T]], %[[T]]
// CHECK-NEXT:    scf.yield %[[T]], %[[R]], %[[S]]
// CHECK-NEXT:  } else {
// CHECK-NEXT:    tensor.abs %x
// CHECK-NEXT:    tensor.add
// CHECK-NEXT:    tensor.mul
// CHECK-NEXT:    scf.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r, %s, %y

func.func @passed_through(%x: tensor<?x?xf32>, %c: i1) -> tensor<?x?xf32> {
  %y = scf.if %c -> (tensor<?x?xf32>) {
    %t = tensor.neg %x : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  } else {
    scf.yield %x : tensor<?x?xf32>
  }
  %r = tensor.add %y, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// A branch yields its argument: the consumer stays after the `if`.
// CHECK-LABEL: func.func @passed_through
// CHECK:       %y = scf.if
// CHECK:       %r = tensor.add %y, %x
// CHECK-NEXT:  func.return %r

func.func @read_after(%x: tensor<?x?xf32>, %c: i1) -> tensor<?x?xf32> {
  %y = scf.if %c -> (tensor<?x?xf32>) {
    %t = tensor.neg %x : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  } else {
    %t = tensor.abs %x : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  %after = tensor.exp %x : tensor<?x?xf32>
  %r = tensor.add %y, %after : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// The consumer reads a value made after the `if`: it stays.
// CHECK-LABEL: func.func @read_after
// CHECK:       %y = scf.if
// CHECK:       %after = tensor.exp %x
// CHECK-NEXT:  %r = tensor.add %y, %after

func.func @nested(%x: tensor<?xf32>, %c: i1, %d: i1) -> tensor<?xf32> {
  %y = scf.if %c -> (tensor<?xf32>) {
    %u = scf.if %d -> (tensor<?xf32>) {
      %t = tensor.neg %x : tensor<?xf32>
      scf.yield %t : tensor<?xf32>
    } else {
      %t = tensor.abs %x : tensor<?xf32>
      scf.yield %t : tensor<?xf32>
    }
    scf.yield %u : tensor<?xf32>
  } else {
    %t = tensor.exp %x : tensor<?xf32>
    scf.yield %t : tensor<?xf32>
  }
  %r = tensor.add %y, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// Through an inner `if`, down to each of the three ops that make %y.
// CHECK-LABEL: func.func @nested
// CHECK:         scf.if %d
// CHECK-NEXT:      %[[N:.*]] = tensor.neg %x
// CHECK-NEXT:      tensor.add %[[N]], %x
// CHECK:         } else {
// CHECK-NEXT:      %[[A:.*]] = tensor.abs %x
// CHECK-NEXT:      tensor.add %[[A]], %x
// CHECK:       } else {
// CHECK-NEXT:    %[[X:.*]] = tensor.exp %x
// CHECK-NEXT:    tensor.add %[[X]], %x
// CHECK:       func.return

func.func @loop(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %y = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<?xf32>) {
    %b = tensor.neg %a : tensor<?xf32>
    scf.yield %b : tensor<?xf32>
  }
  %r = tensor.add %y, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// Loops are left alone.
// CHECK-LABEL: func.func @loop
// CHECK:       %y = scf.for
// CHECK:       %r = tensor.add %y, %x
