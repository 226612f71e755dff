// Found by the random-program campaign (tests/random_programs_moves.py):
// Illegal: %s = tensor.extract_slice slices a value computed in the kernel, and
// (a transpose and a collapse of one constant in a kernel) Illegal: %d =
// tensor.sub: size 2 cannot span domain size 3 (at compile time). fuse copies
// splat constants into the kernels that use them, also as the source of a
// slice, reverse, transpose or reshape, which the domain analysis takes as a
// view of a kernel input. Fixed in passes/fuse.py (inputs): such a constant is
// a kernel input.
// shapes: 5x3x2 5
// shapes: 0x3x2 0
// shapes: 1x3x2 1
// seed: 2
// device: host
func.func @main(%x: tensor<?x3x2xf32>, %y: tensor<?xf32>) -> (tensor<?x3x2xf32>, tensor<?x6xf32>, tensor<?xf32>, tensor<4xf32>) {
  %k = arith.constant dense<1.5> : tensor<2x3xf32>
  %t = tensor.transpose %k {perm = [1, 0]} : tensor<2x3xf32> -> tensor<3x2xf32>
  %a = tensor.add %x, %t : (tensor<?x3x2xf32>, tensor<3x2xf32>) -> tensor<?x3x2xf32>
  %c = tensor.collapse_shape %k [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %e = tensor.expand_shape %c [[0, 1]] output_shape [1, 6] : tensor<6xf32> into tensor<1x6xf32>
  %b = tensor.collapse_shape %x [[0], [1, 2]] : tensor<?x3x2xf32> into tensor<?x6xf32>
  %d = tensor.sub %b, %e : (tensor<?x6xf32>, tensor<1x6xf32>) -> tensor<?x6xf32>
  %q = arith.constant dense<-0.25> : tensor<4xf32>
  %s = tensor.extract_slice %q[1] [1] [1] : tensor<4xf32> to tensor<1xf32>
  %m = tensor.max %y, %s : (tensor<?xf32>, tensor<1xf32>) -> tensor<?xf32>
  %r = tensor.reverse %q {axes = [0]} : tensor<4xf32>
  func.return %a, %d, %m, %r : tensor<?x3x2xf32>, tensor<?x6xf32>, tensor<?xf32>, tensor<4xf32>
}
