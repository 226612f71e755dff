// An iota along x's columns (broadcast along its rows), added to x, returned and
// summed over the rows, called with 0 rows: the VM refused the call, "view out of
// bounds (elements 0..0 of a1 (0))". The view that measures the iota's tiles
// (strides 0, it reads nothing) was bound to the sum x + iota, empty at run time,
// though the column sums have elements. Fixed in lowering/tile_to_bytecode.py
// (measured_output: an output stored along no axis the iota's tiles are
// broadcast along).
// shapes: 0x3
// shapes: 0x4099
// shapes: 2x3
// seed: 1
// device: ascend910b
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %k = tensor.dim %x, %c1 : tensor<?x?xf32>
  %i = tensor.iota dim(1) %n, %k : tensor<?x?xi32>
  %f = tensor.convert %i : tensor<?x?xi32> -> tensor<?x?xf32>
  %a = tensor.add %f, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.reduce_sum %a {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %a, %s : tensor<?x?xf32>, tensor<?xf32>
}
