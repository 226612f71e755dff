// Found by tests/test_random_programs.py: ValueError: argument a1: shape (1,)
// does not fit rank 0. The runtime made kernel inputs contiguous with
// np.ascontiguousarray, which turns a 0-d array into a 1-d one. Fixed in
// dvm/launches.py (contiguous). The 0-d arguments are numpy scalars here
// (make_inputs of shape ()), which the runtime now also takes as 0-d arrays
// (they reached the VM as scalars: "LaunchError: a2: expected a numpy array,
// got bool").
// shapes: 1x5 scalar scalar
// shapes: 1x0 scalar scalar
// seed: 3
// device: host
func.func @main(%x: tensor<?x?xf32>, %s: tensor<f32>, %p: tensor<i1>) -> (tensor<1x?xf32>, tensor<i1>) {
  %v = tensor.min %x, %s : (tensor<?x?xf32>, tensor<f32>) -> tensor<1x?xf32>
  %t = arith.constant dense<true> : tensor<i1>
  %q = tensor.ne %p, %t : (tensor<i1>, tensor<i1>) -> tensor<i1>
  func.return %v, %q : tensor<1x?xf32>, tensor<i1>
}
