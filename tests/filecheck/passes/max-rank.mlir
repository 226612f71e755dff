// The VM holds at most 8 dims in a kernel's arguments, registers and views
// (MAX_RANK in vm/isa.py). `fuse` refuses a kernel over that and names the
// first op with a tensor of that rank, at its file:line:col; a kernel that
// reaches convert-tile-to-bytecode another way (a `tensor.fusion` written by
// hand) is refused there, by its name. Tensors on the host may have any rank.
//
// RUN: dvm-opt %s --split-input-file --verify-diagnostics -p dvm-pipeline | filecheck %s
//
// Without --verify-diagnostics the first error ends the run: exit 1, no traceback.
// RUN: not dvm-opt %s --split-input-file -p dvm-pipeline 2>&1 | filecheck %s --check-prefix=ERROR
// ERROR-NOT: Traceback

// An elementwise op on a rank-9 argument.
func.func @elementwise(%x: tensor<?x?x?x?x?x?x?x?x?xf32>) -> tensor<?x?x?x?x?x?x?x?x?xf32> {
  // ERROR: max-rank.mlir:[[# @LINE + 2]]:3: error: %y = tensor.exp: rank 9 exceeds the VM's maximum rank 8{{$}}
  // CHECK: max-rank.mlir:[[# @LINE + 1]]:3: %y = tensor.exp: rank 9 exceeds the VM's maximum rank 8{{$}}
  %y = tensor.exp %x : tensor<?x?x?x?x?x?x?x?x?xf32>
  func.return %y : tensor<?x?x?x?x?x?x?x?x?xf32>
}

// -----

// A rank-10 value made inside a kernel from rank-5 ones: the expand_shape
// that makes it is named, not the ops around it.
func.func @expanded(%x: tensor<4x4x4x4x?xf32>) -> tensor<4x4x4x4x?xf32> {
  %c4 = arith.constant 4 : index
  %n = tensor.dim %x, %c4 : tensor<4x4x4x4x?xf32>
  %a = tensor.abs %x : tensor<4x4x4x4x?xf32>
  // CHECK: max-rank.mlir:[[# @LINE + 1]]:3: %e = tensor.expand_shape: rank 10 exceeds the VM's maximum rank 8{{$}}
  %e = tensor.expand_shape %a [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]] output_shape [2, 2, 2, 2, 2, 2, 2, 2, %n, 1] : tensor<4x4x4x4x?xf32> into tensor<2x2x2x2x2x2x2x2x?x1xf32>
  %t = tensor.tanh %e : tensor<2x2x2x2x2x2x2x2x?x1xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]] : tensor<2x2x2x2x2x2x2x2x?x1xf32> into tensor<4x4x4x4x?xf32>
  func.return %c : tensor<4x4x4x4x?xf32>
}

// -----

// A kernel written by hand: fuse leaves it as it is, and the bytecode lowering
// names it.
func.func @by_hand(%x: tensor<?x?x?x?x?x?x?x?x?xf32>) -> tensor<?x?x?x?x?x?x?x?x?xf32> {
  // CHECK: tile.kernel: in @by_hand_k0, an argument of rank 9 exceeds the VM's maximum rank 8{{$}}
  %y = tensor.fusion vector (%x) {dvm.domain = #dvm.shape<x_0, x_1, x_2, x_3, x_4, x_5, x_6, x_7, x_8>} : (tensor<?x?x?x?x?x?x?x?x?xf32>) -> tensor<?x?x?x?x?x?x?x?x?xf32> {
  ^bb0(%a: tensor<?x?x?x?x?x?x?x?x?xf32>):
    %e = tensor.exp %a : tensor<?x?x?x?x?x?x?x?x?xf32>
    tensor.yield %e : tensor<?x?x?x?x?x?x?x?x?xf32>
  }
  func.return %y : tensor<?x?x?x?x?x?x?x?x?xf32>
}

// -----

// Within the limit: a rank-8 batched matmul with an epilogue (its domain has
// a ninth axis, K, which loops walk: no tile has it), a rank-9 value inside a
// kernel whose unit dim spans no axis, and a rank-9 argument that only the
// host reads.
// CHECK-LABEL: func.func @within(
// CHECK:       bytecode.program @within_k0
// CHECK:       bytecode.program @within_k1
func.func @within(%a: tensor<2x3x2x3x2x3x?x4xf32>, %b: tensor<2x3x2x3x2x3x4x5xf32>, %h: tensor<?x?x?x?x?x?x?x?x?xf32>) -> (tensor<2x3x2x3x2x3x?x5xf32>, tensor<2x3x2x3x2x3x?x4xf32>, index) {
  %m = tensor.matmul %a, %b : (tensor<2x3x2x3x2x3x?x4xf32>, tensor<2x3x2x3x2x3x4x5xf32>) -> tensor<2x3x2x3x2x3x?x5xf32>
  %y = tensor.exp %m : tensor<2x3x2x3x2x3x?x5xf32>
  %c6 = arith.constant 6 : index
  %n = tensor.dim %a, %c6 : tensor<2x3x2x3x2x3x?x4xf32>
  %e = tensor.expand_shape %a [[0], [1], [2], [3], [4], [5], [6], [7, 8]] output_shape [2, 3, 2, 3, 2, 3, %n, 4, 1] : tensor<2x3x2x3x2x3x?x4xf32> into tensor<2x3x2x3x2x3x?x4x1xf32>
  %g = tensor.neg %e : tensor<2x3x2x3x2x3x?x4x1xf32>
  %z = tensor.collapse_shape %g [[0], [1], [2], [3], [4], [5], [6], [7, 8]] : tensor<2x3x2x3x2x3x?x4x1xf32> into tensor<2x3x2x3x2x3x?x4xf32>
  %c8 = arith.constant 8 : index
  %k = tensor.dim %h, %c8 : tensor<?x?x?x?x?x?x?x?x?xf32>
  func.return %y, %z, %k : tensor<2x3x2x3x2x3x?x5xf32>, tensor<2x3x2x3x2x3x?x4xf32>, index
}
