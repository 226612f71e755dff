// A tensor.choice written in the program whose regions hold plain ops (a
// matmul, a take, an elementwise op), not kernels: `fuse` left the choice's
// regions alone, so `dvm.compile` stopped at "does not support
// tensor.matmul" (and a nested choice at "tensor.neg"). Fixed in
// passes/fuse.py: the blocks of a choice are fused as any block is.
// shapes: 3x4 3x4 4x2
// shapes: 3x4 2x4 4x2
// shapes: 1x4 3x1 4x2
// shapes: 2x1 2x1 1x0
// seed: 7
func.func @main(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %r:2 = tensor.choice [y_0 == x_0, x_0 <= 3] -> (tensor<?x?xf32>, tensor<?x?xf32>) {
    %q:2 = tensor.choice [y_1 == x_1] -> (tensor<?x?xf32>, tensor<?x?xf32>) {
      %m = tensor.matmul %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
      %t = tensor.tanh %m : tensor<?x?xf32>
      %c0 = arith.constant 0 : index
      %n = tensor.dim %y, %c0 : tensor<?x?xf32>
      %io = tensor.iota dim(0) %n : tensor<?xi32>
      %g = tensor.take %y, %io dim(0) : (tensor<?x?xf32>, tensor<?xi32>) -> tensor<?x?xf32>
      %a = tensor.abs %g : tensor<?x?xf32>
      tensor.yield %t, %a : tensor<?x?xf32>, tensor<?x?xf32>
    } else {
      %m = tensor.matmul %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
      %t = tensor.tanh %m : tensor<?x?xf32>
      %g = tensor.neg %y : tensor<?x?xf32>
      %h = tensor.abs %g : tensor<?x?xf32>
      tensor.yield %t, %h : tensor<?x?xf32>, tensor<?x?xf32>
    }
    tensor.yield %q#0, %q#1 : tensor<?x?xf32>, tensor<?x?xf32>
  } else {
    %m = tensor.matmul %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    %t = tensor.tanh %m : tensor<?x?xf32>
    %h = tensor.abs %y : tensor<?x?xf32>
    tensor.yield %t, %h : tensor<?x?xf32>, tensor<?x?xf32>
  }
  func.return %r#0, %r#1 : tensor<?x?xf32>, tensor<?x?xf32>
}
