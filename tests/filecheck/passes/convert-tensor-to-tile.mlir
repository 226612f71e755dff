// convert-tensor-to-tile: each `tensor.fusion` becomes a `tile.kernel` (a
// grid of tiles and the body one tile runs) and a `tile.launch` in its place.
// Tile sizes are named (`t0` for domain axis 0) and defined once, in
// `dvm.tile_sizes`, as expressions of the shape symbols chosen by the tiling
// function for the device; `dvm.axes` says, per tile dim, the domain size,
// the tile size and what walks it (a grid axis, a loop, or nothing).
//
// The ascend910b preset is fixed (48 vector and 24 cube cores, 192 KiB of
// local memory, 32-byte alignment), so its constants are checked exactly.
// RUN: dvm-opt %s --split-input-file -p 'symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=ascend910b}' | filecheck %s
//
// The host preset takes this machine's core count and per-core L2 size, so
// its constants are matched by pattern; the structure is the same.
// RUN: dvm-opt %s --split-input-file -p 'symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=host}' | filecheck %s --check-prefix=HOST
// RUN: dvm-opt %s --split-input-file -p 'symbolic-shapes,fuse,stack,convert-tensor-to-tile' | filecheck %s --check-prefix=HOST
//
// RUN: not dvm-opt %s -p 'convert-tensor-to-tile{device=tpu}' 2>&1 | filecheck %s --check-prefix=BADDEVICE
// BADDEVICE: dvm-opt: error: invalid pass pipeline 'convert-tensor-to-tile{device=tpu}': convert-tensor-to-tile: unknown device 'tpu'; use ['ascend910b', 'host']

// LayerNorm: one vector kernel over (x_0, x_1) reducing axis 1, in two
// variants picked at run time by a `tensor.choice`: `_rows` when a whole row
// fits in local memory with the other live tiles (x_1 <= 13926 floats on
// ascend910b for long rows: 85% of 192 KiB over 12 live bytes per element,
// and 4 more over x_1 for the tiles one per row, full-size when rows are
// short), else one that walks rows in chunks of t1 <= 13920 floats (13926
// rounded down to the 8-float alignment unit). A tile holds t0 rows, at most a core's share of
// the rows, floor(x_0/cores) (every core gets a tile; `cores` is given by the
// VM: 48 when it plans, 1 for a first launch it runs on one core), and as
// many as fit beside a chunk.

// CHECK-LABEL: func.func @layernorm(
// CHECK-NEXT:    %y = tensor.choice [x_1 <= Max(1, floor(167116*Max(1, x_1)/(12*Max(1, x_1) + 4)))] {dvm.shape = #dvm.shape<x_0, x_1>} -> (tensor<?x?xf32>) {
// CHECK-NEXT:      %[[ROWS:.*]] = tile.launch @layernorm_k0_rows(%x, %w, %b) {dvm.shape = #dvm.shape<x_0, x_1>} : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:      tensor.yield %[[ROWS]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[CHUNKS:.*]] = tile.launch @layernorm_k0(%x, %w, %b) {dvm.shape = #dvm.shape<x_0, x_1>}
// CHECK-NEXT:      tensor.yield %[[CHUNKS]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y

