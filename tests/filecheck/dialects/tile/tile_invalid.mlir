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
