// An iota along the rows of x's shape (broadcast along the columns), returned
// beside its row sums, called with 0 columns: the VM refused the call, "view out
// of bounds (elements 0..0 of a0 (0))". The view that measures the iota's tiles
// (strides 0, it reads nothing) was bound to the kernel's first output, the
// iota itself, empty at run time, though the row sums have elements. Fixed in
// lowering/tile_to_bytecode.py (measured_output: an output stored along no axis
// the iota's tiles are broadcast along). The same held for an iota added to x
// and summed over the rows, called with 0 rows.
// shapes: 5x0
// shapes: 4099x0
// shapes: 0x3
// shapes: 3x4
// seed: 1
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xi32>, tensor<?xi32>, tensor<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %i = tensor.iota dim(0) %n, %m : tensor<?x?xi32>
  %rows = tensor.reduce_sum %i {axes = [1]} : tensor<?x?xi32> -> tensor<?xi32>
  %all = tensor.reduce_sum %i {axes = [0, 1]} : tensor<?x?xi32> -> tensor<i32>
  func.return %i, %rows, %all : tensor<?x?xi32>, tensor<?xi32>, tensor<i32>
}