// The chunked kernel: one phase per reduction, each a loop over the chunks
// of a row that recomputes its input from %x and folds it into an
// accumulator (mean, then variance); a last loop computes and stores the
// output. Values that do not change along the row (%mean, %r) are computed
// between the loops, once per tile.
// CHECK:       tile.kernel @layernorm_k0 vector grid [ceiling(x_0/t0)] outputs 1 (%x: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>, %y: tensor<?x?xf32>)
// CHECK-SAME:    dvm.tile_sizes = {t0 = #dvm.expr<{{.*}}floor(167116*Max(1, x_1)/(12*Max(1, x_1) + 4)){{.*}}/8)))))), Max(floor(x_0/cores){{.*}}floor(16384/Max(1, x_1)){{.*}}>, t1 = #dvm.expr<Max(1, Min(x_1, Max(8, 8*floor(Max(1, floor(Max(1, floor(167116*Max(1, x_1)/(12*Max(1, x_1) + 4)))))/8))))>}
// CHECK-SAME:    dvm.axes = [#tile.axis<x_0, t0, grid0>, #tile.axis<x_1, t1, loop0>]
// CHECK-SAME:    dvm.arg_shapes = [#dvm.shape<x_0, x_1>, #dvm.shape<x_1>, #dvm.shape<x_1>, #dvm.shape<x_0, x_1>]
// CHECK-NEXT:    %[[ZERO:.*]] = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, 1], f32>
// CHECK-NEXT:    %[[SUM:.*]] = tile.for loop0 to ceiling(x_1/t1) (%[[ACC:.*]]: !tile.tile<[t0, 1], f32> = %[[ZERO]]) {
// CHECK-NEXT:      %[[X:.*]] = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, loop0] : tensor<?x?xf32> -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:      %[[PART:.*]] = tile.reduce_sum %[[X]] {axes = [1 : i64]} : !tile.tile<[t0, t1], f32> -> !tile.tile<[t0, 1], f32>
// CHECK-NEXT:      %[[NEXT:.*]] = tile.add %[[ACC]], %[[PART]]
// CHECK-NEXT:      tile.yield %[[NEXT]] : !tile.tile<[t0, 1], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[N:.*]] = tile.constant #dvm.expr<x_1> : !tile.tile<[1, 1], f32>
// CHECK-NEXT:    %mean = tile.div %[[SUM]], %[[N]] : (!tile.tile<[t0, 1], f32>, !tile.tile<[1, 1], f32>) -> !tile.tile<[t0, 1], f32>
// CHECK-NEXT:    %[[ZERO2:.*]] = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, 1], f32>
// CHECK-NEXT:    %[[SQ:.*]] = tile.for loop0 to ceiling(x_1/t1) (%[[ACC2:.*]]: !tile.tile<[t0, 1], f32> = %[[ZERO2]]) {
// CHECK-NEXT:      %[[X2:.*]] = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, loop0]
// CHECK-NEXT:      %d = tile.sub %[[X2]], %mean : (!tile.tile<[t0, t1], f32>, !tile.tile<[t0, 1], f32>) -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:      %d2 = tile.mul %d, %d
// CHECK-NEXT:      %[[PART2:.*]] = tile.reduce_sum %d2 {axes = [1 : i64]}
// CHECK-NEXT:      %[[NEXT2:.*]] = tile.add %[[ACC2]], %[[PART2]]
// CHECK-NEXT:      tile.yield %[[NEXT2]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[N2:.*]] = tile.constant #dvm.expr<x_1> : !tile.tile<[1, 1], f32>
// CHECK-NEXT:    %var = tile.div %[[SQ]], %[[N2]]
// CHECK-NEXT:    %eps = tile.constant 1.000000e-05 : f32 : !tile.tile<[1, 1], f32>
// CHECK-NEXT:    %ve = tile.add %var, %eps : (!tile.tile<[t0, 1], f32>, !tile.tile<[1, 1], f32>) -> !tile.tile<[t0, 1], f32>
// CHECK-NEXT:    %r = tile.rsqrt %ve : !tile.tile<[t0, 1], f32>
// CHECK-NEXT:    tile.for loop0 to ceiling(x_1/t1) () {
// CHECK-NEXT:      %[[X3:.*]] = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, loop0]
// CHECK-NEXT:      %[[D:.*]] = tile.sub %[[X3]], %mean
// CHECK-NEXT:      %n = tile.mul %[[D]], %r
// CHECK-NEXT:      %[[W:.*]] = tile.load %w offset 0 sizes [1, x_1] strides [0, 1] tiles [1, t1] index [whole, loop0] : tensor<?xf32> -> !tile.tile<[1, t1], f32>
// CHECK-NEXT:      %s = tile.mul %n, %[[W]] : (!tile.tile<[t0, t1], f32>, !tile.tile<[1, t1], f32>) -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:      %[[B:.*]] = tile.load %b offset 0 sizes [1, x_1] strides [0, 1] tiles [1, t1] index [whole, loop0]
// CHECK-NEXT:      %[[Y:.*]] = tile.add %s, %[[B]]
// CHECK-NEXT:      tile.store %[[Y]], %y offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, loop0] : !tile.tile<[t0, t1], f32>, tensor<?x?xf32>
// CHECK-NEXT:      tile.yield
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// The whole-rows kernel: t1 is the row, walked by nothing; %x is read once.
// CHECK-NEXT:  tile.kernel @layernorm_k0_rows vector grid [ceiling(x_0/t0)] outputs 1
// CHECK-SAME:    dvm.tile_sizes = {t0 = #dvm.expr<{{.*}}floor(Max(1, floor(167116*Max(1, x_1)/(12*Max(1, x_1) + 4)))/Max(1, x_1)){{.*}}floor(x_0/cores){{.*}}floor(16384/Max(1, x_1)){{.*}}>, t1 = #dvm.expr<Max(1, x_1)>}
// CHECK-SAME:    dvm.axes = [#tile.axis<x_0, t0, grid0>, #tile.axis<x_1, t1, whole>]
// CHECK-NEXT:    %[[XR:.*]] = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, whole]
// CHECK-NOT:     tile.for
// CHECK-NOT:     tile.load %x
// CHECK:         tile.store %{{.*}}, %y offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, whole]
// CHECK-NEXT:  }

