// Invalid IR: each case is a function whose marked op must be rejected with
// exactly the message in its CHECK line, at the op's `file:line:col`.
//
// RUN: dvm-opt %s --verify-diagnostics --split-input-file | filecheck %s
//
// Verifiers check ranks, broadcasting, element types and static dims; a `?`
// dim agrees with anything here (it becomes a run-time guard), so every case
// below is wrong on static information alone.

// Shapes: ranks, broadcasting, static dims.

// A static dim other than 1 must agree across broadcast operands.
func.func @broadcast_mismatch(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.add' operands are not broadcast-compatible: dims [4, 5] at result axis 0 (tensor<4x3xf32>, tensor<5x3xf32>){{$}}
  %r = tensor.add %a, %b : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// The result has the broadcast rank.
func.func @result_rank(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.add' result type tensor<3xf32> has rank 1, expected rank 2 (shape 4x3){{$}}
  %r = tensor.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

// A static result dim must be the broadcast dim.
func.func @result_dim(%a: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.mul' result type tensor<4x5xf32> has dim 5 at axis 1, expected 3 (shape 4x3){{$}}
  %r = tensor.mul %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x5xf32>
  func.return
}

// -----

func.func @select_broadcast(%c: tensor<3xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.select' operands are not broadcast-compatible: dims [3, 4] at result axis 0 (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>){{$}}
  %r = tensor.select %c, %a, %b : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Element types.

// Float-only ops reject integers.
func.func @sqrt_int(%a: tensor<4xi32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.sqrt' operand has element type i32, expected a float type{{$}}
  %r = tensor.sqrt %a : tensor<4xi32>
  func.return
}

// -----

func.func @pow_bool(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.pow' lhs has element type i1, expected a numeric type{{$}}
  %r = tensor.pow %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @isfinite_int(%a: tensor<4xi32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.isfinite' operand has element type i32, expected a float type{{$}}
  %r = tensor.isfinite %a : tensor<4xi32> -> tensor<4xi1>
  func.return
}

// -----

// Bool ops reject floats.
func.func @logical_not_float(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.logical_not' operand has element type f32, expected a bool type{{$}}
  %r = tensor.logical_not %a : tensor<4xf32>
  func.return
}

// -----

func.func @logical_and_float(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.logical_and' lhs has element type f32, expected a bool type{{$}}
  %r = tensor.logical_and %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// Arithmetic rejects i1.
func.func @add_bool(%a: tensor<4xi1>, %b: tensor<4xi1>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.add' lhs has element type i1, expected a numeric type{{$}}
  %r = tensor.add %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @neg_bool(%a: tensor<4xi1>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.neg' operand has element type i1, expected a numeric type{{$}}
  %r = tensor.neg %a : tensor<4xi1>
  func.return
}

// -----

// Only f16 bf16 f32 f64 i1 i8 i16 i32 i64 ui8 ui16 ui32 ui64 are element types.
func.func @abs_si16(%a: tensor<4xsi16>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.abs' operand has element type si16, expected a numeric type{{$}}
  %r = tensor.abs %a : tensor<4xsi16>
  func.return
}

// -----

func.func @exp_ui16(%a: tensor<4xui16>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.exp' operand has element type ui16, expected a float type{{$}}
  %r = tensor.exp %a : tensor<4xui16>
  func.return
}

// -----

// Operands of a binary op have one element type: no implicit promotion.
func.func @mixed_operands(%a: tensor<4x3xf32>, %b: tensor<3xf16>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.add' operands have different element types: tensor<4x3xf32> and tensor<3xf16>{{$}}
  %r = tensor.add %a, %b : (tensor<4x3xf32>, tensor<3xf16>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @compare_mixed(%a: tensor<4xi32>, %b: tensor<4xi1>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.eq' operands have different element types: tensor<4xi32> and tensor<4xi1>{{$}}
  %r = tensor.eq %a, %b : (tensor<4xi32>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @result_element(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.add' result type tensor<4xf16> must have element type f32{{$}}
  %r = tensor.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

// Comparisons return i1.
func.func @compare_result(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.lt' result type tensor<4xf32> must have element type i1{{$}}
  %r = tensor.lt %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @isfinite_result(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.isfinite' result has element type f32, expected a bool type{{$}}
  %r = tensor.isfinite %a : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// Arity and operand kinds, in the generic form.
func.func @binary_one_operand(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: Expected 2 operands, but got 1{{$}}
  %r = "tensor.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @unary_two_operands(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: Expected 1 operand, but got 2{{$}}
  %r = "tensor.exp"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @unary_two_results(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: Expected 1 result, but got 2{{$}}
  %r:2 = "tensor.exp"(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return
}

// -----

func.func @unary_result_type(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 2]]:3: error: result 'result' at position 0 does not verify:{{$}}
  // CHECK-NEXT: {{^}}attribute tensor<4xf32> expected from variable 'T', but got tensor<5xf32>{{$}}
  %r = "tensor.exp"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @not_a_tensor(%a: f32) {
  // CHECK: :[[# @LINE + 2]]:3: error: operand 'input' at position 0 does not verify:{{$}}
  // CHECK-NEXT: {{^}}f32 should be of base attribute tensor{{$}}
  %r = "tensor.exp"(%a) : (f32) -> f32
  func.return
}

// -----

// select.

func.func @select_condition(%c: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.select' condition has element type f32, expected a bool type{{$}}
  %r = tensor.select %c, %a, %b : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @select_values(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.select' values and result must have one element type, got tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>{{$}}
  %r = tensor.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

// convert keeps the shape.

func.func @convert_rank(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.convert' result type tensor<4x1xi32> has rank 2, expected rank 1 (shape 4){{$}}
  %r = tensor.convert %a : tensor<4xf32> -> tensor<4x1xi32>
  func.return
}

// -----

func.func @convert_dim(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.convert' result type tensor<5xi32> has dim 5 at axis 0, expected 4 (shape 4){{$}}
  %r = tensor.convert %a : tensor<4xf32> -> tensor<5xi32>
  func.return
}

// -----

func.func @convert_f80(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.convert' result has element type f80, expected any supported type{{$}}
  %r = tensor.convert %a : tensor<4xf32> -> tensor<4xf80>
  func.return
}

// -----

// broadcast_to.

func.func @broadcast_to_dim(%a: tensor<3x4xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.broadcast_to' cannot broadcast dim 3 of tensor<3x4xf32> to 5 at axis 1{{$}}
  %r = tensor.broadcast_to %a to [%n, 5, 4] : tensor<3x4xf32> -> tensor<?x5x4xf32>
  func.return
}

// -----

func.func @broadcast_to_lower_rank(%a: tensor<2x3x4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.broadcast_to' cannot broadcast tensor<2x3x4xf32> to lower rank 2{{$}}
  %r = tensor.broadcast_to %a to [3, 4] : tensor<2x3x4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @broadcast_to_negative(%a: tensor<?xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.broadcast_to' target shape [-3, ?] has a negative dim{{$}}
  %r = tensor.broadcast_to %a to [-3, %n] : tensor<?xf32> -> tensor<?x?xf32>
  func.return
}

// -----

func.func @expand_negative(%a: tensor<?x?xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.expand_shape' output_shape [?, -1, 4] has a negative dim{{$}}
  %r = tensor.expand_shape %a [[0], [1, 2]] output_shape [%n, -1, 4] : tensor<?x?xf32> into tensor<?x?x4xf32>
  func.return
}

// -----

func.func @broadcast_to_element(%a: tensor<4xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.broadcast_to' changes the element type: tensor<4xf32> -> tensor<?x4xf16>{{$}}
  %r = tensor.broadcast_to %a to [%n, 4] : tensor<4xf32> -> tensor<?x4xf16>
  func.return
}

// -----

func.func @broadcast_to_result_rank(%a: tensor<4xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.broadcast_to' result type tensor<2x4x1xf32> has rank 3, expected rank 2 (shape ?x4){{$}}
  %r = tensor.broadcast_to %a to [%n, 4] : tensor<4xf32> -> tensor<2x4x1xf32>
  func.return
}

// -----

func.func @broadcast_to_result_dim(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.broadcast_to' result type tensor<3x5xf32> has dim 5 at axis 1, expected 4 (shape 3x4){{$}}
  %r = tensor.broadcast_to %a to [3, 4] : tensor<4xf32> -> tensor<3x5xf32>
  func.return
}

// -----

// transpose.

func.func @perm_repeated(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.transpose' perm [0, 0] is not a permutation of 0..1{{$}}
  %r = tensor.transpose %a {perm = [0, 0]} : tensor<4x3xf32> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @perm_short(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.transpose' perm [0] is not a permutation of 0..1{{$}}
  %r = tensor.transpose %a {perm = [0]} : tensor<4x3xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @perm_not_array(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 0 : i64 should be of base attribute array{{$}}
  %r = tensor.transpose %a {perm = 0} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @transpose_result(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.transpose' result type tensor<4x3xf32> has dim 4 at axis 0, expected 3 (shape 3x4){{$}}
  %r = tensor.transpose %a {perm = [1, 0]} : tensor<4x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

func.func @transpose_element(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.transpose' changes the element type: tensor<4x3xf32> -> tensor<3x4xf16>{{$}}
  %r = tensor.transpose %a {perm = [1, 0]} : tensor<4x3xf32> -> tensor<3x4xf16>
  func.return
}

// -----

// Reductions.

func.func @axis_out_of_range(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.reduce_sum' axis 2 is out of range for tensor<4x3xf32> (rank 2){{$}}
  %r = tensor.reduce_sum %a {axes = [2]} : tensor<4x3xf32> -> tensor<4xf32>
  func.return
}

// -----

// Axes are not taken modulo the rank.
func.func @axis_negative(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.reduce_max' axis -1 is out of range for tensor<4x3xf32> (rank 2){{$}}
  %r = tensor.reduce_max %a {axes = [-1]} : tensor<4x3xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @axes_repeated(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.reduce_sum' axes [1, 1] repeat an axis{{$}}
  %r = tensor.reduce_sum %a {axes = [1, 1]} : tensor<4x3xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @axes_not_integers(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.reduce_min' axes must be a list of integers, got ["x"]{{$}}
  %r = tensor.reduce_min %a {axes = ["x"]} : tensor<4x3xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @axes_missing(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: property 'axes' expected in operation 'tensor.reduce_sum'{{$}}
  %r = "tensor.reduce_sum"(%a) : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @keepdims_not_bool(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: Expected attribute i1 but got i64{{$}}
  %r = tensor.reduce_sum %a {axes = [0], keepdims = 1} : tensor<4xf32> -> tensor<f32>
  func.return
}

// -----

func.func @reduce_result_dim(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.reduce_sum' result type tensor<3xf32> has dim 3 at axis 0, expected 4 (shape 4){{$}}
  %r = tensor.reduce_sum %a {axes = [1]} : tensor<4x3xf32> -> tensor<3xf32>
  func.return
}

// -----

func.func @keepdims_rank(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.reduce_prod' result type tensor<4xf32> has rank 1, expected rank 2 (shape 4x1){{$}}
  %r = tensor.reduce_prod %a {axes = [1], keepdims = true} : tensor<4x3xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @mean_int(%a: tensor<4x3xi32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.reduce_mean' operand has element type i32, expected a float type{{$}}
  %r = tensor.reduce_mean %a {axes = [1]} : tensor<4x3xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @reduce_bool(%a: tensor<4x3xi1>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.reduce_max' operand has element type i1, expected a numeric type{{$}}
  %r = tensor.reduce_max %a {axes = [1]} : tensor<4x3xi1> -> tensor<4xi1>
  func.return
}

// -----

func.func @reduce_element(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.reduce_sum' changes the element type: tensor<4x3xf32> -> tensor<4xf64>{{$}}
  %r = tensor.reduce_sum %a {axes = [1]} : tensor<4x3xf32> -> tensor<4xf64>
  func.return
}

// -----

// matmul.

func.func @contraction(%a: tensor<4x5xf32>, %b: tensor<6x7xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.matmul' contraction dims differ: lhs tensor<4x5xf32> has 5, rhs tensor<6x7xf32> has 6{{$}}
  %r = tensor.matmul %a, %b : (tensor<4x5xf32>, tensor<6x7xf32>) -> tensor<4x7xf32>
  func.return
}

// -----

// With transpose_a the contraction dim of the lhs is its first.
func.func @contraction_transposed(%a: tensor<4x5xf32>, %b: tensor<5x7xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.matmul' contraction dims differ: lhs tensor<4x5xf32> has 4, rhs tensor<5x7xf32> has 5{{$}}
  %r = tensor.matmul %a, %b {transpose_a = true} : (tensor<4x5xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  func.return
}

// -----

func.func @matmul_rank(%a: tensor<5xf32>, %b: tensor<5x7xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.matmul' lhs must have rank >= 2, got rank 1{{$}}
  %r = tensor.matmul %a, %b : (tensor<5xf32>, tensor<5x7xf32>) -> tensor<7xf32>
  func.return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x5xf32>, %b: tensor<3x5x6xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.matmul' operands are not broadcast-compatible: dims [2, 3] at result axis 0 (tensor<2x4x5xf32>, tensor<3x5x6xf32>){{$}}
  %r = tensor.matmul %a, %b : (tensor<2x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x4x6xf32>
  func.return
}

// -----

func.func @matmul_result(%a: tensor<4x5xf32>, %b: tensor<5x7xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.matmul' result type tensor<4x8xf32> has dim 8 at axis 1, expected 7 (shape 4x7){{$}}
  %r = tensor.matmul %a, %b : (tensor<4x5xf32>, tensor<5x7xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

func.func @matmul_element(%a: tensor<4x5xf32>, %b: tensor<5x7xf16>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.matmul' operands and result must have one element type, got tensor<4x5xf32>, tensor<5x7xf16> -> tensor<4x7xf32>{{$}}
  %r = tensor.matmul %a, %b : (tensor<4x5xf32>, tensor<5x7xf16>) -> tensor<4x7xf32>
  func.return
}

// -----

func.func @matmul_bool(%a: tensor<4x5xi1>, %b: tensor<5x7xi1>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.matmul' lhs has element type i1, expected a numeric type{{$}}
  %r = tensor.matmul %a, %b : (tensor<4x5xi1>, tensor<5x7xi1>) -> tensor<4x7xi1>
  func.return
}

// -----

// expand_shape and collapse_shape (upstream rules).

func.func @expand_product(%a: tensor<?x12xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.expand_shape' expected dimension 1 of collapsed type to be static value of 15{{$}}
  %r = tensor.expand_shape %a [[0], [1, 2]] output_shape [%n, 3, 5] : tensor<?x12xf32> into tensor<?x3x5xf32>
  func.return
}

// -----

func.func @expand_groups(%a: tensor<?x12xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.expand_shape' expected collapsed rank (2) to equal the number of reassociation maps (1).{{$}}
  %r = tensor.expand_shape %a [[0, 1, 2]] output_shape [%n, 3, 4] : tensor<?x12xf32> into tensor<?x3x4xf32>
  func.return
}

// -----

func.func @expand_not_contiguous(%a: tensor<?x12xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: All inner arrays must be contiguous: {{\[\[}}0 : i64], [2 : i64, 1 : i64]]{{$}}
  %r = tensor.expand_shape %a [[0], [2, 1]] output_shape [%n, 3, 4] : tensor<?x12xf32> into tensor<?x3x4xf32>
  func.return
}

// -----

func.func @expand_element(%a: tensor<?x12xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.expand_shape' changes the element type: tensor<?x3x4xf16> vs tensor<?x12xf32>{{$}}
  %r = tensor.expand_shape %a [[0], [1, 2]] output_shape [%n, 3, 4] : tensor<?x12xf32> into tensor<?x3x4xf16>
  func.return
}

// -----

func.func @expand_output_shape(%a: tensor<?x12xf32>, %n: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.expand_shape' result type tensor<?x3x4xf32> has dim 3 at axis 1, expected 4 (shape ?x4x3){{$}}
  %r = tensor.expand_shape %a [[0], [1, 2]] output_shape [%n, 4, 3] : tensor<?x12xf32> into tensor<?x3x4xf32>
  func.return
}

// -----

func.func @collapse_product(%a: tensor<?x3x4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' expected dimension 1 of collapsed type to be static value of 12{{$}}
  %r = tensor.collapse_shape %a [[0], [1, 2]] : tensor<?x3x4xf32> into tensor<?x11xf32>
  func.return
}

// -----

func.func @collapse_groups(%a: tensor<?x3x4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' expected the total number of reassociation dimensions (2) to equal the expanded type's rank (3).{{$}}
  %r = tensor.collapse_shape %a [[0], [1]] : tensor<?x3x4xf32> into tensor<?x3xf32>
  func.return
}

// -----

func.func @collapse_rank(%a: tensor<?x3x4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' expected collapsed rank (3) to equal the number of reassociation maps (2).{{$}}
  %r = tensor.collapse_shape %a [[0], [1, 2]] : tensor<?x3x4xf32> into tensor<?x?x12xf32>
  func.return
}

// -----

func.func @collapse_dynamic(%a: tensor<?x3x4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' expected dimension 0 of collapsed type to be dynamic since one or more of the corresponding dimensions in the expanded type is dynamic{{$}}
  %r = tensor.collapse_shape %a [[0], [1, 2]] : tensor<?x3x4xf32> into tensor<2x12xf32>
  func.return
}

// -----

func.func @collapse_element(%a: tensor<?x3x4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' changes the element type: tensor<?x3x4xf32> vs tensor<?x12xi32>{{$}}
  %r = tensor.collapse_shape %a [[0], [1, 2]] : tensor<?x3x4xf32> into tensor<?x12xi32>
  func.return
}

// -----

func.func @collapse_to_rank0_dynamic(%a: tensor<?x1xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.collapse_shape' with an empty reassociation needs every dim of tensor<?x1xf32> to be a static 1 (it reshapes to or from rank 0){{$}}
  %r = tensor.collapse_shape %a [] : tensor<?x1xf32> into tensor<f32>
  func.return
}

// -----

func.func @expand_from_rank0_not_unit(%a: tensor<f32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.expand_shape' with an empty reassociation needs every dim of tensor<1x2xf32> to be a static 1 (it reshapes to or from rank 0){{$}}
  %r = tensor.expand_shape %a [] output_shape [1, 2] : tensor<f32> into tensor<1x2xf32>
  func.return
}

// -----

// dim and extract.

func.func @dim_index(%a: tensor<4x3xf32>) {
  %i = arith.constant 2 : index
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.dim' index 2 is out of range for tensor<4x3xf32> (rank 2){{$}}
  %d = tensor.dim %a, %i : tensor<4x3xf32>
  func.return
}

// -----

func.func @dim_rank0(%a: tensor<f32>, %i: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.dim' cannot take a dim of rank-0 tensor<f32>{{$}}
  %d = tensor.dim %a, %i : tensor<f32>
  func.return
}

// -----

func.func @extract_too_few(%a: tensor<4x3xf32>, %i: index) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.extract' takes 2 indices for tensor<4x3xf32>, got 1{{$}}
  %d = tensor.extract %a[%i] : tensor<4x3xf32>
  func.return
}

// -----

func.func @extract_none(%a: tensor<4x3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.extract' takes 2 indices for tensor<4x3xf32>, got 0{{$}}
  %d = tensor.extract %a[] : tensor<4x3xf32>
  func.return
}

// -----

func.func @extract_past_a_static_dim(%a: tensor<4x?xf32>, %i: index) {
  %c4 = arith.constant 4 : index
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.extract' index 4 is out of range for axis 0 of tensor<4x?xf32>{{$}}
  %d = tensor.extract %a[%c4, %i] : tensor<4x?xf32>
  func.return
}

// -----

func.func @extract_negative_on_a_dynamic_dim(%a: tensor<4x?xf32>) {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.extract' index -1 is out of range for axis 1 of tensor<4x?xf32>{{$}}
  %d = tensor.extract %a[%c0, %m1] : tensor<4x?xf32>
  func.return
}

// -----

// Tensors through control flow keep their types: every region yields (or
// passes) the types its op declares, and holds one block.

func.func @loop_carried(%a: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
    %t = tensor.convert %acc : tensor<4xf32> -> tensor<4xf64>
    // CHECK: :[[# @LINE + 1]]:5: error: 'scf.for' body yields (tensor<4xf64>), but its iter_args are (tensor<4xf32>){{$}}
    scf.yield %t : tensor<4xf64>
  }
  func.return
}

// -----

func.func @loop_yields_nothing(%a: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: :[[# @LINE + 1]]:3: error: 'scf.for' body yields (), but its iter_args are (tensor<4xf32>){{$}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
  }
  func.return
}

// -----

func.func @if_yield_type(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %k = arith.constant dense<1> : tensor<4xi32>
  %r = scf.if %c -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  } else {
    // CHECK: :[[# @LINE + 1]]:5: error: 'scf.if' else branch yields (tensor<4xi32>), but its results are (tensor<4xf32>){{$}}
    scf.yield %k : tensor<4xi32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_yield_count(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    // CHECK: :[[# @LINE + 1]]:5: error: 'scf.if' then branch yields (tensor<4xf32>, tensor<4xf32>), but its results are (tensor<4xf32>){{$}}
    scf.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_without_yield(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  // CHECK: :[[# @LINE + 1]]:3: error: 'scf.if' then branch yields (), but its results are (tensor<4xf32>){{$}}
  %r = scf.if %c -> (tensor<4xf32>) {
    %e = tensor.exp %a : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @if_without_else(%a: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  // CHECK: :[[# @LINE + 1]]:3: error: 'scf.if' has results, so it needs an else branch{{$}}
  %r = scf.if %c -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

func.func @while_condition(%a: tensor<4xf32>, %k: tensor<4xi32>) -> tensor<4xf32> {
  %w = scf.while (%v = %a) : (tensor<4xf32>) -> tensor<4xf32> {
    %t = arith.constant true
    // CHECK: :[[# @LINE + 1]]:5: error: 'scf.while' condition passes (tensor<4xi32>), but its results are (tensor<4xf32>){{$}}
    scf.condition(%t) %k : tensor<4xi32>
  } do {
  ^bb0(%v1: tensor<4xf32>):
    scf.yield %v1 : tensor<4xf32>
  }
  func.return %w : tensor<4xf32>
}

// -----

func.func @while_do_arguments(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: :[[# @LINE + 1]]:3: error: 'scf.while' do region takes (tensor<4xi32>), but its results are (tensor<4xf32>){{$}}
  %w = scf.while (%v = %a) : (tensor<4xf32>) -> tensor<4xf32> {
    %t = arith.constant true
    scf.condition(%t) %v : tensor<4xf32>
  } do {
  ^bb0(%v1: tensor<4xi32>):
    scf.yield %a : tensor<4xf32>
  }
  func.return %w : tensor<4xf32>
}

// -----

func.func @while_yield(%a: tensor<4xf32>, %k: tensor<4xi32>) -> tensor<4xf32> {
  %w = scf.while (%v = %a) : (tensor<4xf32>) -> tensor<4xf32> {
    %t = arith.constant true
    scf.condition(%t) %v : tensor<4xf32>
  } do {
  ^bb0(%v1: tensor<4xf32>):
    // CHECK: :[[# @LINE + 1]]:5: error: 'scf.while' do region yields (tensor<4xi32>), but its inits are (tensor<4xf32>){{$}}
    scf.yield %k : tensor<4xi32>
  }
  func.return %w : tensor<4xf32>
}

// -----

func.func @return_type(%a: tensor<4xf32>) -> tensor<4xf64> {
  // CHECK: :[[# @LINE + 1]]:3: error: Expected arguments to have the same types as the function output types: expected [tensor<4xf64>], got [tensor<4xf32>]{{$}}
  func.return %a : tensor<4xf32>
}

// -----

// CHECK: :[[# @LINE + 1]]:1: error: 'func.func' has a region of 2 blocks; dvm programs have no branches, so a region holds one block{{$}}
func.func @two_blocks(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
^bb1:
  func.return %a : tensor<4xf32>
}
