// A tensor.fusion written in the program that yields its input (%x1) and one
// value twice (%e): lowering named the kernel's arguments by the values they
// hold, so the output of %x1 took the input's place (the kernel loaded from
// the output, uninitialized memory) and the second %e output was never
// stored: wrong answers. Fixed in lowering/tensor_to_tile.py
// (copy_repeated_outputs: such outputs yield a copy, a convert to their type).
// shapes: 4x3
// shapes: 1x1
// shapes: 0x2
// seed: 161
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %a, %b, %c = tensor.fusion vector (%x) : (tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  ^bb0(%x1: tensor<?x?xf32>):
    %e = tensor.exp %x1 : tensor<?x?xf32>
    tensor.yield %x1, %e, %e : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
  }
  func.return %a, %b, %c : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}