// HOST-LABEL: func.func @layernorm(
// HOST-NEXT:    %y = tensor.choice [x_1 <= Max(1, floor([[USABLE:[0-9]+]]*Max(1, x_1)/(12*Max(1, x_1) + 4)))]
// HOST:         tile.kernel @layernorm_k0 vector grid [ceiling(x_0/t0)]
// HOST-SAME:      dvm.tile_sizes = {t0 = #dvm.expr<{{.*}}floor([[USABLE]]*Max(1, x_1){{.*}}floor(x_0/cores){{.*}}>, t1 = #dvm.expr<Max(1, Min(x_1, Max(16, 16*floor({{.*}}/16))))>}
// HOST-SAME:      dvm.device = "host"
// HOST-COUNT-3:   tile.for loop0 to ceiling(x_1/t1)
// HOST:         tile.kernel @layernorm_k0_rows vector
// HOST-SAME:      t1 = #dvm.expr<Max(1, x_1)>
func.func @layernorm(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %mean = tensor.reduce_mean %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %x, %mean : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %d2 = tensor.mul %d, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %var = tensor.reduce_mean %d2 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %ve = tensor.add %var, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %r = tensor.rsqrt %ve : tensor<?x1xf32>
  %n = tensor.mul %d, %r : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %s = tensor.mul %n, %w : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %y = tensor.add %s, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}


// -----

// A static row decides the choice at compile time: 64 floats always fit
// (one whole-rows kernel, no `_rows` twin and no choice); 100000 never do
// on ascend910b (one chunked kernel).

// CHECK-LABEL: func.func @short_rows(
// CHECK-NEXT:    %y = tile.launch @short_rows_k0(%x, %w)
// CHECK-NEXT:    func.return %y
// CHECK-LABEL: func.func @long_rows(
// CHECK-NEXT:    %s = tile.launch @long_rows_k1(%z)
// CHECK-NEXT:    func.return %s
// CHECK:       tile.kernel @short_rows_k0 vector
// CHECK-SAME:    dvm.axes = [#tile.axis<x_0, t0, grid0>, #tile.axis<64, 64, whole>]
// CHECK-NOT:     tile.for
// CHECK:       tile.kernel @long_rows_k1 vector
// CHECK-SAME:    dvm.axes = [#tile.axis<z_0, t0, grid0>, #tile.axis<100000, {{[0-9]+}}, loop0>]
// CHECK-NOT:   tile.kernel

// HOST-LABEL: func.func @short_rows(
// HOST-NEXT:    tile.launch @short_rows_k0(%x, %w)
func.func @short_rows(%x: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
  %m = tensor.reduce_sum %x {axes = [1], keepdims = true} : tensor<?x64xf32> -> tensor<?x1xf32>
  %d = tensor.sub %x, %m : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32>
  %y = tensor.mul %d, %w : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}
func.func @long_rows(%z: tensor<?x100000xf32>) -> tensor<?x1xf32> {
  %s = tensor.reduce_sum %z {axes = [1], keepdims = true} : tensor<?x100000xf32> -> tensor<?x1xf32>
  func.return %s : tensor<?x1xf32>
}

// -----

