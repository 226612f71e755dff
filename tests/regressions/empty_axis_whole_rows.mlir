// Found by tests/test_random_programs.py: BytecodeError: register exceeds
// local memory (r0: bytes 0..372868 > 196608). A reduction over several axes,
// one of them empty (0), on ascend910b: the whole-rows variant was chosen
// because the row's size (a product, 0) fits, but its tiles take at least 1
// along each axis (31*31*1*97 floats). Fixed in lowering/tiling.py (rows_fit):
// with several reduced axes the condition takes each as the tiles do,
// Max(1, size).
// shapes: 31x31x0x97
// shapes: 1x1x0x100000
// shapes: 0x3x5x7
// shapes: 3x4x5x6
// seed: 14
// device: ascend910b
func.func @main(%x: tensor<?x?x?x?xf32>) -> (tensor<f32>, tensor<?xf32>) {
  %v1 = tensor.reduce_min %x {axes = [3, 1, 0, 2]} : tensor<?x?x?x?xf32> -> tensor<f32>
  %v2 = tensor.reduce_sum %x {axes = [0, 2, 3]} : tensor<?x?x?x?xf32> -> tensor<?xf32>
  func.return %v1, %v2 : tensor<f32>, tensor<?xf32>
}
