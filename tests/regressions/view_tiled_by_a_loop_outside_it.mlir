// Found by tests/test_random_programs.py (DVM_RANDOM_SEED=173, 3000
// programs): BytecodeError: view tiled by a loop that does not enclose it.
// The select kernel walks axis 0 in a batch loop (loop0); the reduce_mean
// fused into it does not vary along that axis, so it was hoisted before the
// batch loop, and its chunk loop (loop1) sat at depth 1, where a level-1
// loop cannot be. Fixed in lowering/tensor_to_tile.py (reduction): the batch
// loops a hoisted reduction left are opened again around its chunk loops,
// for one iteration. reduction_hoisted_out_of_a_batch_loop.mlir uses the
// reduction's result.
// symbols: a=4
// shapes: 4x1x2 4x1x1x1 4x4x1x2 4x1x4x1x1 4x4x4x1x1x1
// symbols: a=4
// shapes: 4x1x2 4x1x1x1 4x4x1x2 4x1x4x1x1 4x4x4x1x1x1
// seed: 2549
// device: host
func.func @main(%arg0: tensor<?x1x2xf32>, %arg1: tensor<?x1x1x1xf32>, %arg2: tensor<?x?x1x?xf32>, %arg3: tensor<?x1x?x1x?xf32>, %arg4: tensor<?x?x?x1x?x?xf32>) -> (tensor<?x?x?x?x1x2xf32>, tensor<f32>) {
  %v1 = tensor.reduce_sum %arg0 {axes = [0, 1, 2]} : tensor<?x1x2xf32> -> tensor<f32>
  %k2 = arith.constant dense<0.0> : tensor<f32>
  %v3 = tensor.gt %v1, %k2 : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %p4 = tensor.extract %v3[] : tensor<i1>
  %v10, %v11 = scf.if %p4 -> (tensor<f32>, tensor<f32>) {
    %v5 = tensor.gt %arg0, %arg1 : (tensor<?x1x2xf32>, tensor<?x1x1x1xf32>) -> tensor<?x?x1x2xi1>
    scf.yield %v1, %v1 : tensor<f32>, tensor<f32>
  } else {
    %v6 = tensor.add %k2, %arg1 : (tensor<f32>, tensor<?x1x1x1xf32>) -> tensor<?x1x1x1xf32>
    %c7 = arith.constant 0 : index
    %i8 = tensor.dim %arg0, %c7 : tensor<?x1x2xf32>
    %v9 = tensor.expand_shape %v6 [[0], [1, 2], [3, 4], [5]] output_shape [%i8, 1, 1, 1, 1, 1] : tensor<?x1x1x1xf32> into tensor<?x1x1x1x1x1xf32>
    scf.yield %v1, %k2 : tensor<f32>, tensor<f32>
  }
  %v12 = tensor.reduce_mean %arg0 {axes = [1, 2], keepdims = true} : tensor<?x1x2xf32> -> tensor<?x1x1xf32>
  %v13 = tensor.reduce_mean %arg1 {axes = [3, 2, 0, 1], keepdims = true} : tensor<?x1x1x1xf32> -> tensor<1x?x1x1xf32>
  %v14 = tensor.ne %arg2, %arg3 : (tensor<?x?x1x?xf32>, tensor<?x1x?x1x?xf32>) -> tensor<?x?x?x1x2xi1>
  %v15 = tensor.select %v14, %arg0, %arg4 : (tensor<?x?x?x1x2xi1>, tensor<?x1x2xf32>, tensor<?x?x?x1x?x?xf32>) -> tensor<?x?x?x?x1x2xf32>
  func.return %v15, %v11 : tensor<?x?x?x?x1x2xf32>, tensor<f32>
}
