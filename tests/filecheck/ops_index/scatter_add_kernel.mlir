// RUN: dvm-opt %s -p symbolic-shapes,fuse | filecheck %s --check-prefix=FUSE
// RUN: dvm-opt %s -p symbolic-shapes,fuse,stack,convert-tensor-to-tile | dvm-opt | filecheck %s --check-prefix=TILE
// RUN: dvm-opt %s -p dvm-pipeline | filecheck %s

// An embedding's gradient is a kernel of its own: its grid splits the columns,
// and one tile copies its columns of the table, then walks the token rows in
// chunks, in order, adding each through an indexed store whose view sees the
// table's rows whole (the rows of one chunk all go to one row of the view, at
// stride 0). The launch checks the ids first.

func.func @grad(%table: tensor<?x?xf32>, %ids: tensor<?x?xi32>, %g: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %d = tensor.scatter_add %table, %ids, %g dim(0)
      : (tensor<?x?xf32>, tensor<?x?xi32>, tensor<?x?x?xf32>) -> tensor<?x?xf32>
  func.return %d : tensor<?x?xf32>
}

// FUSE:      tensor.fusion vector (%table, %ids, %g)
// FUSE-NEXT:   ^bb0
// FUSE-NEXT:     tensor.scatter_add
// FUSE-NEXT:     tensor.yield

// TILE:      tile.launch @grad_k0(%table, %ids, %g) {{.*}}dvm.take_checks = [{op = "{{.*}}%d = tensor.scatter_add", size = #dvm.expr<table_0>, axis = 0 : i64, input = 1 : i64}]
// TILE:      tile.kernel @grad_k0 vector
// TILE:        tile.for loop0 to ceiling(table_0/t1) ()
// TILE-NEXT:     %[[B:.*]] = tile.load %table offset 0 sizes [1, table_0, table_1]
// TILE-NEXT:     tile.store %[[B]], %d offset 0 sizes [1, table_0, table_1]
// TILE-NEXT:     tile.yield
// TILE:        tile.for loop0 to ceiling(ids_0*ids_1/t1) ()
// TILE-NEXT:     %[[U:.*]] = tile.load %g offset 0 sizes [1, ids_0*ids_1, table_1]
// TILE-NEXT:     %[[I:.*]] = tile.load %ids offset 0 sizes [1, ids_0*ids_1, 1] strides [0, 1, 0] tiles [1, t1, 1] index [whole, loop0, whole]
// TILE-NEXT:     tile.scatter_add %[[U]][%[[I]]], %d offset 0 sizes [1, 1, table_1, table_0] strides [table_0*table_1, 0, 1, table_1] tiles [t0, 1, t2, table_0] index [grid0, whole, grid1, whole]
// TILE-NEXT:     tile.yield

// CHECK:      bytecode.program @grad_k0
// CHECK:        bytecode.loop
// CHECK-NEXT:   bytecode.load [[B:r[0-9]+]], v0
// CHECK-NEXT:   bytecode.store v1, [[B]]
// CHECK-NEXT:   bytecode.endloop
// CHECK-NEXT:   bytecode.loop
// CHECK-NEXT:   bytecode.load [[U:r[0-9]+]], v2
// CHECK-NEXT:   bytecode.load [[I:r[0-9]+]], v3
// CHECK-NEXT:   bytecode.scatter_add v4, [[U]], [[I]]
// CHECK-NEXT:   bytecode.endloop
