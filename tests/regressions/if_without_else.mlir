// Found by checking scf.if's verification: an scf.if without results and
// without an else branch (valid upstream) crashed dvm.compile with "'block'
// property of Region class is only available for single-block regions": the
// count of BLAS launches walked the empty else region (dvm/variant.py,
// blas_launches). It now skips a region without blocks.
// shapes: 2x4 scalar
// shapes: 0x4 scalar
// seed: 2
// device: host
func.func @main(%x: tensor<?x4xf32>, %p: tensor<i1>) -> tensor<?x4xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  scf.if %c {
    %e = tensor.exp %x : tensor<?x4xf32>
  }
  %y = tensor.neg %x : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
