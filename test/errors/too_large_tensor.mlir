// A tensor too large for the address space: 1x65536x65536x2 int8 is 8 GiB, more than the 2^32
// bytes a 32-bit address space (Ethos-U55's AXI ports) holds. Valid nn, which knows no target
// (cascade-opt prints it), but nothing may allocate or place it.
// RUN: cd %S && cascade-opt too_large_tensor.mlir | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run too_large_tensor.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate too_large_tensor.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x65536x65536x2xi8>) -> tensor<1x32768x32768x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x65536x65536x2xi8>) -> tensor<1x32768x32768x2xi8>
  func.return %0 : tensor<1x32768x32768x2xi8>
}

// OPT-NOT:  Traceback
// OPT:      nn.pool2d %x {{.*}} : (tensor<1x65536x65536x2xi8>) -> tensor<1x32768x32768x2xi8>

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: too_large_tensor.mlir: argument 0 of @main: tensor<1x65536x65536x2xi8> has 8589934592 bytes, more than the 4294967296 (2^32) a 32-bit address space can hold{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: too_large_tensor.mlir: argument 0 of @main: tensor<1x65536x65536x2xi8> has 8589934592 bytes, more than the 4294967296 (2^32) a 32-bit address space can hold{{$}}
// EST-NOT:  {{.}}
