// RUN: dvm-opt %s -p symbolic-shapes,fuse,stack,convert-tensor-to-tile | filecheck %s --check-prefix=TILE
// RUN: dvm-opt %s -p dvm-pipeline | filecheck %s

// A cumsum is a kernel of its own: its grid splits the rows, and one tile walks
// its row in chunks, in order, from a carry (the identity at first) that each
// `scan` moves past its chunk. A reversed scan reads and writes through a view
// that walks the axis from its end (a negative stride). An f16 scan runs in f32.

func.func @running(%x: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %c = tensor.cumsum %x {axis = 1, reverse = true} : tensor<?x?xf16> -> tensor<?x?xf16>
  func.return %c : tensor<?x?xf16>
}

// TILE:      tile.kernel @running_k0
// TILE:        %{{.*}} = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, 1, t2], f32>
// TILE-NEXT:   tile.for loop0 to ceiling(x_1/t1)
// TILE-NEXT:     tile.load %x offset Max(0, x_1 - 1) sizes [x_0, x_1, 1] strides [x_1, -1, 1]
// TILE-NEXT:     tile.convert
// TILE-NEXT:     %{{.*}}, %{{.*}} = tile.scan {{.*}}kind = "sum"
// TILE-NEXT:     tile.convert
// TILE-NEXT:     tile.store {{.*}} %c offset Max(0, x_1 - 1) {{.*}} strides [x_1, -1, 1]
// TILE-NEXT:     tile.yield

// CHECK:      bytecode.program @running_k0
// CHECK:        bytecode.fill [[CARRY:r[0-9]+]], 0.0
// CHECK-NEXT:   bytecode.loop
// CHECK-NEXT:   bytecode.load [[X:r[0-9]+]], v0
// CHECK-NEXT:   bytecode.convert [[W:r[0-9]+]], [[X]], f32
// CHECK-NEXT:   bytecode.scan [[Y:r[0-9]+]], [[W]], [[CARRY]], sum, {1}, []
// CHECK-NEXT:   bytecode.convert {{r[0-9]+}}, [[Y]], f16
// CHECK-NEXT:   bytecode.store
// CHECK-NEXT:   bytecode.endloop
