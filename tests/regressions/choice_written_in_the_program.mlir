// A tensor.choice written in the program, whose first region fuses two
// elementwise chains into one kernel that is legal only under the choice's
// conditions (equal shapes). Lowering its kernel raised `Illegal: output e does
// not span domain axes`: the kernel carried no `dvm.assume` (fuse writes one on
// the kernels it builds), so its domain was analysed without the conditions, and
// the reference interpreter could not evaluate a bound (`x_1 <= 3`) of an
// argument symbol of a program symbolic-shapes had not run on. Fixed in
// lowering/tensor_to_tile.py (a kernel assumes the conditions of the choices
// whose first region holds it) and dvm/interpreter.py (dims of arguments
// without shapes bound to the symbols symbolic-shapes names them by).
// shapes: 3x2 3x2
// shapes: 3x2 3x5
// shapes: 2x2 4x2
// shapes: 0x2 0x3
// seed: 3
func.func @main(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %r:2 = tensor.choice [y_0 == x_0, y_1 == x_1, x_1 <= 3] -> (tensor<?x?xf32>, tensor<?x?xf32>) {
    %a, %b = tensor.fusion vector (%x, %y) : (tensor<?x?xf32>, tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
    ^bb0(%x1: tensor<?x?xf32>, %y1: tensor<?x?xf32>):
      %e = tensor.neg %x1 : tensor<?x?xf32>
      %f = tensor.abs %y1 : tensor<?x?xf32>
      tensor.yield %e, %f : tensor<?x?xf32>, tensor<?x?xf32>
    }
    tensor.yield %a, %b : tensor<?x?xf32>, tensor<?x?xf32>
  } else {
    %a = tensor.fusion vector (%x) : (tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb0(%x1: tensor<?x?xf32>):
      %e = tensor.neg %x1 : tensor<?x?xf32>
      tensor.yield %e : tensor<?x?xf32>
    }
    %b = tensor.fusion vector (%y) : (tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb0(%y1: tensor<?x?xf32>):
      %f = tensor.abs %y1 : tensor<?x?xf32>
      tensor.yield %f : tensor<?x?xf32>
    }
    tensor.yield %a, %b : tensor<?x?xf32>, tensor<?x?xf32>
  }
  func.return %r#0, %r#1 : tensor<?x?xf32>, tensor<?x?xf32>
}
