// Found through the torch backend (a topk beside a mean of a roll): NameError:
// name 'a0_1' is not defined, in the host's choice step. fuse made a guarded
// choice (fused if a0_1 + i0 == a0_1, else apart); the host read the symbols of
// lhs - rhs (i0 alone) but evaluated each side, which also reads a0_1. Fixed in
// dvm/host.py and dvm/host_export.py: a choice's symbols are both sides'.
// shapes: 3x6 index=0
// shapes: 3x6 index=6
// shapes: 1x5 index=3
// shapes: 4x2 index=0
// seed: 0
// device: host
func.func @main(%a0: tensor<?x?xf32>, %i0: index) -> tensor<?x1xf32> {
  %v, %i = tensor.top_k %a0 {k = 2, axis = 1} : tensor<?x?xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
  %s = tensor.reduce_sum %v {axes = [1], keepdims = true} : tensor<?x2xf32> -> tensor<?x1xf32>
  %n = tensor.iota dim(0) %i0 : tensor<?xi64>
  %t = tensor.take %a0, %n dim(1) : (tensor<?x?xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  %c = tensor.concat dim(1) %a0, %t : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %m = tensor.reduce_mean %c {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %r = tensor.add %s, %m : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
  func.return %r : tensor<?x1xf32>
}
