// The symbolic-shapes pass: a symbol per dynamic dim of each argument
// (`x_0` is axis 0 of %x), a `dvm.shape` on every tensor-valued op, the
// `dvm.value` of index values, and on each function the guards its ops need
// (`dvm.guards`) and the symbols they unified (`dvm.unified`).
//
// RUN: dvm-opt %s --split-input-file --verify-diagnostics -p symbolic-shapes | filecheck %s
//
// The pass is idempotent: run twice, it gives the same output.
// RUN: dvm-opt %s --split-input-file --verify-diagnostics -p symbolic-shapes,symbolic-shapes | filecheck %s
//
// Without --verify-diagnostics the first guard that can never hold (the
// first invalid chunk below) is an error at its op's file:line:col, exit 1.
// RUN: not dvm-opt %s --split-input-file -p symbolic-shapes 2>&1 | filecheck %s --check-prefix=ERROR

// Broadcasting a dynamic dim against another gives a `broadcast` guard and
// unifies the later symbol into the earlier one: after `%s`, w_0 is x_1 and
// every shape below is written in x_0, x_1 only. A static 1 (`%mean`'s axis
// 1) or a 0-d tensor (`%eps`) broadcasts without a guard.

// CHECK-LABEL: func.func @layernorm(
// CHECK-SAME:    %x: tensor<?x?xf32> {dvm.shape = #dvm.shape<x_0, x_1>},
// CHECK-SAME:    %w: tensor<?xf32> {dvm.shape = #dvm.shape<w_0>},
// CHECK-SAME:    %b: tensor<?xf32> {dvm.shape = #dvm.shape<b_0>}) -> tensor<?x?xf32>
// CHECK-SAME:    attributes {dvm.guards = [
// CHECK-SAME:      {check = #dvm.cond<x_1 == w_0>, kind = "broadcast", op = "%s = tensor.mul"},
// CHECK-SAME:      {check = #dvm.cond<x_1 == b_0>, kind = "broadcast", op = "%y = tensor.add"}],
// CHECK-SAME:    dvm.unified = {b_0 = #dvm.expr<x_1>, w_0 = #dvm.expr<x_1>}} {
// CHECK-NEXT:    %eps = arith.constant {dvm.shape = #dvm.shape<>} dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %mean = tensor.reduce_mean %x {dvm.shape = #dvm.shape<x_0, 1>, axes = [1 : i64], keepdims = true}
// CHECK-NEXT:    %d = tensor.sub %x, %mean {dvm.shape = #dvm.shape<x_0, x_1>}
// CHECK-NEXT:    %ve = tensor.add %mean, %eps {dvm.shape = #dvm.shape<x_0, 1>}
// CHECK-NEXT:    %s = tensor.mul %d, %w {dvm.shape = #dvm.shape<x_0, x_1>}
// CHECK-NEXT:    %y = tensor.add %s, %b {dvm.shape = #dvm.shape<x_0, x_1>}
// CHECK-NEXT:    func.return %y
func.func @layernorm(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %mean = tensor.reduce_mean %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %x, %mean : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %ve = tensor.add %mean, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %s = tensor.mul %d, %w : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %y = tensor.add %s, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// Operands already provably equal (`%a + %a`) need no guard. Unification is
// transitive, and a static size wins: once `%v` needs a_0 == 32, every
// symbol unified with a_0 is 32 too, and every shape says so.

// CHECK-LABEL: func.func @chain(
// CHECK-SAME:    attributes {dvm.guards = [
// CHECK-SAME:      {check = #dvm.cond<a_0 == b_0>, kind = "broadcast", op = "%t = tensor.add"},
// CHECK-SAME:      {check = #dvm.cond<c_0 == a_0>, kind = "broadcast", op = "%u = tensor.add"},
// CHECK-SAME:      {check = #dvm.cond<a_0 == 32>, kind = "broadcast", op = "%v = tensor.mul"}],
// CHECK-SAME:    dvm.unified = {a_0 = #dvm.expr<32>, b_0 = #dvm.expr<32>, c_0 = #dvm.expr<32>}} {
// CHECK-NEXT:    %s = tensor.add %a, %a {dvm.shape = #dvm.shape<32>}
// CHECK-NEXT:    %t = tensor.add %s, %b {dvm.shape = #dvm.shape<32>}
// CHECK-NEXT:    %u = tensor.add %c, %t {dvm.shape = #dvm.shape<32>}
// CHECK-NEXT:    %v = tensor.mul %u, %d {dvm.shape = #dvm.shape<32>}
func.func @chain(%a: tensor<?xf32>, %b: tensor<?xf32>, %c: tensor<?xf32>, %d: tensor<32xf32>) -> tensor<?xf32> {
  %s = tensor.add %a, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %t = tensor.add %s, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %u = tensor.add %c, %t : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %v = tensor.mul %u, %d : (tensor<?xf32>, tensor<32xf32>) -> tensor<?xf32>
  func.return %v : tensor<?xf32>
}

// -----

// matmul: the contraction dims must be equal (an `equal` guard: a mismatch
// is an error at call time, never a re-specialization); batch dims follow
// numpy broadcasting (here %b has none). `%ct` contracts %c's last dim, b_1,
// with %a's last, a_2: a second guard, and since shapes are written after all
// unifications, `%c`'s shape says a_2 where b_1 was.

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %a: tensor<?x?x?xf32> {dvm.shape = #dvm.shape<a_0, a_1, a_2>},
// CHECK-SAME:    %b: tensor<?x?xf32> {dvm.shape = #dvm.shape<b_0, b_1>})
// CHECK-SAME:    attributes {dvm.guards = [
// CHECK-SAME:      {check = #dvm.cond<a_2 == b_0>, kind = "equal", op = "%c = tensor.matmul"},
// CHECK-SAME:      {check = #dvm.cond<b_1 == a_2>, kind = "equal", op = "%ct = tensor.matmul"}],
// CHECK-SAME:    dvm.unified = {b_0 = #dvm.expr<a_2>, b_1 = #dvm.expr<a_2>}} {
// CHECK-NEXT:    %c = tensor.matmul %a, %b {dvm.shape = #dvm.shape<a_0, a_1, a_2>}
// CHECK-NEXT:    %ct = tensor.matmul %c, %a {dvm.shape = #dvm.shape<a_0, a_1, a_1>, transpose_b = true}
func.func @matmul(%a: tensor<?x?x?xf32>, %b: tensor<?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %c = tensor.matmul %a, %b : (tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
  %ct = tensor.matmul %c, %a {transpose_b = true} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %c, %ct : tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// -----

// Index values carry their expression (`dvm.value`); expand_shape with
// sizes taken from `tensor.dim` needs no guard (64 = 4 * 16 is proved), and
// transpose permutes the symbols.

// CHECK-LABEL: func.func @heads(
// CHECK-SAME:    %x: tensor<?x?x64xf32> {dvm.shape = #dvm.shape<x_0, x_1, 64>})
// CHECK-SAME:    attributes {dvm.guards = [], dvm.unified = {}} {
// CHECK:         %B = tensor.dim {dvm.value = #dvm.expr<x_0>} %x, %i0
// CHECK-NEXT:    %S = tensor.dim {dvm.value = #dvm.expr<x_1>} %x, %i1
// CHECK-NEXT:    %x4 = tensor.expand_shape %x {{.*}} {dvm.shape = #dvm.shape<x_0, x_1, 4, 16>}
// CHECK-NEXT:    %t = tensor.transpose %x4 {dvm.shape = #dvm.shape<x_0, 4, x_1, 16>,
func.func @heads(%x: tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32> {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %B = tensor.dim %x, %i0 : tensor<?x?x64xf32>
  %S = tensor.dim %x, %i1 : tensor<?x?x64xf32>
  %x4 = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [%B, %S, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
  %t = tensor.transpose %x4 {perm = [0, 2, 1, 3]} : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  func.return %t : tensor<?x4x?x16xf32>
}

// -----

// expand_shape into sizes given by index arguments: the source dim must be
// their product, an `equal` guard that unifies x_0 with the expression n*m.
// Index arguments are symbols named after the argument. Index arithmetic is
// followed symbolically.

// CHECK-LABEL: func.func @split(
// CHECK-SAME:    %x: tensor<?xf32> {dvm.shape = #dvm.shape<x_0>}, %n: index, %m: index)
// CHECK-SAME:    attributes {dvm.guards = [{check = #dvm.cond<x_0 == m*n>, kind = "equal", op = "%e = tensor.expand_shape"}],
// CHECK-SAME:    dvm.unified = {x_0 = #dvm.expr<m*n>}} {
// CHECK-NEXT:    %e = tensor.expand_shape %x {{.*}} {dvm.shape = #dvm.shape<n, m>}
// CHECK-NEXT:    %c = tensor.collapse_shape %e {{.*}} {dvm.shape = #dvm.shape<m*n>}
// CHECK-NEXT:    %y = tensor.add %c, %x {dvm.shape = #dvm.shape<m*n>}
// CHECK-NEXT:    %n2 = arith.addi %n, %n {dvm.value = #dvm.expr<2*n>} : index
// CHECK-NEXT:    %nm = arith.muli %n, %m {dvm.value = #dvm.expr<m*n>} : index
// CHECK-NEXT:    %z = tensor.broadcast_to %y to [%n2, %nm] {dvm.shape = #dvm.shape<2*n, m*n>}
func.func @split(%x: tensor<?xf32>, %n: index, %m: index) -> tensor<?x?xf32> {
  %e = tensor.expand_shape %x [[0, 1]] output_shape [%n, %m] : tensor<?xf32> into tensor<?x?xf32>
  %c = tensor.collapse_shape %e [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %y = tensor.add %c, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %n2 = arith.addi %n, %n : index
  %nm = arith.muli %n, %m : index
  %z = tensor.broadcast_to %y to [%n2, %nm] : tensor<?xf32> -> tensor<?x?xf32>
  func.return %z : tensor<?x?xf32>
}

// -----

// Sizes are integers, so a number both sides of a guard share is divided out:
// `%s`'s 2*h against `%a`'s 2*w_0 unifies h with w_0, and the sum's dim is
// 2*w_0 (a rotary embedding's halves, sized by an index argument, against its
// angles' table).

// CHECK-LABEL: func.func @halves(
// CHECK-SAME:    attributes {dvm.guards = [{check = #dvm.cond<2*h == 2*w_0>, kind = "broadcast", op = "%y = tensor.add"}],
// CHECK-SAME:    dvm.unified = {h = #dvm.expr<w_0>}} {
// CHECK-NEXT:    %h2 = arith.addi %h, %h {dvm.value = #dvm.expr<2*w_0>} : index
// CHECK:         %y = tensor.add %s, %a {dvm.shape = #dvm.shape<2*w_0>}
func.func @halves(%x: tensor<?xf32>, %w: tensor<?xf32>, %h: index) -> tensor<?xf32> {
  %h2 = arith.addi %h, %h : index
  %s = tensor.extract_slice %x[0] [%h2] [1] : tensor<?xf32> to tensor<?xf32>
  %a = tensor.concat dim(0) %w, %w : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %y = tensor.add %s, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// Control flow: the branches of an scf.if yield (x_0, x_1) and (x_1, x_0);
// where they differ the result gets a fresh symbol, bound when the value is
// produced at run time.

// CHECK-LABEL: func.func @branches(
// CHECK:         %t = tensor.exp %x {dvm.shape = #dvm.shape<x_0, x_1>}
// CHECK:         %t_1 = tensor.transpose %x {dvm.shape = #dvm.shape<x_1, x_0>,
// CHECK:         }{dvm.shape = #dvm.shape<r0_1, r0_2>}
// CHECK-NEXT:    %z = tensor.add %y, %y {dvm.shape = #dvm.shape<r0_1, r0_2>}
func.func @branches(%x: tensor<?x?xf32>, %c: i1) -> tensor<?x?xf32> {
  %y = scf.if %c -> (tensor<?x?xf32>) {
    %t = tensor.exp %x : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  } else {
    %t = tensor.transpose %x {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  %z = tensor.add %y, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %z : tensor<?x?xf32>
}

// -----

// A broadcast of x_2 against 2*x_2 (%x collapsed) assumes x_2 == 2*x_2; the
// result type then states the dim is 2, so x_2 := 2 and that guard reads
// 2 == 4. The broadcast is defined only where x_2 is 1: the pass starts over
// with x_2 fixed to 1, a guard the runtime checks.
// CHECK-LABEL: func.func @broadcast_defined_only_at_one(
// CHECK-SAME:    attributes {dvm.guards = [{check = #dvm.cond<x_2 == 1>, kind = "equal", op = "%y = tensor.gt"}], dvm.unified = {x_2 = #dvm.expr<1>}} {
// CHECK:         %c = tensor.collapse_shape {{.*}} {dvm.shape = #dvm.shape<2, 2>}
// CHECK:         %y = tensor.gt %x, %c {dvm.shape = #dvm.shape<2, 2, 2>}
func.func @broadcast_defined_only_at_one(%x: tensor<2x2x?xf32>) -> tensor<2x2x2xi1> {
  %c = tensor.collapse_shape %x [[0], [1, 2]] : tensor<2x2x?xf32> into tensor<2x?xf32>
  %y = tensor.gt %x, %c : (tensor<2x2x?xf32>, tensor<2x?xf32>) -> tensor<2x2x2xi1>
  func.return %y : tensor<2x2x2xi1>
}

// -----

// The same broadcast, followed by an op that x_2 = 2 contradicts (x_2
// against a static 1). That op fails while the walk still assumes x_2 = 2;
// the pass first retries with the broken broadcast guard's unit alternative,
// under which the program is defined.
// CHECK-LABEL: func.func @contradiction_after_a_broken_broadcast(
// CHECK-SAME:    attributes {dvm.guards = [{check = #dvm.cond<x_2 == 1>, kind = "equal", op = "%y = tensor.gt"}], dvm.unified = {x_2 = #dvm.expr<1>}} {
// CHECK:         %z = tensor.add %x, %b {dvm.shape = #dvm.shape<2, 2, 1>}
func.func @contradiction_after_a_broken_broadcast(%x: tensor<2x2x?xf32>, %b: tensor<2x2x1xf32>) -> tensor<2x2x1xf32> {
  %c = tensor.collapse_shape %x [[0], [1, 2]] : tensor<2x2x?xf32> into tensor<2x?xf32>
  %y = tensor.gt %x, %c : (tensor<2x2x?xf32>, tensor<2x?xf32>) -> tensor<2x2x2xi1>
  %z = tensor.add %x, %b : (tensor<2x2x?xf32>, tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
  func.return %z : tensor<2x2x1xf32>
}

// -----

// A broadcast unifies y_3 with 2*x_2 (%x collapsed); the result type then
// makes x_2 = 1, so y_3 = 2, and %z (y_3 against a static 1) needs y_3 = 1.
// As for a dim a broadcast unified with a static size, the program is still
// defined there: a unit claim, and the broadcast guard re-specializes.
// CHECK-LABEL: func.func @unified_with_an_expression_then_one(
// CHECK-SAME:    dvm.guards = [{check = #dvm.cond<y_3 == 2*x_2>, kind = "broadcast", op = "%s = tensor.select"}, {check = #dvm.cond<x_2 == 1>, kind = "equal", op = "%s = tensor.select"}, {check = #dvm.cond<y_3 == 1>, kind = "equal", op = "%z = tensor.logical_and"}]
func.func @unified_with_an_expression_then_one(%x: tensor<1x2x?x1xf32>, %y: tensor<1x2x1x?xi1>, %b: tensor<1x2x1x1xi1>) -> tensor<1x2x1x1xi1> {
  %c = tensor.collapse_shape %x [[0], [1, 2, 3]] : tensor<1x2x?x1xf32> into tensor<1x?xf32>
  %s = tensor.select %y, %x, %c : (tensor<1x2x1x?xi1>, tensor<1x2x?x1xf32>, tensor<1x?xf32>) -> tensor<1x2x1x2xf32>
  %z = tensor.logical_and %y, %b : (tensor<1x2x1x?xi1>, tensor<1x2x1x1xi1>) -> tensor<1x2x1x1xi1>
  func.return %z : tensor<1x2x1x1xi1>
}

// -----

// Two broadcasts that assume a_0 is 32 and 64: both hold only where a_0 is 1,
// which is then required (a guard), not the program refused.
// CHECK-LABEL: func.func @broadcast_against_two_sizes(
// CHECK-SAME:    attributes {dvm.guards = [{check = #dvm.cond<a_0 == 1>, kind = "equal", op = "%x = tensor.add"}], dvm.unified = {a_0 = #dvm.expr<1>}} {
// CHECK:         %y = tensor.add %a, %c {dvm.shape = #dvm.shape<64>}
func.func @broadcast_against_two_sizes(%a: tensor<?xf32>, %b: tensor<32xf32>, %c: tensor<64xf32>) -> tensor<?xf32> {
  %x = tensor.add %a, %b : (tensor<?xf32>, tensor<32xf32>) -> tensor<?xf32>
  %y = tensor.add %a, %c : (tensor<?xf32>, tensor<64xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// A broadcast assumes b_0 is 3; the concat then needs 2 * b_0 == 2, which holds
// where b_0 is the other size a broadcast allows, 1.
// CHECK-LABEL: func.func @broadcast_then_a_concat_that_needs_one(
// CHECK-SAME:    dvm.guards = [{check = #dvm.cond<b_0 == 1>, kind = "equal", op = "%s = tensor.add"}]
// CHECK:         %c = tensor.concat dim(0) %b, %b {dvm.shape = #dvm.shape<2>}
func.func @broadcast_then_a_concat_that_needs_one(%a: tensor<3xf32>, %b: tensor<?xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  %s = tensor.add %a, %b : (tensor<3xf32>, tensor<?xf32>) -> tensor<3xf32>
  %c = tensor.concat dim(0) %b, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<2xf32>
  func.return %s, %c : tensor<3xf32>, tensor<2xf32>
}

// -----

// Invalid programs: each op alone verifies (a `?` agrees with any static
// dim), but the guards they need together can never hold. The pass names
// the op, at its file:line:col.

// Broadcast: %x has 32 elements (a_0 is 32 or 1), then %y needs it to be 64.
func.func @never_broadcast(%a: tensor<?xf32>, %b: tensor<32xf32>, %c: tensor<64xf32>) -> tensor<?xf32> {
  %x = tensor.add %a, %b : (tensor<?xf32>, tensor<32xf32>) -> tensor<?xf32>
  // ERROR: symbolic-shapes.mlir:[[# @LINE + 2]]:3: error: %y = tensor.add: dims 32 and 64 can never be equal (broadcast rule){{$}}
  // CHECK: symbolic-shapes.mlir:[[# @LINE + 1]]:3: %y = tensor.add: dims 32 and 64 can never be equal (broadcast rule){{$}}
  %y = tensor.add %x, %c : (tensor<?xf32>, tensor<64xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// expand_shape: a_0 is 5 (from %s), the output shape multiplies to 3 * 2.
func.func @never_expand(%a: tensor<?xf32>, %b: tensor<5xf32>) -> tensor<?x2xf32> {
  %n = arith.constant 3 : index
  %s = tensor.add %a, %b : (tensor<?xf32>, tensor<5xf32>) -> tensor<?xf32>
  // CHECK: symbolic-shapes.mlir:[[# @LINE + 1]]:3: %e = tensor.expand_shape: dims 5 and 6 can never be equal (equal rule){{$}}
  %e = tensor.expand_shape %s [[0, 1]] output_shape [%n, 2] : tensor<?xf32> into tensor<?x2xf32>
  func.return %e : tensor<?x2xf32>
}

// -----

// matmul: the contraction is a_1 == b_0 == 16 for %x, then 8 for %y.
func.func @never_matmul(%a: tensor<?x?xf32>, %b: tensor<?x4xf32>, %c: tensor<16x?xf32>, %d: tensor<8x?xf32>) -> tensor<?x?xf32> {
  %x = tensor.matmul %a, %c : (tensor<?x?xf32>, tensor<16x?xf32>) -> tensor<?x?xf32>
  // CHECK: symbolic-shapes.mlir:[[# @LINE + 1]]:3: %y = tensor.matmul: dims 16 and 8 can never be equal (equal rule){{$}}
  %y = tensor.matmul %a, %d : (tensor<?x?xf32>, tensor<8x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// A guard broken by a later unification: expanding x_0 into (x_0, 2) needs
// x_0 == 2*x_0, and the broadcast with %b then makes x_0 3 (3 == 6). Only
// a broken broadcast guard has a unit alternative.
func.func @never_after_unification(%x: tensor<?xf32>, %b: tensor<3x2xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  // CHECK: symbolic-shapes.mlir:[[# @LINE + 1]]:3: %e = tensor.expand_shape: dims 3 and 6 can never be equal (equal rule){{$}}
  %e = tensor.expand_shape %x [[0, 1]] output_shape [%n, 2] : tensor<?xf32> into tensor<?x2xf32>
  %s = tensor.add %e, %b : (tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  func.return %s : tensor<?x2xf32>
}

// -----

// Loops: a carried dim the body may change (a transpose of an (x_0, x_1)
// value) is a late symbol of the block, bound as each iteration starts, and
// another of the results; no guard ties it to the dim it entered with.
// CHECK-LABEL: func.func @loop_changes_shape(
// CHECK-SAME:    attributes {dvm.guards = [], dvm.unified = {}} {
// CHECK:         %t = tensor.transpose %acc {dvm.shape = #dvm.shape<c0_2, c0_1>
// CHECK:         } {dvm.shape = #dvm.shape<r0_3, r0_4>, dvm.arg_shapes = {{\[}}[unit, #dvm.shape<c0_1, c0_2>]]}
func.func @loop_changes_shape(%x: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x?xf32>) {
    %t = tensor.transpose %acc {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}

// -----

// A static dim of 0 is the number 0, like any other static dim: no symbol, no
// guard.
// CHECK-LABEL: func.func @static_zero(
// CHECK-SAME:    %w: tensor<5x0xf32> {dvm.shape = #dvm.shape<5, 0>}) -> tensor<?x0xf32> attributes {dvm.guards = [], dvm.unified = {}} {
// CHECK-NEXT:    %y = tensor.matmul %x, %w {dvm.shape = #dvm.shape<x_0, 0>}
func.func @static_zero(%x: tensor<?x5xf32>, %w: tensor<5x0xf32>) -> tensor<?x0xf32> {
  %y = tensor.matmul %x, %w : (tensor<?x5xf32>, tensor<5x0xf32>) -> tensor<?x0xf32>
  func.return %y : tensor<?x0xf32>
}
