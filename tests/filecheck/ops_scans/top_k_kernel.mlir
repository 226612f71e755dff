// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s
// RUN: dvm-opt %s -p symbolic-shapes,fuse,stack,convert-tensor-to-tile | filecheck %s --check-prefix=TILE
// RUN: dvm-opt %s -p dvm-pipeline | filecheck %s --check-prefix=VM

// A top-16 is a kernel of its own (a k up to 8 is rounds of an argmax, which
// `expand-arg-reductions` makes): its grid splits the rows, and one tile walks
// its row in chunks, in order, merging each chunk and its indices (an iota)
// into a carry of the 16 largest so far and their indices (first the lowest
// value and an index above every index, which every element beats). After the
// loop the carry is stored: the values and the indices, one kernel. The call
// checks that the row has 16 elements (a guard).

func.func @route(%logits: tensor<?x?xf32>) -> (tensor<?x16xf32>, tensor<?x16xi64>) {
  %v, %i = tensor.top_k %logits {k = 16} : tensor<?x?xf32> -> tensor<?x16xf32>, tensor<?x16xi64>
  func.return %v, %i : tensor<?x16xf32>, tensor<?x16xi64>
}

// CHECK:      dvm.guards = [{check = #dvm.cond<Min(16, logits_1) == 16>
// CHECK:      %v, %i = tensor.fusion vector
// CHECK-NEXT:   ^bb0
// CHECK-NEXT:   tensor.top_k
// CHECK-NEXT:   tensor.yield
// CHECK-NOT:  tensor.fusion

// TILE:      tile.kernel @route_k0 {{.*}} outputs 2
// TILE:        tile.constant 0xff800000 : f32 : !tile.tile<[t0, 16, t2], f32>
// TILE-NEXT:   tile.constant 9007199254740992 : i64 : !tile.tile<[t0, 16, t2], i64>
// TILE-NEXT:   tile.for loop0 to ceiling(logits_1/t1)
// TILE-NEXT:     tile.load %logits
// TILE-NEXT:     tile.iota dim(1) : !tile.tile<[t0, t1, t2], i64>
// TILE-NEXT:     tile.top_k {{.*}} {dim = 1 : i64}
// TILE-NEXT:     tile.yield
// TILE:        tile.store {{.*}} %v offset 0 sizes [logits_0, 16, 1] {{.*}} index [grid0, whole, grid1]
// TILE-NEXT:   tile.store {{.*}} %i offset 0 sizes [logits_0, 16, 1]

// VM:         bytecode.program @route_k0
// VM:           bytecode.fill [[V:r[0-9]+]], -inf
// VM-NEXT:      bytecode.fill [[I:r[0-9]+]], 9007199254740992.0
// VM-NEXT:      bytecode.loop
// VM-NEXT:      bytecode.load [[X:r[0-9]+]], v0
// VM-NEXT:      bytecode.iota [[AT:r[0-9]+]]
// VM-NEXT:      bytecode.top_k [[V]], [[I]], [[X]], [[AT]], {1}
// VM-NEXT:      bytecode.endloop
// VM-NEXT:      bytecode.store {{v[0-9]+}}, [[V]]
// VM-NEXT:      bytecode.store {{v[0-9]+}}, [[I]]
// VM-NOT:     bytecode.program @route_k1
