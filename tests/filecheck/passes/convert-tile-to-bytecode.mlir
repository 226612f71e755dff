// convert-tile-to-bytecode: registers in local memory (reused once a tile
// is dead, elementwise ops writing into an operand that dies there), slots
// for every size, constant operands as scalar operands (`.rs`), a loop's
// carried tile in one register. The binary target writes it and reads it
// back; the assembly target prints what the binary holds.
//
// RUN: dvm-opt %s -p 'dvm-pipeline{device=ascend910b}' | filecheck %s
// RUN: dvm-opt %s -p 'dvm-pipeline{device=ascend910b}' -t bytecode -o %t.dvmb
// RUN: dvm-opt %t.dvmb | filecheck %s --check-prefix=BINARY
// RUN: dvm-opt %s -p 'dvm-pipeline{device=ascend910b}' -t bytecode-asm | filecheck %s --check-prefix=ASM
// RUN: not dvm-opt %s -p dvm-pipeline -t bytecode 2>&1 | filecheck %s --check-prefix=NOFILE
// NOFILE: dvm-opt: error: -t bytecode writes binary data: give a file with -o

func.func @layernorm(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %mean = tensor.reduce_mean %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %x, %mean : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %d2 = tensor.mul %d, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %var = tensor.reduce_mean %d2 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %ve = tensor.add %var, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %r = tensor.rsqrt %ve : tensor<?x1xf32>
  %n = tensor.mul %d, %r : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %s = tensor.mul %n, %w : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %y = tensor.add %s, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// The host keeps the call; a choice picks the whole-rows kernel when a row fits.
// CHECK:      %y = tensor.choice [x_1 <= Max(1, floor(167116*Max(1, x_1)/(12*Max(1, x_1) + 4)))]
// CHECK-NEXT:   tile.launch @layernorm_k0_rows(%x, %w, %b)
// CHECK:      } else {
// CHECK-NEXT:   tile.launch @layernorm_k0(%x, %w, %b)

// Rows walked in chunks: three phases, each a loop carrying its sum in one register.
// CHECK-LABEL: bytecode.program @layernorm_k0 params [] attributes {dvm.device = "ascend910b"} {
// CHECK:      bytecode.slot s1 = Max(1, Min(x_1, Max(8, 8*floor(Max(1, floor(Max(1, floor(167116*Max(1, x_1)/(12*Max(1, x_1) + 4)))))/8))))
// CHECK:      bytecode.slot s7 = ceiling(x_1/s1)
// CHECK:      bytecode.view v0 a0 offset s5 (s2 s3 g0 s0) (s3 s4 l0 s1)
// CHECK:      bytecode.fill r0, 0.0, (v0[0], s4)
// CHECK-NEXT: bytecode.loop s7
// CHECK-NEXT: bytecode.load r1, v0
// CHECK-NEXT: bytecode.reduce r2, r1, sum, {1}, [keepdims]
// CHECK-NEXT: bytecode.add r0, r0, r2
// CHECK-NEXT: bytecode.endloop
// CHECK-NEXT: bytecode.div.rs r0, r0, s3

// Whole rows: each value computed once, registers reused in place.
// CHECK-LABEL: bytecode.program @layernorm_k0_rows params [] attributes {dvm.device = "ascend910b"} {
// CHECK:      bytecode.arg a0 f32 [x_0, x_1]
// CHECK:      bytecode.grid [s6]
// CHECK:      bytecode.reg r0 f32 (s0, s1) at s5
// CHECK:      bytecode.load r0, v0
// CHECK-NEXT: bytecode.reduce r1, r0, sum, {1}, [keepdims]
// CHECK-NEXT: bytecode.div.rs r1, r1, s3
// CHECK-NEXT: bytecode.sub r0, r0, r1
// CHECK-NEXT: bytecode.mul r2, r0, r0
// CHECK-NEXT: bytecode.reduce r1, r2, sum, {1}, [keepdims]
// CHECK-NEXT: bytecode.div.rs r1, r1, s3
// CHECK-NEXT: bytecode.add.rs r1, r1, 9.999999747378752e-06
// CHECK-NEXT: bytecode.rsqrt r1, r1
// CHECK-NEXT: bytecode.mul r0, r0, r1
// CHECK-NEXT: bytecode.load r3, v1
// CHECK-NEXT: bytecode.mul r0, r0, r3
// CHECK-NEXT: bytecode.load r3, v2
// CHECK-NEXT: bytecode.add r0, r0, r3
// CHECK-NEXT: bytecode.store v3, r0

// Read back from the binary, dims are named after the arguments (a binary names
// no device: its reader chooses one).
// BINARY:      bytecode.program @layernorm_k0 params [] {
// BINARY-NEXT:   bytecode.arg a0 f32 [a0_0, a0_1]
// BINARY:        bytecode.slot s7 = ceiling(a0_1/s1)
// BINARY:      bytecode.program @layernorm_k0_rows params [] {
// BINARY:        bytecode.reduce r1, r0, sum, {1}, [keepdims]

// ASM:      ; program @layernorm_k0
// ASM-NEXT: arg a0 f32 2
// ASM:      slot s7 = dim(a0,1) s1 ceildiv
// ASM:      ; program @layernorm_k0_rows
// ASM:      add.rs r1, r1, #9.999999747378752e-06

// A broadcast along axes a tile holds whole (the whole-rows kernel) has their
// sizes as its shape, not the tile sizes: those are at least 1, so with n = 0
// it made a row that the store, moving none, rejected.
// CHECK-LABEL: bytecode.program @broadcast_whole_k{{[0-9]+}}_rows params [] attributes {dvm.device = "ascend910b"} {
// CHECK:      bytecode.slot s[[X:[0-9]+]] = x_0{{$}}
// CHECK:      bytecode.slot s[[N:[0-9]+]] = n{{$}}
// CHECK:      bytecode.broadcast r{{[0-9]+}}, r{{[0-9]+}}, (s[[X]], s[[N]])
// CHECK-NEXT: bytecode.store
func.func @broadcast_whole(%x: tensor<?xf32>, %n: index) -> (tensor<?xf32>, tensor<?x?xf32>, tensor<f32>) {
  %y = tensor.abs %x : tensor<?xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %b = tensor.broadcast_to %x to [%n, %d] : tensor<?xf32> -> tensor<?x?xf32>
  %m = tensor.reduce_max %b {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  func.return %y, %b, %m : tensor<?xf32>, tensor<?x?xf32>, tensor<f32>
}
