// RUN: dvm-opt %s -p symbolic-shapes,fuse,convert-tensor-to-tile | filecheck %s
// RUN: dvm-opt %s | dvm-opt | filecheck %s --check-prefix=ROUND

// A strided insert at a run-time row offset: one kernel of one tile, which
// copies the destination and then stores the source through the slice's
// view of the result (offset 16*o + 1, strides doubled).

func.func @update(%s: tensor<?x8xf32>, %d: tensor<?x16xf32>, %o: index, %n: index) -> tensor<?x16xf32> {
  %r = tensor.insert_slice %s into %d[%o, 1] [%n, 8] [1, 2] : tensor<?x8xf32> into tensor<?x16xf32>
  func.return %r : tensor<?x16xf32>
}

// CHECK:      tile.launch @update_k0(%s, %d) {{.*}}dvm.slice_bounds = [{op = "{{.*}}tensor.insert_slice", source = #dvm.shape<d_0, 16>, offsets = #dvm.shape<o, 1>, sizes = #dvm.shape<s_0, 8>, strides = #dvm.shape<1, 2>, whole = "destination"}]
// CHECK:      tile.kernel @update_k0 vector grid [1]
// CHECK:        tile.for loop0 to ceiling(d_0/t0)
// CHECK-NEXT:     tile.for loop1 to 1
// CHECK-NEXT:       tile.load %d offset 0 sizes [d_0, 16] strides [16, 1]
// CHECK-NEXT:       tile.store {{.*}}, %r offset 0 sizes [d_0, 16] strides [16, 1]
// CHECK:        tile.for loop0 to ceiling(s_0/t0)
// CHECK-NEXT:     tile.for loop1 to 1
// CHECK-NEXT:       tile.load %s offset 0 sizes [s_0, 8] strides [8, 1]
// CHECK-NEXT:       tile.store {{.*}}, %r offset 16*o + 1 sizes [s_0, 8] strides [16, 2]

// ROUND: %r = tensor.insert_slice %s into %d [%o, 1] [%n, 8] [1, 2] : tensor<?x8xf32> into tensor<?x16xf32>
