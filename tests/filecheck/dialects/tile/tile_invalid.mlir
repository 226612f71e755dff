// Invalid tile IR: each case must be rejected with exactly the message in
// its CHECK line, at the offending op's `file:line:col`.
//
// RUN: dvm-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Views: what picks the tile along each dim is `whole`, a grid axis
// (`grid0`..`grid2`) or an enclosing loop (`loop0`..`loop7`). The custom
// syntax cannot spell another (tile_parse_invalid.mlir), so these cases are
// written in the generic form.
tile.kernel @bad_index vector grid [1] outputs 0 (%x: tensor<?x?xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.load' unknown index source 'row'{{$}}
  %a = "tile.load"(%x) <{offset = #dvm.expr<0>, sizes = #dvm.shape<x_0, x_1>, strides = #dvm.shape<x_1, 1>, tiles = #dvm.shape<8, 8>, index = ["grid0", "row"]}> : (tensor<?x?xf32>) -> !tile.tile<[8, 8], f32>
}

// -----

tile.kernel @bad_grid_axis vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.load' unknown index source 'grid3'{{$}}
  %a = "tile.load"(%x) <{offset = #dvm.expr<0>, sizes = #dvm.shape<x_0>, strides = #dvm.shape<1>, tiles = #dvm.shape<8>, index = ["grid3"]}> : (tensor<?xf32>) -> !tile.tile<[8], f32>
}

// -----

// A view has one size, stride, tile and index source per dim of the tile.
tile.kernel @view_arity vector grid [1] outputs 0 (%x: tensor<?x?xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.load' view needs 2 sizes, strides, tiles and index sources{{$}}
  %a = tile.load %x offset 0 sizes [x_0] strides [1] tiles [8] index [grid0] : tensor<?x?xf32> -> !tile.tile<[8, 8], f32>
}

// -----

tile.kernel @store_arity vector grid [1] outputs 1 (%y: tensor<?xf32>) {
  %c = tile.constant 0.000000e+00 : f32 : !tile.tile<[8], f32>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.store' view needs 1 sizes, strides, tiles and index sources{{$}}
  tile.store %c, %y offset 0 sizes [y_0, 1] strides [1, 0] tiles [8, 1] index [grid0, whole] : !tile.tile<[8], f32>, tensor<?xf32>
}

// -----

tile.kernel @bad_accumulate vector grid [1] outputs 1 (%y: tensor<?xf32>) {
  %c = tile.constant 0.000000e+00 : f32 : !tile.tile<[8], f32>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.store' accumulate must be one of ('none', 'add', 'max', 'min'){{$}}
  "tile.store"(%c, %y) <{offset = #dvm.expr<0>, sizes = #dvm.shape<y_0>, strides = #dvm.shape<1>, tiles = #dvm.shape<8>, index = ["grid0"], accumulate = "mul"}> : (!tile.tile<[8], f32>, tensor<?xf32>) -> ()
}

// -----

// A kernel's grid has one to three axes.
// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' grid must have 1 to 3 axes{{$}}
tile.kernel @grid_rank vector grid [2, 2, 2, 2] outputs 0 (%x: tensor<?xf32>) {
}

// -----

// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' grid must have 1 to 3 axes{{$}}
tile.kernel @no_grid vector grid [] outputs 0 (%x: tensor<?xf32>) {
}

// -----

// The last `outputs` arguments are the outputs: there cannot be more of them.
// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' has more outputs than arguments{{$}}
tile.kernel @outputs vector grid [1] outputs 2 (%y: tensor<?xf32>) {
}

// -----

// The kind is one of DVM's, an enum attribute: no other value parses
// (tile_parse_invalid.mlir), and a string is not one.
// CHECK: :[[# @LINE + 1]]:1: error: "vector" should be of base attribute tensor.kind{{$}}
"tile.kernel"() <{sym_name = "kind", kind = "vector", grid = #dvm.shape<1>, outputs = 0 : i64}> ({
^bb0(%x: tensor<?xf32>):
}) : () -> ()

// -----

// A loop's body yields values of its carried values' types.
tile.kernel @for_yield vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  %z = tile.constant 0.000000e+00 : f32 : !tile.tile<[8], f32>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.for' body must yield its carried values' types{{$}}
  %s = tile.for loop0 to 4 (%acc: !tile.tile<[8], f32> = %z) {
    %w = tile.constant 0.000000e+00 : f32 : !tile.tile<[8, 1], f32>
    tile.yield %w : !tile.tile<[8, 1], f32>
  }
}

// -----

tile.kernel @for_yield_count vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  %z = tile.constant 0.000000e+00 : f32 : !tile.tile<[8], f32>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.for' body must yield its carried values' types{{$}}
  %s = tile.for loop0 to 4 (%acc: !tile.tile<[8], f32> = %z) {
    tile.yield
  }
}

// -----

// Elementwise ops broadcast between tiles of one rank only.
tile.kernel @rank vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  %a = tile.constant 0.000000e+00 : f32 : !tile.tile<[8], f32>
  %b = tile.constant 1.000000e+00 : f32 : !tile.tile<[8, 8], f32>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.add' operands and result must have one rank{{$}}
  %c = tile.add %a, %b : (!tile.tile<[8], f32>, !tile.tile<[8, 8], f32>) -> !tile.tile<[8, 8], f32>
}

