// Found by tests/test_random_programs.py: BytecodeError: at byte 808: stored
// tile shape mismatch (r7 (1, 1, 1) vs (1, 1, 0)), in both VM tiers. A kernel
// fuses elementwise outputs with a reduce_max over %v20, a broadcast_to whose
// leading dim is a = 0, and stores %v20 too: its whole-rows variant made %v20's
// tile by a broadcast whose shape was the tile sizes, Max(1, a) = 1 along the
// empty axis, where the store's view moves no element. The tile interpreter
// was right (a tile's extent along an axis it holds whole is the axis's size).
// Fixed in lowering/tile_to_bytecode.py (shape): a fill's or broadcast's extent
// along such an axis is its size. The chunked variant stored %v11..%v13, which
// do not span that axis, inside the loop over its chunks, so never when a = 0;
// fixed in lowering/tensor_to_tile.py (store, store_nests): an output is stored
// only in loops over the axes it spans. At 500x500 (in place of 1x1) the
// chunked variant's registers exceeded local memory on a host with 2 MiB of
// it: the outputs' tiles skip the empty axis, whose chunk is 1, so they are as
// large as %v20's; see reduce_in_chunks_over_an_empty_broadcast_dim.mlir.
// symbols: a=0 b=1
// shapes: 1x1 1 1x1x0x2 1x1 1x1 scalar
// shapes: 500x500 1 500x500x0x2 500x500 500x500 scalar
// seed: 1
// device: host
func.func @main(%arg0: tensor<?x?xf32>, %arg1: tensor<?xf32>, %arg2: tensor<?x?x?x2xi1>, %arg3: tensor<?x?xf32>, %arg4: tensor<?x?xf32>, %arg5: tensor<f32>) -> tensor<?xf32> {
  %c1 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 1 : index
  %v7 = scf.for %iv5 = %c1 to %c2 step %c3 iter_args(%acc4 = %arg0) -> (tensor<?x?xf32>) {
    %v6 = tensor.reduce_sum %arg1 {axes = []} : tensor<?xf32> -> tensor<?xf32>
    scf.yield %arg0 : tensor<?x?xf32>
  }
  %v8 = tensor.logical_and %arg2, %arg2 : (tensor<?x?x?x2xi1>, tensor<?x?x?x2xi1>) -> tensor<?x?x?x2xi1>
  %v9 = tensor.abs %arg3 : tensor<?x?xf32>
  %k10 = arith.constant dense<1.0> : tensor<f32>
  %v11 = tensor.add %v9, %k10 : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %v12 = tensor.div %arg0, %v11 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v13 = tensor.add %arg3, %arg4 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %c14 = arith.constant 2 : index
  %i15 = tensor.dim %v8, %c14 : tensor<?x?x?x2xi1>
  %c16 = arith.constant 0 : index
  %i17 = tensor.dim %arg0, %c16 : tensor<?x?xf32>
  %c18 = arith.constant 0 : index
  %i19 = tensor.dim %arg0, %c18 : tensor<?x?xf32>
  %v20 = tensor.broadcast_to %arg0 to [%i15, 1, %i17, %i19] : tensor<?x?xf32> -> tensor<?x1x?x?xf32>
  %c21 = arith.constant 0 : index
  %c22 = arith.constant 1 : index
  %c23 = arith.constant 1 : index
  %v34, %v35 = scf.for %iv26 = %c21 to %c22 step %c23 iter_args(%acc24 = %v11, %acc25 = %v11) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
    %k27 = arith.constant dense<2.0> : tensor<f32>
    %v28 = tensor.abs %arg5 : tensor<f32>
    %k29 = arith.constant dense<0.5> : tensor<f32>
    %v30 = tensor.add %v28, %k29 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %k31 = arith.constant dense<2.0> : tensor<f32>
    %v32 = tensor.pow %v30, %k31 : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %v33 = tensor.tanh %v13 : tensor<?x?xf32>
    scf.yield %arg4, %v33 : tensor<?x?xf32>, tensor<?x?xf32>
  }
  %v36 = tensor.reduce_max %v20 {axes = [3, 2, 0, 1]} : tensor<?x1x?x?xf32> -> tensor<f32>
  %k37 = arith.constant dense<2.0> : tensor<f32>
  %v38 = tensor.eq %v36, %k37 : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %p39 = tensor.extract %v38[] : tensor<i1>
  %v49 = scf.if %p39 -> (tensor<?xf32>) {
    %v40 = tensor.neg %v12 : tensor<?x?xf32>
    scf.yield %arg1 : tensor<?xf32>
  } else {
    %v41 = tensor.neg %arg0 : tensor<?x?xf32>
    %c42 = arith.constant 2 : index
    %i43 = tensor.dim %v20, %c42 : tensor<?x1x?x?xf32>
    %c44 = arith.constant 1 : index
    %i45 = tensor.dim %v41, %c44 : tensor<?x?xf32>
    %c46 = arith.constant 0 : index
    %i47 = tensor.dim %v20, %c46 : tensor<?x1x?x?xf32>
    %v48 = tensor.expand_shape %v8 [[0], [1], [2], [3]] output_shape [%i43, %i45, %i47, 2] : tensor<?x?x?x2xi1> into tensor<?x?x?x2xi1>
    scf.yield %arg1 : tensor<?xf32>
  }
  func.return %v49 : tensor<?xf32>
}
