// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s -p symbolic-shapes,fuse,convert-tensor-to-tile | filecheck %s --check-prefix=TILE

// A pad of a computed value: the exp runs in the pad's kernel, which on one
// core fills the result with the constant, then stores the exp's tiles at the
// low pads (offset 1 row and 2 columns into a result 4 + t_1 wide).

func.func @pad_exp(%t: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.exp %t : tensor<?x?xf32>
  %r = tensor.pad %e low[1, 2] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x?xf32> to tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// CHECK:      %r = tensor.fusion vector (%t) {dvm.domain = #dvm.shape<t_0 + 1, t_1 + 4>
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.exp
// CHECK-NEXT:   tensor.pad
// CHECK:        tensor.yield
// CHECK-NOT:  tensor.fusion

// TILE:       tile.kernel @pad_exp_k0 vector grid [1]
// TILE:         tile.constant
// TILE-NEXT:    tile.broadcast
// TILE-NEXT:    tile.store {{.*}}, %r offset 0 sizes [t_0 + 1, t_1 + 4]
// TILE:         tile.load %t offset 0 sizes [t_0, t_1]
// TILE-NEXT:    tile.exp
// TILE-NEXT:    tile.store {{.*}}, %r offset t_1 + 6 sizes [t_0, t_1] strides [t_1 + 4, 1]
