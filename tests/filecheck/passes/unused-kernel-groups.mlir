// A `tensor.choice` or `tensor.stack` that gives no result holds kernels whose
// values nothing uses (fusion can leave one when every value it planned for
// is dead). Printed, it keeps an empty attribute dictionary before its body,
// so that the body's `{` does not read as one: the text parses back the same.
// convert-tensor-to-tile erases it, with its kernels: nothing is launched.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom | diff %t.custom -
// RUN: dvm-opt %s -p convert-tensor-to-tile | filecheck %s --check-prefix=TILE

// CHECK:       func.func @unused(%x: tensor<?xf32> {dvm.shape = #dvm.shape<x_0>}) -> tensor<?xf32> {
// CHECK-NEXT:    tensor.choice [x_0 == 3] {} {
// CHECK-NEXT:      tensor.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      tensor.stack parallel {} {
// CHECK-NEXT:        %e = tensor.fusion vector
// CHECK:             %t = tensor.fusion vector
// CHECK:               tensor.yield %t_1 : tensor<?xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        tensor.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      tensor.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %x : tensor<?xf32>

// TILE:       func.func @unused(%x: tensor<?xf32> {dvm.shape = #dvm.shape<x_0>}) -> tensor<?xf32> {
// TILE-NEXT:    func.return %x : tensor<?xf32>
// TILE-NEXT:  }
// TILE-NOT:   tile.kernel
func.func @unused(%x: tensor<?xf32> {dvm.shape = #dvm.shape<x_0>}) -> tensor<?xf32> {
  tensor.choice [x_0 == 3] {} {
    tensor.yield
  } else {
    tensor.stack parallel {} {
      %e = tensor.fusion vector (%x) {dvm.domain = #dvm.shape<x_0>, dvm.shape = #dvm.shape<x_0>} : (tensor<?xf32>) -> tensor<?xf32> {
      ^bb0(%x_1: tensor<?xf32>):
        %e_1 = tensor.exp %x_1 {dvm.shape = #dvm.shape<x_0>} : tensor<?xf32>
        tensor.yield %e_1 : tensor<?xf32>
      }
      %t = tensor.fusion vector (%x) {dvm.domain = #dvm.shape<x_0>, dvm.shape = #dvm.shape<x_0>} : (tensor<?xf32>) -> tensor<?xf32> {
      ^bb0(%x_1: tensor<?xf32>):
        %t_1 = tensor.tanh %x_1 {dvm.shape = #dvm.shape<x_0>} : tensor<?xf32>
        tensor.yield %t_1 : tensor<?xf32>
      }
      tensor.yield
    }
    tensor.yield
  }
  func.return %x : tensor<?xf32>
}
