// Found by tests/test_random_programs.py: Illegal: %y = tensor.matmul: matmul
// operands must come from outside the kernel (at compile time). fuse copies
// splat constants into the kernels that use them, also when a matmul uses
// one, which a cube kernel must load from memory instead. Fixed in
// passes/fuse.py (inputs): a splat constant is a kernel input when a matmul
// uses it.
// shapes: 5x4 0x1
// shapes: 0x4 3x1
// seed: 11
// device: host
func.func @main(%x: tensor<?x4xf32>, %z: tensor<?x1xf32>) -> (tensor<?x3xf32>, tensor<1x1xf32>, tensor<?x2xf32>) {
  %w = arith.constant dense<0.5> : tensor<4x3xf32>
  %y = tensor.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %k = arith.constant dense<-1.5> : tensor<1x1xf32>
  %kk = tensor.matmul %k, %k : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %u = arith.constant dense<2.0> : tensor<1x2xf32>
  %zu = tensor.matmul %z, %u : (tensor<?x1xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
  %e = tensor.add %zu, %u : (tensor<?x2xf32>, tensor<1x2xf32>) -> tensor<?x2xf32>
  func.return %y, %kk, %e : tensor<?x3xf32>, tensor<1x1xf32>, tensor<?x2xf32>
}
