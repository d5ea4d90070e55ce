// A dilation the NPU cannot encode (NPU_SET_KERNEL_STRIDE has one dilation bit per axis: 1 or 2)
// on valid nn. Planned alone, the operator runs on the CPU between NPU commands (it stays nn, the
// other is lowered, and it says why); in a cascade it cannot, and lower-to-ethosu refuses it, naming the
// operator where it is written and its dilation, instead of emitting a command that does not verify.
// RUN: cd %S && %exit1 cascade-opt lowering_dilation_out_of_range.mlir -p 'cascade-plan{objective=min-sram},rolling-buffer,allocate-memory,lower-to-ethosu' 2>&1 | filecheck %s --check-prefix=CASCADE
// RUN: cd %S && cascade-opt lowering_dilation_out_of_range.mlir -p 'cascade-plan{objective=min-cycles},rolling-buffer,allocate-memory,lower-to-ethosu' 2>&1 | filecheck %s --check-prefix=DEFAULT

func.func @main(%x: tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> {
  %w = arith.constant dense<1> : tensor<1x3x3x8xi8>
  %b = arith.constant dense<0> : tensor<8xi32>
  %0 = nn.depthwise_conv2d %x, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 3, 3>, padding = array<i64: 3, 3, 3, 3>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<1.0:0>} : (tensor<1x16x16x8xi8>, tensor<1x3x3x8xi8>, tensor<8xi32>) -> tensor<1x16x16x8xi8>
  %1 = nn.depthwise_conv2d %0, %w, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<1.0:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<1.0:0>} : (tensor<1x16x16x8xi8>, tensor<1x3x3x8xi8>, tensor<8xi32>) -> tensor<1x16x16x8xi8>
  func.return %1 : tensor<1x16x16x8xi8>
}

// CASCADE-NOT:  Traceback
// CASCADE:      {{^}}cascade-opt: error: lower-to-ethosu: @main: nn.depthwise_conv2d at lowering_dilation_out_of_range.mlir:11:3: dilation [3, 3] is outside the NPU's range [1, 2]{{$}}
// CASCADE-NOT:  {{.}}

// DEFAULT-NOT:  Traceback
// DEFAULT:      nn.depthwise_conv2d {{.*}}cascade.on_cpu = "dilation [3, 3] is outside the NPU's range [1, 2]"{{.*}}dilation = array<i64: 3, 3>
// DEFAULT:      ethosu.command_stream
// DEFAULT-NOT:  nn.depthwise_conv2d
