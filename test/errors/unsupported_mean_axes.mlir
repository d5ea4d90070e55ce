// Unsupported operator: a mean over the channels. It is valid nn (cascade-opt accepts it, and
// cascade-estimate prices it), but the interpreter only executes the mean over height and width.
// RUN: cd %S && cascade-opt unsupported_mean_axes.mlir | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run unsupported_mean_axes.mlir 2>&1 | filecheck %s --check-prefix=EXE

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x4x4x1xi8> {
  %0 = nn.mean %x {axes = array<i64: 3>, keep_dims = true, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x4x4x1xi8>
  func.return %0 : tensor<1x4x4x1xi8>
}

// OPT-NOT:  Traceback
// OPT:      nn.mean %x {axes = array<i64: 3>, keep_dims = true, {{.*}} : (tensor<1x4x4x2xi8>) -> tensor<1x4x4x1xi8>

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: nn.mean at unsupported_mean_axes.mlir:7:3: nn.mean is supported over axes [1, 2] of NHWC, got [3]{{$}}
// EXE-NOT:  {{.}}