// -----

// Binary ops take tiles of one element type; a comparison makes i1.
tile.kernel @element_types vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  %a = tile.constant 0.000000e+00 : f32 : !tile.tile<[8], f32>
  %b = tile.constant 1.000000e+00 : f16 : !tile.tile<[8], f16>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.add' operands must have one element type{{$}}
  %c = tile.add %a, %b : (!tile.tile<[8], f32>, !tile.tile<[8], f16>) -> !tile.tile<[8], f32>
}

// -----

tile.kernel @compare_type vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  %a = tile.constant 0.000000e+00 : f32 : !tile.tile<[8], f32>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.lt' result must have element type i1{{$}}
  %c = tile.lt %a, %a : (!tile.tile<[8], f32>, !tile.tile<[8], f32>) -> !tile.tile<[8], f32>
}

// -----

// A reduction keeps the input's rank, its reduced axes of extent 1.
tile.kernel @reduce_axis vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  %a = tile.constant 0.000000e+00 : f32 : !tile.tile<[8, 8], f32>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.reduce_sum' axes [2] must be distinct axes of the input{{$}}
  %s = tile.reduce_sum %a {axes = [2 : i64]} : !tile.tile<[8, 8], f32> -> !tile.tile<[8, 1], f32>
}

// -----

tile.kernel @reduce_extent vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  %a = tile.constant 0.000000e+00 : f32 : !tile.tile<[8, 8], f32>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.reduce_max' result extent 1 must be 1, not 8{{$}}
  %s = tile.reduce_max %a {axes = [1 : i64]} : !tile.tile<[8, 8], f32> -> !tile.tile<[8, 8], f32>
}

// -----

tile.kernel @mma_rank cube grid [1] outputs 0 (%x: tensor<?xf32>) {
  %a = tile.constant 0.000000e+00 : f32 : !tile.tile<[8], f32>
  %c = tile.constant 0.000000e+00 : f32 : !tile.tile<[8, 8], f32>
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.mma' operands must have one rank, at least 2{{$}}
  %d = tile.mma %a, %c, %c : (!tile.tile<[8], f32>, !tile.tile<[8, 8], f32>, !tile.tile<[8, 8], f32>) -> !tile.tile<[8, 8], f32>
}

// -----

// The kernel's attributes, when present, are of their kinds and fit its arguments;
// with `dvm.axes`, every tile of the body has one dim per axis.
// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' @arg_shapes dvm.arg_shapes has 1 shapes for 2 arguments{{$}}
tile.kernel @arg_shapes vector grid [1] outputs 1 (%x: tensor<?xf32>, %y: tensor<?xf32>) {dvm.arg_shapes = [#dvm.shape<x_0>]} {
}

// -----

// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' @arg_rank dvm.arg_shapes: argument 0 has rank 1, its shape 2{{$}}
tile.kernel @arg_rank vector grid [1] outputs 0 (%x: tensor<?xf32>) {dvm.arg_shapes = [#dvm.shape<x_0, 4>]} {
}

// -----

// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' @axes_kind dvm.axes must be an array of #tile.axis{{$}}
tile.kernel @axes_kind vector grid [1] outputs 0 (%x: tensor<?xf32>) {dvm.axes = [#dvm.shape<x_0>]} {
}

// -----

// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' @device dvm.device must be one of the device presets "host", "ascend910b"{{$}}
tile.kernel @device vector grid [1] outputs 0 (%x: tensor<?xf32>) {dvm.device = "tpu"} {
}

// -----

// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' @tile_rank: {{.*}}:[[# @LINE + 3]]:3: 'tile.constant' makes a tile of rank 2 in a kernel of 1 axes{{$}}
tile.kernel @tile_rank vector grid [1] outputs 0 (%x: tensor<?xf32>) {dvm.axes = [#tile.axis<x_0, 8, grid0>]} {
  %a = tile.load %x offset 0 sizes [x_0] strides [1] tiles [8] index [grid0] : tensor<?xf32> -> !tile.tile<[8], f32>
  %c = tile.constant 1.000000e+00 : f32 : !tile.tile<[1, 1], f32>
}

// -----

// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' @grid_axis: {{.*}}:[[# @LINE + 2]]:3: 'tile.load' walks grid1 of a grid of 1 axes{{$}}
tile.kernel @grid_axis vector grid [1] outputs 0 (%x: tensor<?x?xf32>) {
  %a = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [8, 8] index [grid0, grid1] : tensor<?x?xf32> -> !tile.tile<[8, 8], f32>
}

// -----

// CHECK: :[[# @LINE + 1]]:1: error: 'tile.kernel' @loop_axis: {{.*}}:[[# @LINE + 2]]:3: 'tile.load' walks loop0 outside a tile.for loop0{{$}}
tile.kernel @loop_axis vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  %a = tile.load %x offset 0 sizes [x_0] strides [1] tiles [8] index [loop0] : tensor<?xf32> -> !tile.tile<[8], f32>
}

// -----

// A view's tiles are the moved tile's extents.
tile.kernel @view_tiles vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tile.load' view's tiles must be the tile's extents{{$}}
  %a = tile.load %x offset 0 sizes [x_0] strides [1] tiles [4] index [grid0] : tensor<?xf32> -> !tile.tile<[8], f32>
}