// A cube kernel: a grid over output tiles of t0 x t1; each tile accumulates
// `tile.mma` over the chunks of K (t2 wide), loading a t0 x t2 tile of %a and
// a t2 x t1 tile of %b per chunk. Its tiles live in the cube memory (512 KiB,
// 111411 floats usable): two output tiles (the accumulator in and out) of at
// most 160 * 160 elements take at most half of it (2 * 160 * 160 <= 111411 /
// 2); the columns are cut into equal tiles of at most 160, the rows into a
// multiple of 24 equal tiles (24 cube cores; at least 8 rows; fewer when
// the work is small) of at most 25600 / t1 rows and no more than 640; K
// takes what the output tiles leave, written with t0 and t1:
// (111411 - 2 * t0 * t1) / (t0 + t1), in equal chunks. When all
// of K fits there, the `_whole_k` variant runs instead: no loop, one mma onto
// a zero constant (an mma that does not accumulate).

// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    %c = tensor.choice [a_1 <= Max(8, 8*floor(floor((-2*[[T0:.*]]*[[T1:.*]] + 111411)/([[T0]] + [[T1]]))/8))] {dvm.shape = #dvm.shape<a_0, b_1>} -> (tensor<?x?xf32>) {
// CHECK-NEXT:      %0 = tile.launch @matmul_k0_whole_k(%a, %b) {dvm.shape = #dvm.shape<a_0, b_1>} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:      tensor.yield %0
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %1 = tile.launch @matmul_k0(%a, %b) {dvm.shape = #dvm.shape<a_0, b_1>} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT:      tensor.yield %1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %c
// CHECK:       tile.kernel @matmul_k0 cube grid [ceiling(a_0/t0), ceiling(b_1/t1)] outputs 1 (%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>)
// CHECK-SAME:    dvm.tile_sizes = {t0 = #dvm.expr<[[T0]]>, t1 = #dvm.expr<[[T1]]>, t2 = #dvm.expr<Max(1, Min(a_1, 8*ceiling(ceiling(a_1/Max(1, ceiling(a_1/Max(8, 8*floor(floor((-2*t0*t1 + 111411)/(t0 + t1))/8)))))/8)))>}
// CHECK-SAME:    dvm.axes = [#tile.axis<a_0, t0, grid0>, #tile.axis<b_1, t1, grid1>]
// CHECK-NEXT:    %[[ZERO:.*]] = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, t1], f32>
// CHECK-NEXT:    %c_1 = tile.for loop0 to ceiling(a_1/t2) (%[[ACC:.*]]: !tile.tile<[t0, t1], f32> = %[[ZERO]]) {
// CHECK-NEXT:      %[[A:.*]] = tile.load %a offset 0 sizes [a_0, a_1] strides [a_1, 1] tiles [t0, t2] index [grid0, loop0] : tensor<?x?xf32> -> !tile.tile<[t0, t2], f32>
// CHECK-NEXT:      %[[B:.*]] = tile.load %b offset 0 sizes [a_1, b_1] strides [b_1, 1] tiles [t2, t1] index [loop0, grid1] : tensor<?x?xf32> -> !tile.tile<[t2, t1], f32>
// CHECK-NEXT:      %[[NEXT:.*]] = tile.mma %[[A]], %[[B]], %[[ACC]] : (!tile.tile<[t0, t2], f32>, !tile.tile<[t2, t1], f32>, !tile.tile<[t0, t1], f32>) -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:      tile.yield %[[NEXT]] : !tile.tile<[t0, t1], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.store %c_1, %c offset 0 sizes [a_0, b_1] strides [b_1, 1] tiles [t0, t1] index [grid0, grid1] : !tile.tile<[t0, t1], f32>, tensor<?x?xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.kernel @matmul_k0_whole_k cube grid [ceiling(a_0/t0), ceiling(b_1/t1)]
// CHECK-SAME:    dvm.tile_sizes = {t0 = #dvm.expr<[[T0]]>, t1 = #dvm.expr<[[T1]]>, t2 = #dvm.expr<Max(1, a_1)>}
// CHECK-NEXT:    %[[ZERO:.*]] = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, t1], f32>
// CHECK-NEXT:    %[[A:.*]] = tile.load %a {{.*}} tiles [t0, t2] index [grid0, whole] :
// CHECK-NEXT:    %[[B:.*]] = tile.load %b {{.*}} tiles [t2, t1] index [whole, grid1] :
// CHECK-NEXT:    %c_1 = tile.mma %[[A]], %[[B]], %[[ZERO]]
// CHECK-NEXT:    tile.store %c_1, %c

// On the host, whose BLAS threads share each gemm, the rows are cut only
// where the cube memory needs it: no share per core, no least rows.
// HOST-LABEL: func.func @matmul(
// HOST:         tile.kernel @matmul_k0 cube grid [ceiling(a_0/t0), ceiling(b_1/t1)]
// HOST-SAME:      dvm.tile_sizes = {t0 = #dvm.expr<Max(1, Min(a_0, Max(16, ceiling(a_0/Max(1, ceiling(a_0/Min({{[0-9]+}}, floor({{[0-9]+}}/Max(1, Min(b_1, 16*ceiling(ceiling(b_1/Max(1, ceiling(b_1/{{[0-9]+}})))/16)))))))))))>, t1 = #dvm.expr<Max(1, Min(b_1, 16*ceiling(ceiling(b_1/Max(1, ceiling(b_1/{{[0-9]+}})))/16)))>, t2 = #dvm.expr<{{.*}}>}
// HOST:           tile.for loop0 to ceiling(a_1/t2)
// HOST:             tile.mma
// HOST:         tile.kernel @matmul_k0_whole_k cube
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = tensor.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}

