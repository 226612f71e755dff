// The minimum in bf16 of a 4-D tensor and a row broadcast over its other
// dims, called with the row's leading dims 1 on ascend910b: the VM refused
// the call, "register exceeds local memory". The variant for those unit dims
// reads the row through a convert to its declared type (same element type),
// which tiling counted as written in place and the bytecode gave a register
// of its own. Fixed in lowering/tile_to_bytecode.py: a convert to its
// operand's kind reuses the operand's register when it dies there.
// shapes: 1x2x2x13931 1x1x1x13931
// shapes: 1x2x3x17 1x2x1x17
// seed: 5
// device: ascend910b
func.func @main(%x: tensor<?x?x?x?xf32>, %row: tensor<1x?x1x?xf32>) -> tensor<1x?x?x?xf32> {
  %xb = tensor.convert %x : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xbf16>
  %rb = tensor.convert %row : tensor<1x?x1x?xf32> -> tensor<1x?x1x?xbf16>
  %m = tensor.min %xb, %rb : (tensor<?x?x?x?xbf16>, tensor<1x?x1x?xbf16>) -> tensor<1x?x?x?xbf16>
  %y = tensor.convert %m : tensor<1x?x?x?xbf16> -> tensor<1x?x?x?xf32>
  func.return %y : tensor<1x?x?x?xf32>
}
