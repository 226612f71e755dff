// The reverse and a slice of a splat constant broadcast to a dynamic size:
// dvm.compile failed with "cannot be one kernel: %r = tensor.reverse slices
// a value computed in the kernel". Fusion took the constant for a kernel
// input, so the broadcast was a view of it that the reverse could reverse,
// but the kernel copied the constant in as an immediate, which its broadcast
// computes. Fixed in passes/kernel_inputs.py (loads): a broadcast that a
// slice or reverse of the kernel reads loads its splat constant, as views do.
// shapes: 4x3
// shapes: 2x0
// shapes: 257x1
// seed: 1
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?xi32>, tensor<?xf32>) {
  %k = arith.constant dense<5> : tensor<i32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %b = tensor.broadcast_to %k to [%n] : tensor<i32> -> tensor<?xi32>
  %r = tensor.reverse %b {axes = [0]} : tensor<?xi32>
  %h = tensor.broadcast_to %half to [%n] : tensor<f32> -> tensor<?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %s = tensor.extract_slice %h[0] [%m] [1] : tensor<?xf32> to tensor<?xf32>
  func.return %r, %s : tensor<?xi32>, tensor<?xf32>
}
