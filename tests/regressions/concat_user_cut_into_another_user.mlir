// Found by the random-program campaign (tests/random_programs_moves.py):
// ValueError: Operation insertion point must have a parent block (at compile
// time). sink_concats splits each elementwise user of a concat; splitting %r cut
// its operand %w with the chain that only it reads, %u among them, and erased
// them, and then %u, a user of the concat too, was split again. Fixed in
// passes/concat_sinking.py (sink_concats): a user already cut away is skipped.
// shapes: 3x2 3x5
// shapes: 0x1 0x0
// shapes: 4x0 4x1
// seed: 7
// device: host
func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %u = tensor.abs %c : tensor<?x?xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %v = tensor.add %u, %one : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %w = tensor.neg %v : tensor<?x?xf32>
  %r = tensor.remainder %c, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