// -----

// A mix kernel: the K loop as in a cube kernel, then the elementwise
// epilogue once per finished output tile: the bias is loaded as a 1 x t1
// tile (stride 0 along the rows), the relu's zero is a 1 x 1 constant that
// broadcasts. Its peak is still two output tiles (the add reads the
// accumulator, the max its result), so the tiles are the matmul's.

// CHECK-LABEL: func.func @addmm_relu(
// CHECK-NEXT:    %y = tensor.choice [x_1 <= {{.*}}111411{{.*}}]
// CHECK-NEXT:      tile.launch @addmm_relu_k0_whole_k(%x, %w, %bias) {dvm.shape = #dvm.shape<x_0, w_1>}
// CHECK:           tile.launch @addmm_relu_k0(%x, %w, %bias) {dvm.shape = #dvm.shape<x_0, w_1>}
// CHECK:       tile.kernel @addmm_relu_k0 mix grid [ceiling(x_0/t0), ceiling(w_1/t1)] outputs 1 (%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %bias: tensor<?xf32>, %y: tensor<?x?xf32>)
// CHECK-SAME:    dvm.tile_sizes = {t0 = #dvm.expr<Max(1, Min(x_0, Max(8, ceiling(x_0/Max(1, ceiling(x_0/Min(640, floor(25600/Max(1, Min(w_1, 8*ceiling(ceiling(w_1/Max(1, ceiling(w_1/160)))/8)))))), Min(ceiling(x_0/Max(1, floor(16384/Max(1, x_1 + Max(1, Min(w_1, 8*ceiling(ceiling(w_1/Max(1, ceiling(w_1/160)))/8))))))), 24*ceiling(x_0/(24*Min(640, floor(25600/Max(1, Min(w_1, 8*ceiling(ceiling(w_1/Max(1, ceiling(w_1/160)))/8)))))))))))))>, t1 = #dvm.expr<Max(1, Min(w_1, 8*ceiling(ceiling(w_1/Max(1, ceiling(w_1/160)))/8)))>, t2 = #dvm.expr<{{.*}}111411{{.*}}>}
// CHECK-NEXT:    %[[ZERO:.*]] = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, t1], f32>
// CHECK-NEXT:    %mm = tile.for loop0 to ceiling(x_1/t2) (%[[ACC:.*]]: !tile.tile<[t0, t1], f32> = %[[ZERO]]) {
// CHECK-NEXT:      %[[A:.*]] = tile.load %x {{.*}} index [grid0, loop0] :
// CHECK-NEXT:      %[[B:.*]] = tile.load %w {{.*}} index [loop0, grid1] :
// CHECK-NEXT:      %[[NEXT:.*]] = tile.mma %[[A]], %[[B]], %[[ACC]]
// CHECK-NEXT:      tile.yield %[[NEXT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[BIAS:.*]] = tile.load %bias offset 0 sizes [1, w_1] strides [0, 1] tiles [1, t1] index [whole, grid1] : tensor<?xf32> -> !tile.tile<[1, t1], f32>
// CHECK-NEXT:    %z = tile.add %mm, %[[BIAS]] : (!tile.tile<[t0, t1], f32>, !tile.tile<[1, t1], f32>) -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:    %zero = tile.constant 0.000000e+00 : f32 : !tile.tile<[1, 1], f32>
// CHECK-NEXT:    %[[Y:.*]] = tile.max %z, %zero : (!tile.tile<[t0, t1], f32>, !tile.tile<[1, 1], f32>) -> !tile.tile<[t0, t1], f32>
// CHECK-NEXT:    tile.store %[[Y]], %y offset 0 sizes [x_0, w_1] strides [w_1, 1] tiles [t0, t1] index [grid0, grid1]
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.kernel @addmm_relu_k0_whole_k mix
// CHECK-NEXT:    %[[ZERO:.*]] = tile.constant 0.000000e+00 : f32 : !tile.tile<[t0, t1], f32>
// CHECK-NEXT:    tile.load %x
// CHECK-NEXT:    tile.load %w
// CHECK-NEXT:    %mm = tile.mma {{.*}}, %[[ZERO]]
// CHECK-NEXT:    %[[BIAS:.*]] = tile.load %bias
// CHECK-NEXT:    %z = tile.add %mm, %[[BIAS]]

