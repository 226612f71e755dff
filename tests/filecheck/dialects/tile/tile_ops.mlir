// The tile dialect in its custom form: kernels with and without attributes,
// launches, loads and stores through strided views (with accumulation),
// constants (float, integer, and a symbolic expression), elementwise ops with
// broadcasting, casts, select, broadcast, the four reductions, mma with a
// transposed operand, and tile.for loops with and without carried values.
//
// The printed custom form is checked, then shown to be stable: printed again
// it is the same text, and printed in the generic form, re-parsed and printed
// again it is the same text.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom | diff %t.custom -
// RUN: dvm-opt %t.custom --print-op-generic | dvm-opt | diff %t.custom -
// RUN: dvm-opt %t.custom --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK:      builtin.module {
// CHECK-LABEL:  func.func @host(%x: tensor<?x?xf32>, %w: tensor<?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT:     %y = tile.launch @scale(%x, %w) {dvm.shape = #dvm.shape<x_0, x_1>} : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:     func.return %y : tensor<?x?xf32>
// CHECK-NEXT:   }
// CHECK-LABEL:  tile.kernel @scale vector grid [ceiling(x_0/t0), ceiling(x_1/t1)] outputs 1 (%x: tensor<?x?xf32>, %w: tensor<?xf32>, %y: tensor<?x?xf32>) {dvm.tile_sizes = {t0 = #dvm.expr<Max(1, Min(8, x_0))>, t1 = #dvm.expr<Max(1, Min(64, x_1))>}} {
// CHECK-NEXT:     %a = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, grid1] : tensor<?x?xf32> -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:     %b = tile.load %w offset 0 sizes [1, x_1] strides [0, 1] tiles [1, t1] index [whole, grid1] : tensor<?xf32> -> !tile.tile<[1, t1], f32>
// CHECK-NEXT:     %c = tile.mul %a, %b : (!tile.tile<[t0, t1], f32>, !tile.tile<[1, t1], f32>) -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:     %e = tile.exp %c : !tile.tile<[t0, t1], f32>
// CHECK-NEXT:     %h = tile.constant 5.000000e-01 : f32 : !tile.tile<[1, 1], f32>
// CHECK-NEXT:     %n = tile.constant #dvm.expr<x_1> : !tile.tile<[1, 1], f32>
// CHECK-NEXT:     %k = tile.constant 3 : i32 : !tile.tile<[1, 1], i32>
// CHECK-NEXT:     %kf = tile.convert %k : !tile.tile<[1, 1], i32> -> !tile.tile<[1, 1], f32>
// CHECK-NEXT:     %d = tile.div %e, %n : (!tile.tile<[t0, t1], f32>, !tile.tile<[1, 1], f32>) -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:     %p = tile.gt %d, %h : (!tile.tile<[t0, t1], f32>, !tile.tile<[1, 1], f32>) -> !tile.tile<[t0, t1], i1>
// CHECK-NEXT:     %f = tile.isfinite %d : !tile.tile<[t0, t1], f32> -> !tile.tile<[t0, t1], i1>
// CHECK-NEXT:     %q = tile.logical_and %p, %f : (!tile.tile<[t0, t1], i1>, !tile.tile<[t0, t1], i1>) -> !tile.tile<[t0, t1], i1>
// CHECK-NEXT:     %s = tile.select %q, %d, %kf : (!tile.tile<[t0, t1], i1>, !tile.tile<[t0, t1], f32>, !tile.tile<[1, 1], f32>) -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:     tile.store %s, %y offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, grid1] : !tile.tile<[t0, t1], f32>, tensor<?x?xf32>
// CHECK-NEXT:   }
// A kernel without attributes: the `{` after its arguments opens the body.
// CHECK-LABEL:  tile.kernel @rowsum vector grid [ceiling(x_0/t0)] outputs 2 (%x: tensor<?x?xf32>, %s: tensor<?xf32>, %m: tensor<?xf32>) {
// CHECK-NEXT:     %zero = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, 1], f32>
// CHECK-NEXT:     %lowest = tile.constant 0xff800000 : f32 : !tile.tile<[t0, 1], f32>
// CHECK-NEXT:     %sum, %max = tile.for loop0 to ceiling(x_1/t1) (%acc: !tile.tile<[t0, 1], f32> = %zero, %top: !tile.tile<[t0, 1], f32> = %lowest) {
// CHECK-NEXT:       %a = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, loop0] : tensor<?x?xf32> -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:       %ps = tile.reduce_sum %a {axes = [1 : i64]} : !tile.tile<[t0, t1], f32> -> !tile.tile<[t0, 1], f32>
// CHECK-NEXT:       %pm = tile.reduce_max %a {axes = [1 : i64]} : !tile.tile<[t0, t1], f32> -> !tile.tile<[t0, 1], f32>
// CHECK-NEXT:       %pn = tile.reduce_min %a {axes = [1 : i64]} : !tile.tile<[t0, t1], f32> -> !tile.tile<[t0, 1], f32>
// CHECK-NEXT:       %pp = tile.reduce_prod %a {axes = [0 : i64, 1 : i64]} : !tile.tile<[t0, t1], f32> -> !tile.tile<[1, 1], f32>
// CHECK-NEXT:       %s1 = tile.add %acc, %ps : (!tile.tile<[t0, 1], f32>, !tile.tile<[t0, 1], f32>) -> !tile.tile<[t0, 1], f32>
// CHECK-NEXT:       %m1 = tile.max %top, %pm : (!tile.tile<[t0, 1], f32>, !tile.tile<[t0, 1], f32>) -> !tile.tile<[t0, 1], f32>
// CHECK-NEXT:       tile.yield %s1, %m1 : !tile.tile<[t0, 1], f32>, !tile.tile<[t0, 1], f32>
// CHECK-NEXT:     }
// CHECK-NEXT:     tile.for loop1 to 2 () {
// CHECK-NEXT:       tile.yield
// CHECK-NEXT:     }
// CHECK-NEXT:     %wide = tile.broadcast %sum : !tile.tile<[t0, 1], f32> -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:     tile.store %sum, %s offset 0 sizes [x_0, 1] strides [1, 0] tiles [t0, 1] index [grid0, whole] : !tile.tile<[t0, 1], f32>, tensor<?xf32>
// CHECK-NEXT:     tile.store %max, %m offset 0 sizes [x_0, 1] strides [1, 0] tiles [t0, 1] index [grid0, whole] accumulate max : !tile.tile<[t0, 1], f32>, tensor<?xf32>
// CHECK-NEXT:   }
// CHECK-LABEL:  tile.kernel @mm cube grid [ceiling(a_0/t0), ceiling(b_0/t1), 2] outputs 1 (%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) {
// CHECK-NEXT:     %zero = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, t1], f32>
// CHECK-NEXT:     %acc = tile.for loop0 to ceiling(a_1/t2) (%part: !tile.tile<[t0, t1], f32> = %zero) {
// CHECK-NEXT:       %ta = tile.load %a offset 0 sizes [a_0, a_1] strides [a_1, 1] tiles [t0, t2] index [grid0, loop0] : tensor<?x?xf32> -> !tile.tile<[t0, t2], f32>
// CHECK-NEXT:       %tb = tile.load %b offset 0 sizes [b_0, a_1] strides [a_1, 1] tiles [t1, t2] index [grid1, loop0] : tensor<?x?xf32> -> !tile.tile<[t1, t2], f32>
// CHECK-NEXT:       %next = tile.mma %ta, %tb, %part {transpose_b = true} : (!tile.tile<[t0, t2], f32>, !tile.tile<[t1, t2], f32>, !tile.tile<[t0, t1], f32>) -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:       tile.yield %next : !tile.tile<[t0, t1], f32>
// CHECK-NEXT:     }
// CHECK-NEXT:     tile.store %acc, %c offset a_0*b_0 sizes [a_0, b_0] strides [b_0, 1] tiles [t0, t1] index [grid0, grid1] accumulate add : !tile.tile<[t0, t1], f32>, tensor<?x?xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// The generic form names every op and keeps properties apart from attributes.
// GENERIC:      "tile.kernel"() <{sym_name = "scale", kind = #tensor<kind vector>, grid = #dvm.shape<ceiling(x_0/t0), ceiling(x_1/t1)>, outputs = 1 : i64}> ({
// GENERIC-NEXT:   ^bb0(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %y: tensor<?x?xf32>):
// GENERIC-NEXT:     %a = "tile.load"(%x) <{offset = #dvm.expr<0>, sizes = #dvm.shape<x_0, x_1>, strides = #dvm.shape<x_1, 1>, tiles = #dvm.shape<t0, t1>, index = ["grid0", "grid1"]}> : (tensor<?x?xf32>) -> !tile.tile<[t0, t1], f32>
// GENERIC:          "tile.store"(%s, %y) <{offset = #dvm.expr<0>, sizes = #dvm.shape<x_0, x_1>, strides = #dvm.shape<x_1, 1>, tiles = #dvm.shape<t0, t1>, index = ["grid0", "grid1"]}> : (!tile.tile<[t0, t1], f32>, tensor<?x?xf32>) -> ()
// GENERIC:      "tile.kernel"() <{sym_name = "rowsum", kind = #tensor<kind vector>, grid = #dvm.shape<ceiling(x_0/t0)>, outputs = 2 : i64}> ({
// GENERIC:          %sum, %max = "tile.for"(%zero, %lowest) <{level = 0 : i64, count = #dvm.expr<ceiling(x_1/t1)>}> ({
// GENERIC:          "tile.for"() <{level = 1 : i64, count = #dvm.expr<2>}> ({
// GENERIC:          "tile.yield"() : () -> ()
// GENERIC:          %next = "tile.mma"(%ta, %tb, %part) <{transpose_b = true}>
// GENERIC:          "tile.store"(%acc, %c) <{offset = #dvm.expr<a_0*b_0>, sizes = #dvm.shape<a_0, b_0>, strides = #dvm.shape<b_0, 1>, tiles = #dvm.shape<t0, t1>, index = ["grid0", "grid1"], accumulate = "add"}>

