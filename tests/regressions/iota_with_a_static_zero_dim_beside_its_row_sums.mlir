// An iota of a static 0 dim, returned beside its sums along that dim (zeros)
// and over both dims: the VM refused the call, "view out of bounds (elements
// 0..0 of a0 (0))", and at n = 0 "stored tile shape mismatch". The iota's
// view, which only measures where a tile lies, was placed on the kernel's
// first output, of no element here though the kernel runs for the others;
// and the kernel stored tiles of one element along the 0 dim. Fixed in
// lowering/tile_to_bytecode.py (first_output: an output with elements) and
// lowering/kernel_body.py (an output with a static 0 dim is not stored).
// shapes: 5
// shapes: 1
// shapes: 0
// seed: 1
func.func @main(%x: tensor<?xf32>) -> (tensor<?x0xi32>, tensor<?xi32>, tensor<i32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %i = tensor.iota dim(0) %n : tensor<?x0xi32>
  %rows = tensor.reduce_sum %i {axes = [1]} : tensor<?x0xi32> -> tensor<?xi32>
  %all = tensor.reduce_sum %i {axes = [0, 1]} : tensor<?x0xi32> -> tensor<i32>
  func.return %i, %rows, %all : tensor<?x0xi32>, tensor<?xi32>, tensor<i32>
}
