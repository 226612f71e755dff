// Expressions that do not parse: the parser reads only what sympy prints
// (integers, names, + - * / **, parentheses and the calls Max, Min, floor,
// ceiling and Mod) and evaluates nothing else. Each case must fail with
// exactly the message in its CHECK line, at the offending token.
//
// RUN: dvm-opt %s --parsing-diagnostics --split-input-file | filecheck %s

// CHECK: :[[# @LINE + 1]]:49: error: expected an integer expression (a number, a name, a call or '('){{$}}
func.func @f() attributes {dvm.a = #dvm.expr<x +>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:46: error: unknown function '__import__'; use one of Max, Min, floor, ceiling, Mod{{$}}
func.func @f() attributes {dvm.a = #dvm.expr<__import__(os)>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:46: error: floor takes 1 argument, not 2{{$}}
func.func @f() attributes {dvm.a = #dvm.expr<floor(x, y)>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:46: error: Max takes at least 1 argument, not 0{{$}}
func.func @f() attributes {dvm.a = #dvm.expr<Max()>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:48: error: division by zero{{$}}
func.func @f() attributes {dvm.a = #dvm.expr<x/0>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:49: error: expected a non-zero base and an integer exponent{{$}}
func.func @f() attributes {dvm.a = #dvm.expr<x**y>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:46: error: expected an integer expression (a number, a name, a call or '('){{$}}
func.func @f() attributes {dvm.a = #dvm.expr<1.5>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:46: error: 'x.y' is not a symbol name (letters, digits and _){{$}}
func.func @f() attributes {dvm.a = #dvm.expr<x.y>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:48: error: '>' expected{{$}}
func.func @f() attributes {dvm.a = #dvm.expr<x y>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:48: error: expected a relation (== or <=){{$}}
func.func @f() attributes {dvm.a = #dvm.cond<x < 4>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:46: error: expected an integer expression (a number, a name, a call or '('){{$}}
func.func @f() attributes {dvm.a = #dvm.expr<"x_0">} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:46: error: Mod by zero{{$}}
func.func @f() attributes {dvm.a = #dvm.expr<Mod(x, 3 - 3)>} {
  func.return
}

// -----

// CHECK: :[[# @LINE + 1]]:49: error: an exponent beyond 64 overflows 64 bits{{$}}
func.func @f() attributes {dvm.a = #dvm.expr<2**10**10>} {
  func.return
}