// HOST-LABEL: func.func @addmm_relu(
// HOST:         tile.kernel @addmm_relu_k0 mix
// HOST:           tile.mma
// HOST:         tile.max
func.func @addmm_relu(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %mm = tensor.matmul %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %z = tensor.add %mm, %bias : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %y = tensor.max %z, %zero : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// Views: the transposed read of %x and the transposed write of the result
// become strides (1 along the domain's first axis, x_1 along its second).

// CHECK-LABEL: func.func @views(
// CHECK:         tile.kernel @views_k0 vector grid [ceiling(x_1/t0), ceiling(x_0/t1)]
// CHECK:           tile.load %x offset 0 sizes [x_1, x_0] strides [1, x_1] tiles [t0, t1] index [grid0, grid1]
// CHECK:           tile.load %y offset 0 sizes [x_1, x_0] strides [x_0, 1] tiles [t0, t1] index [grid0, grid1]
// CHECK:           tile.store %{{.*}}, %et offset 0 sizes [x_1, x_0] strides [1, x_1] tiles [t0, t1] index [grid0, grid1]
func.func @views(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %xt = tensor.transpose %x {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %s = tensor.add %xt, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %e = tensor.exp %s : tensor<?x?xf32>
  %et = tensor.transpose %e {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %et : tensor<?x?xf32>
}

// -----

// Stacked kernels (independent, and of different ranks, so no guarded
// choice): each becomes a kernel of its own and a launch inside the stack,
// which still launches them together.

// CHECK-LABEL: func.func @stacked(
// CHECK-NEXT:    %e, %t = tensor.stack parallel
// CHECK-NEXT:      %[[E:.*]] = tile.launch @stacked_k0(%x)
// CHECK-NEXT:      %[[T:.*]] = tile.launch @stacked_k1(%y)
// CHECK-NEXT:      tensor.yield %[[E]], %[[T]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %e, %t
// CHECK:       tile.kernel @stacked_k0 vector
// CHECK:         tile.exp
// CHECK:       tile.kernel @stacked_k1 vector
// CHECK:         tile.tanh
func.func @stacked(%x: tensor<?xf32>, %y: tensor<?x4xf32>) -> (tensor<?xf32>, tensor<?x4xf32>) {
  %e = tensor.exp %x : tensor<?xf32>
  %t = tensor.tanh %y : tensor<?x4xf32>
  func.return %e, %t : tensor<?xf32>, tensor<?x4xf32>
}

// -----

// A reduction along an axis its value is uniform along (no load spans it: the
// splat's broadcast): a loop over that axis would count the value once per
// chunk, so it runs once, and the axis is accounted for in closed form. A max
// is the value itself, or its identity when the axis may be empty (n = 0).

// CHECK-LABEL: tile.kernel @uniform_k0 vector
// CHECK:         %[[B:.*]] = tile.constant 3.000000e+00 : f32
// CHECK:         %[[ACC:.*]] = tile.for loop0 to 1
// CHECK:           tile.add %{{.*}}, %[[B]]
// CHECK:         %[[N:.*]] = tile.constant #dvm.expr<n>
// CHECK:         %[[SOME:.*]] = tile.gt %[[N]]
// CHECK:         %[[EMPTY:.*]] = tile.constant 0xff800000 : f32
// CHECK:         tile.select %[[SOME]], %[[ACC]], %[[EMPTY]]
func.func @uniform(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %k = arith.constant dense<3.0> : tensor<f32>
  %b = tensor.broadcast_to %k to [%n, 1] : tensor<f32> -> tensor<?x1xf32>
  %a = tensor.add %x, %b : (tensor<?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %r = tensor.reduce_max %a {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// -----

// Outputs fused with a reduction over more axes than they span are stored only
// in loops over their own axes: %yq out of the loop over x_0's chunks (each
// chunk stored it again, and none when x_0 = 0), %yx, which spans only the
// inner axis, in a nest whose loop over q_0 runs once (the levels nest in order).

// CHECK-LABEL: tile.kernel @beside_k0 vector
// CHECK:         tile.store %{{.*}}, %m
// CHECK-NEXT:    tile.for loop0 to ceiling(q_0/t0) () {
// CHECK-NEXT:      %[[Q:.*]] = tile.load %q
// CHECK-NEXT:      %[[YQ:.*]] = tile.abs %[[Q]]
// CHECK-NEXT:      tile.store %[[YQ]], %yq
// CHECK-NEXT:      tile.for loop1 to ceiling(x_0/t1) () {
// CHECK-NEXT:        %[[X:.*]] = tile.load %x
// CHECK-NEXT:        %[[O:.*]] = tile.add %[[Q]], %[[X]]
// CHECK-NEXT:        tile.store %[[O]], %o
// CHECK-NEXT:        tile.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.for loop0 to 1 () {
// CHECK-NEXT:      tile.for loop1 to ceiling(x_0/t1) () {
// CHECK-NEXT:        %[[X2:.*]] = tile.load %x
// CHECK-NEXT:        %[[YX:.*]] = tile.abs %[[X2]]
// CHECK-NEXT:        tile.store %[[YX]], %yx
// CHECK-NEXT:        tile.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.yield
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @beside(%q: tensor<?xf32>, %x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<f32>) {
  %yq = tensor.abs %q : tensor<?xf32>
  %yx = tensor.abs %x : tensor<?xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %q, %c0 : tensor<?xf32>
  %qe = tensor.expand_shape %q [[0, 1]] output_shape [%n, 1] : tensor<?xf32> into tensor<?x1xf32>
  %o = tensor.add %qe, %x : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %m = tensor.reduce_max %o {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  func.return %yq, %yx, %o, %m : tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<f32>
}

// -----

// Values that skip the reduced axis z_0 (%x, broadcast against %z, |x| and the
// max over z_0) have tiles 1/t0 of the full ones, as large as them when z_0 is
// 0 or 1. Counted whole, the registers hold 12 bytes per element where the
// full-size tiles hold 8, so the budget is 167116·m/(8·m + 4) elements with m
// = Max(1, z_0): 13926 for one z, and 20889 (167116/8) only for long axes.

// CHECK-LABEL: func.func @skipping(
// CHECK-NEXT:    %y, %m = tensor.choice [z_0*Min(8, x_1) <= Max(1, floor(167116*Max(1, z_0)/(8*Max(1, z_0) + 4)))]
// CHECK:       tile.kernel @skipping_k0_rows vector
// CHECK-SAME:    t1 = #dvm.expr<Max(1, Min(x_0, Max(1, floor(Max(1, Min(Max(1, floor(Max(1, floor(167116*t0/(8*t0 + 4)))/t0)),

// HOST-LABEL: func.func @skipping(
// HOST-NEXT:    %y, %m = tensor.choice [z_0*Min({{[0-9]+}}, x_1) <= Max(1, floor({{[0-9]+}}*Max(1, z_0)/(8*Max(1, z_0) + 4)))]
func.func @skipping(%x: tensor<?x?xf32>, %z: tensor<?x?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %b = tensor.add %x, %z : (tensor<?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %y = tensor.abs %x : tensor<?x?xf32>
  %m = tensor.reduce_max %b {axes = [0]} : tensor<?x?x?xf32> -> tensor<?x?xf32>
  func.return %y, %m : tensor<?x?xf32>, tensor<?x?xf32>
}
