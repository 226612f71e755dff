// Found by hand: a crash. `fuse` asked xDSL whether the constant below is a
// splat, and xDSL's is_splat fails with an IndexError on a constant with no
// elements. A zero-element constant is no splat: it is now an ordinary
// kernel input (passes/fuse.py, is_splat_constant), and the reductions
// over its empty axis give their identities.
// shapes: 3x1
// shapes: 0x1
// seed: 1
// device: host
func.func @main(%x: tensor<?x1xi32>) -> (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) {
  %k = arith.constant dense<7> : tensor<1x0xi32>
  %y = tensor.add %x, %k : (tensor<?x1xi32>, tensor<1x0xi32>) -> tensor<?x0xi32>
  %s = tensor.reduce_sum %y {axes = [1]} : tensor<?x0xi32> -> tensor<?xi32>
  %p = tensor.reduce_prod %y {axes = [1]} : tensor<?x0xi32> -> tensor<?xi32>
  %m = tensor.reduce_min %y {axes = [1]} : tensor<?x0xi32> -> tensor<?xi32>
  func.return %s, %p, %m : tensor<?xi32>, tensor<?xi32>, tensor<?xi32>
}
