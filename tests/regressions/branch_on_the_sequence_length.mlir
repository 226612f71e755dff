// Attention that masks only when it sees more than one token, as LLaMA's
// `if seqlen > 1`: dvm.compile failed with "arith.cmpi cannot run on the host
// (it should be inside a kernel)", although dvm.interpret ran it. The host
// code ran only part of arith (no comparisons, no casts). Fixed in
// dvm/host.py: the host runs every arith op on scalars, through the
// interpreter's own definition of each (dvm.interpreter.arith_function).
// shapes: 2x4x16 2x4x16 2x4x16 4x4
// shapes: 2x1x16 2x5x16 2x5x16 1x5
// shapes: 1x7x16 1x7x16 1x7x16 7x7
// shapes: 3x1x16 3x1x16 3x1x16 1x1
// seed: 3
func.func @main(%q: tensor<?x?x16xf32>, %k: tensor<?x?x16xf32>, %v: tensor<?x?x16xf32>, %mask: tensor<?x?xf32>) -> tensor<?x?x16xf32> {
  %c1 = arith.constant 1 : index
  %seqlen = tensor.dim %q, %c1 : tensor<?x?x16xf32>
  %prefill = arith.cmpi sgt, %seqlen, %c1 : index
  %scale = arith.constant dense<0.25> : tensor<f32>
  %s = tensor.matmul %q, %k {transpose_b = true} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x?xf32>
  %scaled = tensor.mul %s, %scale : (tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %scores = scf.if %prefill -> (tensor<?x?x?xf32>) {
    %masked = tensor.add %scaled, %mask : (tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
    scf.yield %masked : tensor<?x?x?xf32>
  } else {
    scf.yield %scaled : tensor<?x?x?xf32>
  }
  %m = tensor.reduce_max %scores {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %d = tensor.sub %scores, %m : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %e = tensor.exp %d : tensor<?x?x?xf32>
  %sum = tensor.reduce_sum %e {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %p = tensor.div %e, %sum : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %o = tensor.matmul %p, %v : (tensor<?x?x?xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  func.return %o : tensor<?x?x16xf32>
}