func.func @host(%x: tensor<?x?xf32>, %w: tensor<?xf32>) -> tensor<?x?xf32> {
  %y = tile.launch @scale(%x, %w) {dvm.shape = #dvm.shape<x_0, x_1>} : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
tile.kernel @scale vector grid [ceiling(x_0/t0), ceiling(x_1/t1)] outputs 1 (%x: tensor<?x?xf32>, %w: tensor<?xf32>, %y: tensor<?x?xf32>) {dvm.tile_sizes = {t0 = #dvm.expr<Max(1, Min(8, x_0))>, t1 = #dvm.expr<Max(1, Min(64, x_1))>}} {
  %a = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, grid1] : tensor<?x?xf32> -> !tile.tile<[t0, t1], f32>
  %b = tile.load %w offset 0 sizes [1, x_1] strides [0, 1] tiles [1, t1] index [whole, grid1] : tensor<?xf32> -> !tile.tile<[1, t1], f32>
  %c = tile.mul %a, %b : (!tile.tile<[t0, t1], f32>, !tile.tile<[1, t1], f32>) -> !tile.tile<[t0, t1], f32>
  %e = tile.exp %c : !tile.tile<[t0, t1], f32>
  %h = tile.constant 5.000000e-01 : f32 : !tile.tile<[1, 1], f32>
  %n = tile.constant #dvm.expr<x_1> : !tile.tile<[1, 1], f32>
  %k = tile.constant 3 : i32 : !tile.tile<[1, 1], i32>
  %kf = tile.convert %k : !tile.tile<[1, 1], i32> -> !tile.tile<[1, 1], f32>
  %d = tile.div %e, %n : (!tile.tile<[t0, t1], f32>, !tile.tile<[1, 1], f32>) -> !tile.tile<[t0, t1], f32>
  %p = tile.gt %d, %h : (!tile.tile<[t0, t1], f32>, !tile.tile<[1, 1], f32>) -> !tile.tile<[t0, t1], i1>
  %f = tile.isfinite %d : !tile.tile<[t0, t1], f32> -> !tile.tile<[t0, t1], i1>
  %q = tile.logical_and %p, %f : (!tile.tile<[t0, t1], i1>, !tile.tile<[t0, t1], i1>) -> !tile.tile<[t0, t1], i1>
  %s = tile.select %q, %d, %kf : (!tile.tile<[t0, t1], i1>, !tile.tile<[t0, t1], f32>, !tile.tile<[1, 1], f32>) -> !tile.tile<[t0, t1], f32>
  tile.store %s, %y offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, grid1] : !tile.tile<[t0, t1], f32>, tensor<?x?xf32>
}
tile.kernel @rowsum vector grid [ceiling(x_0/t0)] outputs 2 (%x: tensor<?x?xf32>, %s: tensor<?xf32>, %m: tensor<?xf32>) {
  %zero = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, 1], f32>
  %lowest = tile.constant 0xFF800000 : f32 : !tile.tile<[t0, 1], f32>
  %sum, %max = tile.for loop0 to ceiling(x_1/t1) (%acc: !tile.tile<[t0, 1], f32> = %zero, %top: !tile.tile<[t0, 1], f32> = %lowest) {
    %a = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, loop0] : tensor<?x?xf32> -> !tile.tile<[t0, t1], f32>
    %ps = tile.reduce_sum %a {axes = [1]} : !tile.tile<[t0, t1], f32> -> !tile.tile<[t0, 1], f32>
    %pm = tile.reduce_max %a {axes = [1]} : !tile.tile<[t0, t1], f32> -> !tile.tile<[t0, 1], f32>
    %pn = tile.reduce_min %a {axes = [1]} : !tile.tile<[t0, t1], f32> -> !tile.tile<[t0, 1], f32>
    %pp = tile.reduce_prod %a {axes = [0, 1]} : !tile.tile<[t0, t1], f32> -> !tile.tile<[1, 1], f32>
    %s1 = tile.add %acc, %ps : (!tile.tile<[t0, 1], f32>, !tile.tile<[t0, 1], f32>) -> !tile.tile<[t0, 1], f32>
    %m1 = tile.max %top, %pm : (!tile.tile<[t0, 1], f32>, !tile.tile<[t0, 1], f32>) -> !tile.tile<[t0, 1], f32>
    tile.yield %s1, %m1 : !tile.tile<[t0, 1], f32>, !tile.tile<[t0, 1], f32>
  }
  tile.for loop1 to 2 () {
    tile.yield
  }
  %wide = tile.broadcast %sum : !tile.tile<[t0, 1], f32> -> !tile.tile<[t0, t1], f32>
  tile.store %sum, %s offset 0 sizes [x_0, 1] strides [1, 0] tiles [t0, 1] index [grid0, whole] : !tile.tile<[t0, 1], f32>, tensor<?xf32>
  tile.store %max, %m offset 0 sizes [x_0, 1] strides [1, 0] tiles [t0, 1] index [grid0, whole] accumulate max : !tile.tile<[t0, 1], f32>, tensor<?xf32>
}
tile.kernel @mm cube grid [ceiling(a_0/t0), ceiling(b_0/t1), 2] outputs 1 (%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) {
  %zero = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, t1], f32>
  %acc = tile.for loop0 to ceiling(a_1/t2) (%part: !tile.tile<[t0, t1], f32> = %zero) {
    %ta = tile.load %a offset 0 sizes [a_0, a_1] strides [a_1, 1] tiles [t0, t2] index [grid0, loop0] : tensor<?x?xf32> -> !tile.tile<[t0, t2], f32>
    %tb = tile.load %b offset 0 sizes [b_0, a_1] strides [a_1, 1] tiles [t1, t2] index [grid1, loop0] : tensor<?x?xf32> -> !tile.tile<[t1, t2], f32>
    %next = tile.mma %ta, %tb, %part {transpose_b = true} : (!tile.tile<[t0, t2], f32>, !tile.tile<[t1, t2], f32>, !tile.tile<[t0, t1], f32>) -> !tile.tile<[t0, t1], f32>
    tile.yield %next : !tile.tile<[t0, t1], f32>
  }
  tile.store %acc, %c offset a_0*b_0 sizes [a_0, b_0] strides [b_0, 1] tiles [t0, t1] index [grid0, grid1] accumulate add : !tile.tile<[t0, t1], f32>, tensor<?x?xf32>
}
