// Column sums broadcast to three rows and stacked on the input: with one row
// and 13931 columns on ascend910b the VM refused the call, "register exceeds
// local memory". The fused kernel's domain is (rows, columns, 3); no value
// spans all three axes, and tiling counted only tiles that do, so it planned
// 4 bytes per element where the input tile (skipping the axis of 3), the sums
// and the broadcast hold 20 per column. Fixed in lowering/tensor_to_tile.py:
// a tile that skips parallel axes counts as a full one (it is when their
// tiles are 1), and every tile counts when the reduced axes' tiles are 1.
// shapes: 1x13931
// shapes: 5x97
// seed: 5
// device: ascend910b
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = tensor.reduce_sum %x {axes = [0], keepdims = true} : tensor<?x?xf32> -> tensor<1x?xf32>
  %c1 = arith.constant 1 : index
  %n = tensor.dim %s, %c1 : tensor<1x?xf32>
  %b = tensor.broadcast_to %s to [3, %n] : tensor<1x?xf32> -> tensor<3x?xf32>
  %c = tensor.concat dim(0) %b, %x : (tensor<3x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}
