// An scf.while whose scf.condition passes on a value of another shape than
// the carried one (the row sums, ?x1, of a carried ?x?): symbolic-shapes gave
// the `do` block's arguments and the results the carried value's shape, so a
// call needed x_1 == 1 (a wrong CallError at %h), and with that fixed the
// `before` block's arguments took the results' shape in lowering, so its
// kernel read the carried x_0 x x_1 value as x_0 x 1 (a wrong answer). Fixed
// in passes/symbolic_shapes.py (while_op: `do` and the results take the
// shapes of what the condition passes) and passes/symbolic.py
// (block_argument_shape: `before` takes the carried values' shapes).
// shapes: 4x3 scalar
// shapes: 1x1 scalar
// shapes: 0x2 scalar
// shapes: 3x1 scalar
// shapes: 3x3 scalar
// shapes: 5x2 scalar
// seed: 31
func.func @main(%x: tensor<?x?xf32>, %lim: tensor<i32>) -> (tensor<?x1xf32>, tensor<i32>) {
  %zero = arith.constant dense<0> : tensor<i32>
  %one = arith.constant dense<1> : tensor<i32>
  %r, %k = scf.while (%v = %x, %n = %zero) : (tensor<?x?xf32>, tensor<i32>) -> (tensor<?x1xf32>, tensor<i32>) {
    %s = tensor.reduce_sum %v {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
    %t = tensor.extract %n[] : tensor<i32>
    %l = tensor.extract %lim[] : tensor<i32>
    %go = arith.cmpi slt, %t, %l : i32
    scf.condition(%go) %s, %n : tensor<?x1xf32>, tensor<i32>
  } do {
  ^bb0(%s1: tensor<?x1xf32>, %n1: tensor<i32>):
    %h = tensor.tanh %s1 : tensor<?x1xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = tensor.dim %x, %c0 : tensor<?x?xf32>
    %cols = tensor.dim %x, %c1 : tensor<?x?xf32>
    %b = tensor.broadcast_to %h to [%rows, %cols] : tensor<?x1xf32> -> tensor<?x?xf32>
    %m = tensor.add %n1, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
    scf.yield %b, %m : tensor<?x?xf32>, tensor<i32>
  }
  func.return %r, %k : tensor<?x1xf32>, tensor<i32>
}
