// Found by tests/test_random_programs.py (DVM_RANDOM_SEED=227, 1500
// programs): "internal error: Illegal: sizes are not provably equal" from
// fuse. The gt broadcasts %arg1's columns (arg1_1) against the collapsed
// %arg1 (arg1_0*arg1_1) under the guard arg1_1 == arg1_0*arg1_1, and the
// select unifies arg1_1 with arg0_0. The shapes then say arg0_0 and
// arg0_0*arg1_0, but fuse (and convert-tensor-to-tile) took the guards as
// facts in the arguments' own symbols, so the equality was not found.
// Fixed in passes/symbolic.py (guard_facts): the facts use the unified
// symbols.
// shapes: 2 2x1 2x2
// shapes: 3 3x1 3x3
// shapes: 4 1x4 1x4
// shapes: 1 1x1 1x1
// shapes: 0 5x0 5x0
// seed: 0
// device: host
func.func @main(%arg0: tensor<?xf32>, %arg1: tensor<?x?xi32>, %arg2: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %v1 = tensor.neg %arg0 : tensor<?xf32>
  %v2 = tensor.neg %arg0 : tensor<?xf32>
  %v3 = tensor.collapse_shape %arg1 [[0, 1]] : tensor<?x?xi32> into tensor<?xi32>
  %v4 = tensor.neg %arg0 : tensor<?xf32>
  %v5 = tensor.gt %arg1, %v3 : (tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x?xi1>
  %v6 = tensor.select %v5, %arg0, %arg2 : (tensor<?x?xi1>, tensor<?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %v6 : tensor<?x?xf32>
}
