// A cascade.group of other operators than nn ones is valid IR (the dialect is target
// independent: test/dialects/cascade/ops.mlir, test/interop/upstream_mlir.mlir), but no plan
// of cascade-plan: rolling-buffer and allocate-memory read a cascade through the planner's
// view of its nn operators, so they refuse one without any, naming it.
// RUN: not cascade-opt %s --rolling-buffer 2>&1 | filecheck %s -DPASS=rolling-buffer
// RUN: not cascade-opt %s --allocate-memory 2>&1 | filecheck %s -DPASS=allocate-memory
// The unstriped group of ops.mlir (its first case) too:
// RUN: not cascade-opt %S/../../dialects/cascade/ops.mlir --split-input-file --rolling-buffer 2>&1 \
// RUN:   | filecheck %s --check-prefix=UNSTRIPED

// CHECK-NOT:  internal error
// CHECK:      {{^}}cascade-opt: error: [[PASS]]: @cascade_group: cascade.group at {{.*}}not_planned.mlir:19:3 has no nn operator: [[PASS]] works on cascades of nn operators, as cascade-plan plans them{{$}}
// CHECK-NOT:  {{.}}

// UNSTRIPED-NOT: internal error
// UNSTRIPED:     {{^}}cascade-opt: error: rolling-buffer: @single_stripe: cascade.group at {{.*}}ops.mlir:{{[0-9]+}}:{{[0-9]+}} has no nn operator

func.func @cascade_group(%x: tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8> {
  %r = cascade.group ins(%a = %x : tensor<1x16x16x8xi8>) -> tensor<1x16x16x8xi8>
         stripe_shape [1, 4, 16, 8] stripe_order [1] num_stripes [4] {
    %s = arith.addi %a, %a {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 8], offset = affine_map<(d0) -> (0, (d0 * 4), 0, 0)>>} : tensor<1x16x16x8xi8>
    cascade.yield %s : tensor<1x16x16x8xi8>
  }
  func.return %r : tensor<1x16x16x8xi8>
}
