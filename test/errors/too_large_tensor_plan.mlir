// A tensor too large for the address space reaches cascade-plan: the planner refuses it, naming
// the operator (where it is written), the tensor and its size (1x65536x65536x2 int8: 2^33 bytes),
// instead of planning an 8 GiB buffer for ethos-u55-256.
// RUN: cd %S && %exit1 cascade-opt too_large_tensor_plan.mlir --cascade-plan 2>&1 | filecheck %s --check-prefix=PLAN
// RUN: cd %S && %exit1 cascade-opt too_large_tensor_plan.mlir --allocate-memory 2>&1 | filecheck %s --check-prefix=ALLOC

func.func @main(%x: tensor<1x65536x65536x2xi8>) -> tensor<1x32768x32768x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x65536x65536x2xi8>) -> tensor<1x32768x32768x2xi8>
  func.return %0 : tensor<1x32768x32768x2xi8>
}

// PLAN-NOT:  Traceback
// PLAN:      {{^}}cascade-opt: error: cascade-plan: @main: nn.pool2d at too_large_tensor_plan.mlir:8:3: tensor 'x' has 8589934592 bytes, more than the 4294967296 (2^32) a 32-bit address space can hold{{$}}
// PLAN-NOT:  {{.}}

// ALLOC-NOT:  Traceback
// ALLOC:      {{^}}cascade-opt: error: allocate-memory: @main: nn.pool2d at too_large_tensor_plan.mlir:8:3: tensor 'x' has 8589934592 bytes, more than the 4294967296 (2^32) a 32-bit address space can hold{{$}}
// ALLOC-NOT:  {{.}}
