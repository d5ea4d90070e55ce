// XFAIL: *
// A tensor too large for the address space reaches cascade-plan: the planner must refuse it,
// naming the operator, instead of planning an 8 GiB buffer for ethos-u55-256.
// Expected to fail until cascade-plan checks tensor sizes against nn.MAX_TENSOR_BYTES (2^32);
// then remove the XFAIL line and adjust the message below to the one it prints.
// RUN: %exit1 cascade-opt %s --cascade-plan 2>&1 | filecheck %s --check-prefix=PLAN

// PLAN-NOT:  Traceback
// PLAN:      cascade-opt: error: cascade-plan: @main: {{.*}}nn.pool2d{{.*}}8589934592 bytes{{.*}}2^32
// PLAN-NOT:  {{.}}

func.func @main(%x: tensor<1x65536x65536x2xi8>) -> tensor<1x32768x32768x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x65536x65536x2xi8>) -> tensor<1x32768x32768x2xi8>
  func.return %0 : tensor<1x32768x32768x2xi8>
}
