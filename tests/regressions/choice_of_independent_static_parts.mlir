// A tensor.choice written in the program whose first region fuses two
// independent chains over static dims of equal size, with no conditions. Its
// kernel was refused (`Illegal: output e does not span domain axes`): the
// domain analysis lays independent parts on one domain only under a choice's
// assumptions, which fuse always writes. Fixed in lowering/tensor_to_tile.py:
// the kernel of a choice's first region that is not one as it stands is
// analysed again with its parts laid on one domain.
// shapes: 4 4
// seed: 2
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = tensor.choice [] -> (tensor<4xf32>, tensor<4xf32>) {
    %a, %b = tensor.fusion vector (%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%x1: tensor<4xf32>, %y1: tensor<4xf32>):
      %e = tensor.neg %x1 : tensor<4xf32>
      %f = tensor.abs %y1 : tensor<4xf32>
      tensor.yield %e, %f : tensor<4xf32>, tensor<4xf32>
    }
    tensor.yield %a, %b : tensor<4xf32>, tensor<4xf32>
  } else {
    %a = tensor.fusion vector (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x1: tensor<4xf32>):
      %e = tensor.neg %x1 : tensor<4xf32>
      tensor.yield %e : tensor<4xf32>
    }
    %b = tensor.fusion vector (%y) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%y1: tensor<4xf32>):
      %f = tensor.abs %y1 : tensor<4xf32>
      tensor.yield %f : tensor<4xf32>
    }
    tensor.yield %a, %b : tensor<4xf32>, tensor<4xf32>
  }
  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
