// Before `fuse` groups ops, collapses move below the matmuls and elementwise
// ops that read them, to meet the expands that undo them
// (`passes/reshape_sinking.py`). Programs recorded from torch and numpy flatten a
// 3-D activation around each matmul; after the moves they fuse as the 3-D
// program a person would write.
//
// RUN: dvm-opt %s --split-input-file -p symbolic-shapes,fuse | filecheck %s

// A linear layer of torch's form (flatten, matmul, bias, unflatten) with a
// residual add and a row sum: the collapse moves below the matmul and the bias
// add and meets the expand, so the matmul is 3-D and its epilogue joins it.

// CHECK-LABEL: func.func @linear_residual(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         %d = tensor.fusion mix (%x, %w, %b)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %m = tensor.matmul {{.*}} -> tensor<?x?x32xf32>
// CHECK-NEXT:      %a = tensor.add {{.*}} -> tensor<?x?x32xf32>
// CHECK-NEXT:      %r = tensor.add
// CHECK-NEXT:      %s = tensor.reduce_sum
// CHECK-NEXT:      %d_1 = tensor.sub
// CHECK-NEXT:      tensor.yield %d_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %d
func.func @linear_residual(%x: tensor<?x?x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<?x?x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %B = tensor.dim %x, %c0 : tensor<?x?x32xf32>
  %S = tensor.dim %x, %c1 : tensor<?x?x32xf32>
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x32xf32> into tensor<?x32xf32>
  %m = tensor.matmul %x2, %w : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
  %a = tensor.add %m, %b : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %e = tensor.expand_shape %a [[0, 1], [2]] output_shape [%B, %S, 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
  %r = tensor.add %e, %x : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %s = tensor.reduce_sum %r {axes = [2], keepdims = true} : tensor<?x?x32xf32> -> tensor<?x?x1xf32>
  %d = tensor.sub %r, %s : (tensor<?x?x32xf32>, tensor<?x?x1xf32>) -> tensor<?x?x32xf32>
  func.return %d : tensor<?x?x32xf32>
}

// -----

// When the expand's sizes are not provably the collapsed dims (here index
// arguments: `%n * %k` is only guarded equal to `x_0 * x_1`), the collapse
// moves but stays: the expand may regroup the rows, so it ends the kernel.

// CHECK-LABEL: func.func @regrouped(
// CHECK:         tensor.fusion cube
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %m_1 = tensor.matmul {{.*}} -> tensor<?x?x32xf32>
// CHECK-NEXT:      %m_2 = tensor.collapse_shape %m_1 {{.*}} into tensor<?x32xf32>
// CHECK:         tensor.fusion vector
// CHECK:           tensor.expand_shape
// CHECK:           tensor.add
func.func @regrouped(%x: tensor<?x?x32xf32>, %w: tensor<32x32xf32>, %y: tensor<?x?x32xf32>, %n: index, %k: index) -> tensor<?x?x32xf32> {
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x32xf32> into tensor<?x32xf32>
  %m = tensor.matmul %x2, %w : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
  %e = tensor.expand_shape %m [[0, 1], [2]] output_shape [%n, %k, 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
  %r = tensor.add %e, %y : (tensor<?x?x32xf32>, tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  func.return %r : tensor<?x?x32xf32>
}

// -----

// A batched matmul of operands whose batch dims merge alike (torch's `bmm` of
// attention heads, `[B, H, S, D] -> [B * H, S, D]`) is the 4-D matmul: the
// softmax after it joins it in a kernel (when a row fits: the choice).

// CHECK-LABEL: func.func @heads(
// CHECK:         tensor.choice
// CHECK:           tensor.fusion mix
// CHECK:             tensor.matmul {{.*}} -> tensor<?x4x?x?xf32>
// CHECK-NOT:         tensor.collapse_shape
// CHECK:             tensor.reduce_max
func.func @heads(%q: tensor<?x4x?x8xf32>, %k: tensor<?x4x8x?xf32>) -> tensor<?x4x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %B = tensor.dim %q, %c0 : tensor<?x4x?x8xf32>
  %S = tensor.dim %q, %c2 : tensor<?x4x?x8xf32>
  %T = tensor.dim %k, %c3 : tensor<?x4x8x?xf32>
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<?x4x?x8xf32> into tensor<?x?x8xf32>
  %k3 = tensor.collapse_shape %k [[0, 1], [2], [3]] : tensor<?x4x8x?xf32> into tensor<?x8x?xf32>
  %s3 = tensor.matmul %q3, %k3 : (tensor<?x?x8xf32>, tensor<?x8x?xf32>) -> tensor<?x?x?xf32>
  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [%B, 4, %S, %T] : tensor<?x?x?xf32> into tensor<?x4x?x?xf32>
  %mx = tensor.reduce_max %s {axes = [3], keepdims = true} : tensor<?x4x?x?xf32> -> tensor<?x4x?x1xf32>
  %d = tensor.sub %s, %mx : (tensor<?x4x?x?xf32>, tensor<?x4x?x1xf32>) -> tensor<?x4x?x?xf32>
  %p = tensor.exp %d : tensor<?x4x?x?xf32>
  func.return %p : tensor<?x4x?x?xf32>
}

// -----

// A collapse that merges the contraction dim too stays above the matmul: the
// matmul of its source would be another product.

// CHECK-LABEL: func.func @merged_contraction(
// CHECK:           %x2 = tensor.collapse_shape %x_1 {{.*}} into tensor<?x32xf32>
// CHECK-NEXT:      %m_1 = tensor.matmul %x2, %w_1 {{.*}} -> tensor<?x16xf32>
func.func @merged_contraction(%x: tensor<?x?x4x8xf32>, %w: tensor<32x16xf32>) -> tensor<?x16xf32> {
  %x2 = tensor.collapse_shape %x [[0, 1], [2, 3]] : tensor<?x?x4x8xf32> into tensor<?x32xf32>
  %m = tensor.matmul %x2, %w : (tensor<?x32xf32>, tensor<32x16xf32>) -> tensor<?x16xf32>
  func.return %m : tensor<?x16xf32>
}
