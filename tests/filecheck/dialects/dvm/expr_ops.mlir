// The `dvm` attributes: symbolic integer expressions (`#dvm.expr`), lists of
// them (`#dvm.shape`) and conditions (`#dvm.cond`), written as sympy prints
// them. Every form sympy writes parses back to the same expression, so
// the printed text is stable: printed again, or printed generic, re-parsed
// and printed again, it is the same.
//
// RUN: dvm-opt %s -o %t.custom && filecheck %s < %t.custom
// RUN: dvm-opt %t.custom | diff %t.custom -
// RUN: dvm-opt %t.custom --print-op-generic | dvm-opt | diff %t.custom -

// Min and Max keep their arguments unevaluated, in sympy's order; numbers fold.
// CHECK:      dvm.a = #dvm.expr<Max(1, Min(8, x_0))>
// CHECK-SAME: dvm.b = #dvm.expr<Max(4, x_0)>
// Sums, products, quotients and powers as sympy writes them.
// CHECK-SAME: dvm.c = #dvm.expr<64*ceiling(s0/16) + 64*ceiling(s0*s1/16)>
// CHECK-SAME: dvm.d = #dvm.expr<-x**2 - 1 + y/x**2>
// CHECK-SAME: dvm.e = #dvm.expr<(x + 1)**2>
// CHECK-SAME: dvm.f = #dvm.expr<7*x/2 + Mod(x, 3)>
// CHECK-SAME: dvm.g = #dvm.expr<floor(x_0/cores)>
// CHECK-SAME: dvm.h = #dvm.expr<-5>
// Lists, and conditions.
// CHECK-SAME: dvm.shape = #dvm.shape<x_0, 64, x_0*x_1>
// CHECK-SAME: dvm.empty = #dvm.shape<>
// CHECK-SAME: dvm.fits = #dvm.cond<x_1 <= 13926>
// CHECK-SAME: dvm.same = #dvm.cond<x_0 == 2*y_0>
func.func @f() attributes {
    dvm.a = #dvm.expr<Max(1, Min(x_0, 8))>,
    dvm.b = #dvm.expr<Max(x_0, 2, 4)>,
    dvm.c = #dvm.expr<64*ceiling(s0/16) + 64*ceiling(s0*s1/16)>,
    dvm.d = #dvm.expr<y/x**2 - x**2 - 1>,
    dvm.e = #dvm.expr<(x + 1)**2>,
    dvm.f = #dvm.expr<Mod(x, 3) + 7*x/2>,
    dvm.g = #dvm.expr<floor(x_0/cores)>,
    dvm.h = #dvm.expr<-(2 + 3)>,
    dvm.shape = #dvm.shape<x_0, 64, x_1*x_0>,
    dvm.empty = #dvm.shape<>,
    dvm.fits = #dvm.cond<x_1 <= 13926>,
    dvm.same = #dvm.cond<x_0 == 2*y_0>} {
  func.return
}
