// Tile IR that does not parse: each case must fail with exactly the message in
// its CHECK line, at the `file:line:col` of the offending token.
//
// RUN: dvm-opt %s --parsing-diagnostics --split-input-file | filecheck %s

// A kernel's kind is vector, cube or mix, in either form.
// CHECK: :[[# @LINE + 1]]:19: error: expected kernel kind to be one of vector, cube, mix, got 'scalar'{{$}}
tile.kernel @kind scalar grid [1] outputs 0 (%x: tensor<?xf32>) {
}

// -----

// CHECK: :[[# @LINE + 1]]:58: error: Expected `vector`, `cube`, or `mix`.{{$}}
"tile.kernel"() <{sym_name = "kind", kind = #tensor<kind scalar>, grid = #dvm.shape<1>, outputs = 0 : i64}> ({
^bb0(%x: tensor<?xf32>):
}) : () -> ()

// -----

// What picks the tile along a view dim is a word the custom syntax knows.
tile.kernel @bad_index vector grid [1] outputs 0 (%x: tensor<?x?xf32>) {
  // CHECK: :[[# @LINE + 1]]:91: error: expected index source to be one of whole, grid0, grid1, grid2, loop0, loop1, loop2, loop3, loop4, loop5, loop6, loop7, got 'row'{{$}}
  %a = tile.load %x offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [8, 8] index [grid0, row] : tensor<?x?xf32> -> !tile.tile<[8, 8], f32>
}

// -----

tile.kernel @bad_accumulate vector grid [1] outputs 1 (%y: tensor<?xf32>) {
  %c = tile.constant 0.000000e+00 : f32 : !tile.tile<[8], f32>
  // CHECK: :[[# @LINE + 1]]:89: error: expected accumulation to be one of add, max, min, got 'mul'{{$}}
  tile.store %c, %y offset 0 sizes [y_0] strides [1] tiles [8] index [grid0] accumulate mul : !tile.tile<[8], f32>, tensor<?xf32>
}

// -----

// Sizes are expressions, not strings (as the IR once wrote them).
// CHECK: :[[# @LINE + 1]]:37: error: expected an integer expression (a number, a name, a call or '('){{$}}
tile.kernel @quoted vector grid [1, "x_0"] outputs 0 (%x: tensor<?xf32>) {
}

// -----

tile.kernel @quoted_type vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  // CHECK: :[[# @LINE + 1]]:55: error: expected an integer expression (a number, a name, a call or '('){{$}}
  %z = tile.constant 0.000000e+00 : f32 : !tile.tile<["t0"], f32>
}

// -----

// A malformed expression is an error where it goes wrong.
tile.kernel @bad_count vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  // CHECK: :[[# @LINE + 1]]:21: error: unknown function 'ceil'; use one of Max, Min, floor, ceiling, Mod{{$}}
  tile.for loop0 to ceil(x_0/8) () {
    tile.yield
  }
}

// -----

tile.kernel @bad_view vector grid [1] outputs 0 (%x: tensor<?xf32>) {
  // CHECK: :[[# @LINE + 1]]:32: error: division by zero{{$}}
  %a = tile.load %x offset x_0/0 sizes [x_0] strides [1] tiles [8] index [grid0] : tensor<?xf32> -> !tile.tile<[8], f32>
}

// -----

// CHECK: :[[# @LINE + 1]]:62: error: expected index source to be one of whole, grid0, grid1, grid2, loop0, loop1, loop2, loop3, loop4, loop5, loop6, loop7, got 'row'{{$}}
func.func @axes() attributes {dvm.axes = [#tile.axis<x_0, 8, row>]} {
  func.return
}
