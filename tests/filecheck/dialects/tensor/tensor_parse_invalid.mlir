// Text that does not parse: each case must fail with exactly the message in
// its CHECK line, at the `file:line:col` of the offending token.
//
// RUN: dvm-opt %s --parsing-diagnostics --split-input-file | filecheck %s

func.func @unknown_op(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:21: error: Operation tensor.bogus is not registered{{$}}
  %r = tensor.bogus %a : tensor<4xf32>
  func.return
}

// -----

func.func @missing_operand_type(%a: tensor<4xi32>, %b: tensor<4xi32>) {
  // CHECK: :[[# @LINE + 1]]:29: error: Expected 2 operand types, but got 1: the syntax is `tensor.add %a, %b : (tensor<...>, tensor<...>) -> tensor<...>`{{$}}
  %r = tensor.add %a, %b : (tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @broadcast_to_without_to(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:31: error: Expected 'to'{{$}}
  %r = tensor.broadcast_to %a [3, 4] : tensor<4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @operand_type_mismatch(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:19: error: operand is used with type tensor<5xf32>, but has been previously used or defined with type tensor<4xf32>{{$}}
  %r = tensor.exp %a : tensor<5xf32>
  func.return
}

// -----

func.func @dim_index_type(%a: tensor<4xf32>, %i: i32) {
  // CHECK: :[[# @LINE + 1]]:23: error: operand is used with type index, but has been previously used or defined with type i32{{$}}
  %d = tensor.dim %a, %i : tensor<4xf32>
  func.return
}

// -----

func.func @expand_without_output_shape(%a: tensor<12xf32>) {
  // CHECK: :[[# @LINE + 1]]:40: error: Expected 'output_shape'{{$}}
  %r = tensor.expand_shape %a [[0, 1]] : tensor<12xf32> into tensor<3x4xf32>
  func.return
}

// -----

// A value never defined is reported at its first use, not at the end of the input.
func.func @undefined_value(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: :[[# @LINE + 1]]:23: error: use of undefined value %q (also undefined: %r){{$}}
  %s = tensor.add %a, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = tensor.add %s, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %t : tensor<4xf32>
}

// -----

func.func @dense_of_dynamic_shape() {
  // CHECK: :[[# @LINE + 1]]:36: error: Dense literal attribute should have a static shape.{{$}}
  %c = arith.constant dense<1.0> : tensor<?xf32>
  func.return
}

// -----

func.func @dense_of_no_shaped_type() {
  // CHECK: :[[# @LINE + 1]]:36: error: Expected memref, vector or tensor type of integer, index, float, or complex type{{$}}
  %c = arith.constant dense<1.0> : index
  func.return
}

// -----

// A string not closed on its line is an error at its quote, found before xDSL's
// lexer, whose regular expression backtracks exponentially in the rest of the line.
// CHECK: :[[# @LINE + 1]]:51: error: string literal not closed before the end of its line{{$}}
func.func @unclosed_string(%a: tensor<?xf32>, %b: "tensor<?xf32>) -> (tensor<?x?x?xf32>, tensor<?xf32>) {
  func.return %a, %a : tensor<?xf32>, tensor<?xf32>
}

// -----

// CHECK: :[[# @LINE + 1]]:55: error: unknown escape `\q` in a string literal{{$}}
func.func @unknown_escape() attributes {dvm.note = "ab\qcdefghijklmnopqrstuvwxyz0123456789012345678901234567890"} {
  func.return
}

// -----

func.func @string_at_the_end() {
  func.return
}
// CHECK: :[[# @LINE + 1]]:1: error: string literal not closed before the end of its line{{$}}
"
// -----

func.func @real_number_for_a_complex_element() {
  // CHECK: :[[# @LINE + 1]]:29: error: an element of type complex<f32> is a pair (re, im){{$}}
  %c = arith.constant dense<0.0> : tensor<complex<f32>>
  func.return
}

// -----

func.func @pad_width_beyond_i64(%a: tensor<?xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: Integer value 18446744073709551616 is out of range for type i64
  %r = tensor.pad %a low[18446744073709551616] high[0] {
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    tensor.yield %z : f32
  } : tensor<?xf32> to tensor<?xf32>
  func.return
}
