// Found by tests/test_random_programs.py (programs of up to 14 steps):
// StopIteration in passes/blocks.py (dependency_order). fuse made two kernels
// that each needed the other through tensor.dim ops: {%r, %v20} gives %r,
// whose dim sizes %v10 in {%v10, %v11, %n, %v13}; that kernel gives %n, whose
// dim sizes %v20. Each merge had been checked for cycles with op-level paths
// only. Fixed in passes/fuse.py (reaches_through_outside): a path that enters
// another group continues from all its ops (a kernel runs as a whole).
// shapes: 5x3x4x5 5x3x4x5
// shapes: 1x3x4x1 1x3x4x1
// shapes: 0x3x2x0 0x3x2x0
// seed: 12
// device: ascend910b
func.func @main(%x: tensor<?x3x?x?xf32>, %m: tensor<?x3x?x?xi1>) -> (tensor<?x?x?x?x?xf32>, tensor<?xf32>, tensor<?x1x3x?x?xf32>) {
  %r = tensor.round %x : tensor<?x3x?x?xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %b = tensor.dim %x, %c2 : tensor<?x3x?x?xf32>
  %a = tensor.dim %x, %c0 : tensor<?x3x?x?xf32>
  %b2 = tensor.dim %r, %c2 : tensor<?x3x?x?xf32>
  %v10 = tensor.broadcast_to %x to [%b, %a, 3, %b2, %a] : tensor<?x3x?x?xf32> -> tensor<?x?x3x?x?xf32>
  %v11 = tensor.select %m, %v10, %v10 : (tensor<?x3x?x?xi1>, tensor<?x?x3x?x?xf32>, tensor<?x?x3x?x?xf32>) -> tensor<?x?x?x?x?xf32>
  %n = tensor.logical_not %m : tensor<?x3x?x?xi1>
  %v13 = tensor.reduce_mean %v11 {axes = [2, 1, 0, 3]} : tensor<?x?x?x?x?xf32> -> tensor<?xf32>
  %a3 = tensor.dim %x, %c3 : tensor<?x3x?x?xf32>
  %b3 = tensor.dim %n, %c2 : tensor<?x3x?x?xi1>
  %v20 = tensor.expand_shape %r [[0, 1], [2], [3], [4]] output_shape [%a3, 1, 3, %b3, %a] : tensor<?x3x?x?xf32> into tensor<?x1x3x?x?xf32>
  func.return %v11, %v13, %v20 : tensor<?x?x?x?x?xf32>, tensor<?xf32>, tensor<?x1x3x?x?xf32>
}
