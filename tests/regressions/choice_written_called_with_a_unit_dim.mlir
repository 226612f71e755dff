// A tensor.choice written in the program, called where a dim of one of its
// fused kernel's parts is 1 (x is 1x3): the runtime compiles a variant with that
// dim static, where the parts' domains differ in rank and the kernel cannot be
// one, and whose conditions named a symbol (x_0) the variant no longer has
// (`KeyError: 'x_0'` when the choice was resolved). Fixed in
// lowering/tensor_to_tile.py (a choice whose first region holds a kernel that
// cannot be one takes its second) and dvm/variant_ir.py (the symbols of the
// dims fixed to 1 are 1 in the conditions).
// shapes: 1x3 2x3
// shapes: 2x3 2x3
// shapes: 1x3 1x3
// seed: 4
func.func @main(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %r:2 = tensor.choice [y_0 == x_0, y_1 == x_1] -> (tensor<?x?xf32>, tensor<?x?xf32>) {
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
