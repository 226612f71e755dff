// The math ops' verifiers name the op and the offending type.
//
// RUN: dvm-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Bitwise ops and shifts take integers only.
func.func @bitwise_on_floats(%a: tensor<4xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.bitwise_xor' lhs has element type f32, expected an integer type{{$}}
  %r = tensor.bitwise_xor %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @shift_of_bools(%p: tensor<4xi1>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.shr' lhs has element type i1, expected an integer type{{$}}
  %r = tensor.shr %p, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}

// -----

func.func @not_of_floats(%a: tensor<4xf16>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.bitwise_not' operand has element type f16, expected an integer type{{$}}
  %r = tensor.bitwise_not %a : tensor<4xf16>
  func.return
}

// -----

// The trigonometric functions and the float tests take floats only.
func.func @atanh_of_integers(%i: tensor<4xi32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.atanh' operand has element type i32, expected a float type{{$}}
  %r = tensor.atanh %i : tensor<4xi32>
  func.return
}

// -----

func.func @isinf_of_integers(%i: tensor<4xi8>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.isinf' operand has element type i8, expected a float type{{$}}
  %r = tensor.isinf %i : tensor<4xi8> -> tensor<4xi1>
  func.return
}

// -----

// clamp: one element type for the operand, both bounds and the result.
func.func @clamp_mixed_types(%a: tensor<4xf32>, %b: tensor<f64>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.clamp' operand, bounds and result must have one element type, got tensor<4xf32>, tensor<f64>, tensor<f64> -> tensor<4xf32>{{$}}
  %r = tensor.clamp %a, %b, %b : (tensor<4xf32>, tensor<f64>, tensor<f64>) -> tensor<4xf32>
  func.return
}

// -----

func.func @clamp_not_broadcast(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.clamp' operands are not broadcast-compatible: dims [3, 4] at result axis 0 (tensor<4xf32>, tensor<3xf32>, tensor<3xf32>){{$}}
  %r = tensor.clamp %a, %b, %b : (tensor<4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @clamp_of_bools(%p: tensor<4xi1>) {
  // CHECK: :[[# @LINE + 1]]:3: error: 'tensor.clamp' operand has element type i1, expected a numeric type{{$}}
  %r = tensor.clamp %p, %p, %p : (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return
}
