// A reduction kernel whose tiles have different element types: i32 values, an
// i1 compare, an i64 iota row and an i64 select (a first-index-of-the-max written
// out). Its tiles were sized for 17 bytes per element, counting bytes alive as
// if a dead i32 tile's register could hold an i64 one; the bytecode reuses a
// register only for a tile of its kind (and an iota's row is a kind of its own),
// so the chunked variant's registers needed 21 and the VM refused them
// ("register exceeds local memory") on rows of 40009. Fixed in
// lowering/tensor_to_tile.py: live_bytes also sums each kind's peak.
// shapes: 2x40009
// shapes: 3x7
// seed: 1
// device: ascend910b
func.func @main(%x: tensor<?x?xi32>) -> tensor<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xi32>
  %m = tensor.dim %x, %c1 : tensor<?x?xi32>
  %max = tensor.reduce_max %x {axes = [1], keepdims = true} : tensor<?x?xi32> -> tensor<?x1xi32>
  %top = tensor.eq %x, %max : (tensor<?x?xi32>, tensor<?x1xi32>) -> tensor<?x?xi1>
  %i = tensor.iota dim(1) %n, %m : tensor<?x?xi64>
  %big = arith.constant dense<9223372036854775807> : tensor<i64>
  %at = tensor.select %top, %i, %big : (tensor<?x?xi1>, tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  %first = tensor.reduce_min %at {axes = [1]} : tensor<?x?xi64> -> tensor<?xi64>
  func.return %first : tensor<?xi64>
}
