// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s

// A concat of a concat along the same axis is one concat of all the pieces
// (`flatten_concats`, before fusion), so the exp, the neg and the copies are
// one kernel. A piece may be an iota: it counts along its own part of the
// axis (positions appended to a table: one kernel), and so may a pad's source.
// A concat of a concat along another axis is two kernels (a piece stores at an
// offset along one axis only).

func.func @same_axis(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %c: tensor<?x4xf32>)
    -> tensor<?x4xf32> {
  %ea = tensor.exp %a : tensor<?x4xf32>
  %ab = tensor.concat dim(0) %ea, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %nc = tensor.neg %c : tensor<?x4xf32>
  %abc = tensor.concat dim(0) %ab, %nc : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %abc : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @same_axis
// CHECK:      %abc = tensor.fusion vector (%a, %c, %b)
// CHECK:        tensor.exp
// CHECK:        tensor.neg
// CHECK:        tensor.concat dim(0) %{{.*}}, %{{.*}}, %{{.*}} {dvm.shape = #dvm.shape<a_0 + b_0 + c_0, 4>}
// CHECK-NOT:  tensor.fusion
// CHECK:      func.return

func.func @positions(%a: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
  %i = tensor.iota dim(0) %n : tensor<?x4xf32>
  %ea = tensor.exp %a : tensor<?x4xf32>
  %r = tensor.concat dim(0) %ea, %i : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @positions
// CHECK:      %r = tensor.fusion vector
// CHECK:        tensor.iota dim(0)
// CHECK:        tensor.concat
// CHECK-NOT:  tensor.fusion
// CHECK:      func.return

func.func @padded_iota(%n: index) -> tensor<?x3xi32> {
  %cst = arith.constant -1 : i32
  %i = tensor.iota dim(1) %n : tensor<?x3xi32>
  %r = tensor.pad %i low[1, 0] high[2, 0] {
  ^bb0(%p: index, %q: index):
    tensor.yield %cst : i32
  } : tensor<?x3xi32> to tensor<?x3xi32>
  func.return %r : tensor<?x3xi32>
}

// CHECK-LABEL: func.func @padded_iota
// CHECK:      %r = tensor.fusion vector
// CHECK:        tensor.iota dim(1)
// CHECK:        tensor.pad
// CHECK-NOT:  tensor.fusion
// CHECK:      func.return

func.func @other_axis(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %c: tensor<?x?xf32>)
    -> tensor<?x?xf32> {
  %ab = tensor.concat dim(0) %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %r = tensor.concat dim(1) %ab, %c : (tensor<?x4xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @other_axis
// CHECK:      tensor.fusion vector
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.concat dim(0)
// CHECK:      tensor.fusion vector
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.concat dim(1)
// CHECK-NOT:  tensor.fusion
// CHECK:      func.return
