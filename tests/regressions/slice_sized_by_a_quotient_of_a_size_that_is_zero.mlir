// Slices sized by a quotient, a ceiling quotient and a remainder of one input's
// length by another's: called with the divisor's input empty, the host code's
// Python `//` and `%` raised ZeroDivisionError, where the VM and the reference
// interpreter define a quotient and a remainder by 0 as 0. Fixed in
// dvm/codegen.py (quotient_text): a division by anything but a nonzero literal
// is guarded.
// shapes: 7 3
// shapes: 7 0
// shapes: 0 0
// seed: 3
func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %m = tensor.dim %y, %c0 : tensor<?xf32>
  %q = arith.floordivsi %n, %m : index
  %c = arith.ceildivsi %n, %m : index
  %r = arith.remsi %n, %m : index
  %a = tensor.extract_slice %x[0] [%q] [1] : tensor<?xf32> to tensor<?xf32>
  %b = tensor.extract_slice %x[0] [%c] [1] : tensor<?xf32> to tensor<?xf32>
  %d = tensor.extract_slice %x[0] [%r] [1] : tensor<?xf32> to tensor<?xf32>
  return %a, %b, %d : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
