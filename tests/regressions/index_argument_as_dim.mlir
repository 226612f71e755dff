// An index argument used as a dim (as in tests/filecheck/dialects/tensor/
// layout.mlir): KeyError: 'n'. Kernel output dims named the index argument's
// symbol, which the runtime never bound (only argument dims), and a guard over
// it would have been checked once per shape signature although n changes per
// call. Fixed in dvm/variant.py: index arguments are bound per call and the
// guards over them checked per call. (Found while fixing the NameError of
// join_symbol_in_guard.mlir.)
// shapes: scalar 5 index=4 index=5
// shapes: scalar 5 index=0 index=5
// shapes: scalar 0 index=7 index=0
// shapes: scalar 2 index=1 index=2
// seed: 8
// device: host
func.func @main(%x: tensor<f32>, %y: tensor<?xf32>, %n: index, %k: index) -> (tensor<?x3xf32>, tensor<?x?xf32>) {
  %two = arith.constant 2 : index
  %m = arith.muli %n, %two : index
  %b = tensor.broadcast_to %x to [%m, 3] : tensor<f32> -> tensor<?x3xf32>
  %c = tensor.broadcast_to %y to [%n, %k] : tensor<?xf32> -> tensor<?x?xf32>
  func.return %b, %c : tensor<?x3xf32>, tensor<?x?xf32>
}
