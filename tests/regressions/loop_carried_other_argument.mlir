// Found by tests/test_random_programs.py: ProgramError: %v13 = scf.for:
// loop-carried value 0 changes shape at axis 0 (arg1_0 -> arg0_0). The loop
// enters with %arg1 and yields %arg0, two `?` dims that are equal whenever
// the program is well defined; the pass refused them as not provably equal.
// Fixed in passes/symbolic_shapes.py: the carried dims are required equal, a
// guard checked at call time.
// shapes: 2 2
// shapes: 0 0
// shapes: 1 1
// seed: 0
// device: host
func.func @main(%arg0: tensor<?xf32>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %iv = %c0 to %c2 step %c1 iter_args(%acc = %arg1) -> (tensor<?xf32>) {
    %n = tensor.neg %arg0 : tensor<?xf32>
    %s = tensor.add %n, %acc : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    scf.yield %s : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}
