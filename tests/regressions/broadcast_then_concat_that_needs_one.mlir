// Found by tests/test_random_programs_mixed.py: ProgramError: %c = tensor.concat:
// dims 6 and 2 can never be equal (equal rule), for a legal program. The
// broadcast with a static 3 assumed b_0 == 3, after which the concat of b with
// itself into 2 elements was a contradiction; but a broadcast allows b_0 == 1
// too, where the program is defined. Fixed in symbolic-shapes: before it
// refuses a program, it retries with such a dim fixed to 1 (a guard). (Shrunk
// by hand from a long program with index-op pieces of a concat and unit dims
// written `?`.)
// shapes: 3 1
// seed: 3
// device: host
func.func @main(%a: tensor<3xf32>, %b: tensor<?xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  %s = tensor.add %a, %b : (tensor<3xf32>, tensor<?xf32>) -> tensor<3xf32>
  %c = tensor.concat dim(0) %b, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<2xf32>
  func.return %s, %c : tensor<3xf32>, tensor<2xf32>
}
