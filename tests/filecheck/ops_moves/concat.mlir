// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s -p symbolic-shapes,fuse,convert-tensor-to-tile | filecheck %s --check-prefix=TILE
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// A concat of a computed value and an input: its result's dim is the sum of
// the inputs' (other dims guarded equal). The exp that computes its first
// input runs in the concat's kernel: one piece per input, each a loop over
// chunks of the axis that stores into its part of the output.

func.func @join(%a: tensor<?x4xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %e = tensor.exp %a : tensor<?x4xf32>
  %r = tensor.concat dim(1) %e, %b : (tensor<?x4xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}

// CHECK:      dvm.guards = [{check = #dvm.cond<a_0 == b_0>, kind = "equal", op = "%r = tensor.concat"}]
// CHECK:      tensor.fusion vector
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.exp
// CHECK-NEXT:   tensor.concat dim(1) {{.*}}dvm.shape = #dvm.shape<a_0, b_1 + 4>
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

// TILE:       tile.kernel @join_k0 vector grid [ceiling(a_0/t0)]
// TILE:         tile.for loop0 to ceiling(4/t1)
// TILE-NEXT:      tile.load %a offset 0 sizes [a_0, 4] strides [4, 1]
// TILE-NEXT:      tile.exp
// TILE-NEXT:      tile.store {{.*}}, %r offset 0 sizes [a_0, 4] strides [b_1 + 4, 1]
// TILE:         tile.for loop0 to ceiling(b_1/t1)
// TILE-NEXT:      tile.load %b offset 0 sizes [a_0, b_1] strides [b_1, 1]
// TILE-NEXT:      tile.store {{.*}}, %r offset 4 sizes [a_0, b_1] strides [b_1 + 4, 1]

// ROUND: %r = tensor.concat dim(1) %e, %b : (tensor<?x4xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
