// Found by tests/test_random_programs.py: NameError: name 'y_0' is not defined.
// The kernel's output has a dim (y_0) that only an argument which is no input
// of the kernel gives (a broadcast_to target read with tensor.dim); the runtime
// sized outputs from the kernel's input dims and params only. Fixed in
// dvm/launches.py: Kernel.shape_symbols, taken from the call's symbols.
// shapes: 5 4x5
// shapes: 5 0x5
// shapes: 1 7x1
// seed: 0
// device: host
func.func @main(%x: tensor<?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %y, %c0 : tensor<?x?xf32>
  %three = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %y, %c1 : tensor<?x?xf32>
  %0 = tensor.broadcast_to %x to [%three, %n, %m] : tensor<?xf32> -> tensor<?x?x?xf32>
  func.return %0 : tensor<?x?x?xf32>
}
