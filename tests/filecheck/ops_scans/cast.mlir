// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// A cast refines a dim to a static size: the refinement is an equality guard
// naming the cast, and the casts (only types change) sit inside the one
// vector kernel of the exp and the add.

func.func @refine(%x: tensor<?x?xf32>, %y: tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<?x?xf32>) {
  %xc = tensor.cast %x : tensor<?x?xf32> to tensor<4x?xf32>
  %e = tensor.exp %xc : tensor<4x?xf32>
  %back = tensor.cast %e : tensor<4x?xf32> to tensor<?x?xf32>
  %s = tensor.add %e, %y : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
  func.return %s, %back : tensor<4x?xf32>, tensor<?x?xf32>
}

// CHECK:      dvm.guards = [{check = #dvm.cond<x_0 == 4>, kind = "equal", op = "%xc = tensor.cast"}
// CHECK:      tensor.fusion vector (%x, %y) {dvm.domain = #dvm.shape<4, x_1>
// CHECK:        tensor.cast
// CHECK-NEXT:   tensor.exp
// CHECK-NEXT:   tensor.cast
// CHECK-NEXT:   tensor.add
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

// ROUND: %xc = tensor.cast %x : tensor<?x?xf32> to tensor<4x?xf32>
// ROUND: %back = tensor.cast %e : tensor<4x?xf32> to tensor<?x?xf32>

func.func @shape(%x: tensor<?x?xf32>) -> tensor<2xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %a = arith.index_cast %d0 : index to i64
  %b = arith.index_cast %d1 : index to i64
  %s = tensor.from_elements %a, %b : tensor<2xi64>
  func.return %s : tensor<2xi64>
}

// CHECK-LABEL: func.func @shape
// CHECK:         tensor.from_elements %a, %b {dvm.shape = #dvm.shape<2>} : tensor<2xi64>
// CHECK-NOT:     tensor.fusion

// ROUND: %s = tensor.from_elements %a, %b : tensor<2xi64>
