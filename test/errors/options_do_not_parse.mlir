// Pass options that do not parse or do not type-check: one line naming the pass and the option.
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir -p 'cascade-plan{budget=1}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --cascade-plan='sram-budget=1e3' 2>&1 | filecheck %s --check-prefix=FLOAT
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --cascade-plan='sram-budget=true' 2>&1 | filecheck %s --check-prefix=BOOL
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --cascade-plan='reorder=maybe' 2>&1 | filecheck %s --check-prefix=NOT-BOOL
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --cascade-plan='sram-budget=-5' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --cascade-plan='objective=fastest' 2>&1 | filecheck %s --check-prefix=OBJECTIVE
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --cascade-plan='striping=diagonal' 2>&1 | filecheck %s --check-prefix=STRIPING
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir -p 'cascade-plan{sram-budget="64}' 2>&1 | filecheck %s --check-prefix=STRING
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --cascade-plan='report=/tmp/plan.json' 2>&1 | filecheck %s --check-prefix=PATH
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --cascade-plan='report=""' 2>&1 | filecheck %s --check-prefix=EMPTY-REPORT
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir -p 'cascade-plan,,rolling-buffer' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir -p 'cascade-plann' 2>&1 | filecheck %s --check-prefix=PASS
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --pass-options=sram-budget=1 2>&1 | filecheck %s --check-prefix=ORPHAN
// An option given twice (xDSL kept the last value); each of two passes may have its own.
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir -p 'cascade-plan{sram-budget=1000 objective=min-sram sram_budget=2000}' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir --cascade-plan='objective=min-sram objective=min-cycles' 2>&1 | filecheck %s --check-prefix=TWICE-FLAG
// RUN: cd %S && %exit1 cascade-opt options_do_not_parse.mlir -p 'cascade-plan{sram-budget=4096 report="%t,plan.json"},cascade-plan{sram-budget=4096}' -o /dev/null 2>&1 | filecheck %s --check-prefix=TWO-PASSES

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8> {
  %0 = nn.pool2d %x {kind = #nn<pool_kind max>, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x2x2x2xi8>
  func.return %0 : tensor<1x2x2x2xi8>
}

// UNKNOWN-NOT:  Traceback
// UNKNOWN:      {{^}}cascade-opt: error: pass 'cascade-plan' has no option 'budget'; its options are sram-budget: int|None, {{.*}}{{$}}
// UNKNOWN-NOT:  {{.}}

// FLOAT-NOT:  Traceback
// FLOAT:      {{^}}cascade-opt: error: invalid options for pass 'cascade-plan': option 'sram-budget' expects int, got '1e3'; its options are sram-budget: int|None, {{.*}}{{$}}
// FLOAT-NOT:  {{.}}

// BOOL-NOT:  Traceback
// BOOL:      {{^}}cascade-opt: error: invalid options for pass 'cascade-plan': option 'sram-budget' expects int, got 'true'; its options are sram-budget: int|None, {{.*}}{{$}}
// BOOL-NOT:  {{.}}

// NOT-BOOL-NOT:  Traceback
// NOT-BOOL:      {{^}}cascade-opt: error: invalid options for pass 'cascade-plan': option 'reorder' expects true|false, got 'maybe'; its options are sram-budget: int|None, {{.*}}{{$}}
// NOT-BOOL-NOT:  {{.}}

// NEGATIVE-NOT:  Traceback
// NEGATIVE:      {{^}}cascade-opt: error: cascade-plan: sram-budget must be non-negative, got -5{{$}}
// NEGATIVE-NOT:  {{.}}

// OBJECTIVE-NOT:  Traceback
// OBJECTIVE:      {{^}}cascade-opt: error: cascade-plan: objective must be one of min-sram, min-cycles, got 'fastest'{{$}}
// OBJECTIVE-NOT:  {{.}}

// STRIPING-NOT:  Traceback
// STRIPING:      {{^}}cascade-opt: error: cascade-plan: striping must be one of none, h, hw, c, hc, hwc, got 'diagonal'{{$}}
// STRIPING-NOT:  {{.}}

// STRING-NOT:  Traceback
// STRING:      {{^}}cascade-opt: error: invalid pass pipeline at column 26: Unknown token{{$}}
// STRING-NEXT: {{^}}cascade-plan{sram-budget="64}{{$}}
// STRING-NEXT: {{^}}                         ^{{$}}
// STRING-NOT:  {{.}}

// PATH-NOT:  Traceback
// PATH:      {{^}}cascade-opt: error: invalid pass pipeline at column 21: Unknown token (quote the value: report="/tmp/plan.json"){{$}}
// PATH-NEXT: {{^}}cascade-plan{report=/tmp/plan.json}{{$}}
// PATH-NEXT: {{^}}                    ^{{$}}
// PATH-NOT:  {{.}}

// EMPTY-NOT:  Traceback
// EMPTY:      {{^}}cascade-opt: error: invalid pass pipeline at column 14: Expected pass name here{{$}}
// EMPTY-NEXT: {{^}}cascade-plan,,rolling-buffer{{$}}
// EMPTY-NEXT: {{^}}             ^{{$}}
// EMPTY-NOT:  {{.}}

// PASS-NOT:  Traceback
// PASS:      {{^}}cascade-opt: error: unknown pass 'cascade-plann' (`cascade-opt --help` lists them){{$}}
// PASS-NOT:  {{.}}

// ORPHAN-NOT:  Traceback
// ORPHAN:      {{^}}cascade-opt: error: --pass-options must follow a pass flag{{$}}
// ORPHAN-NOT:  {{.}}

// TWICE:      {{^}}cascade-opt: error: pass 'cascade-plan' is given option 'sram-budget' twice{{$}}
// TWICE-NOT:  {{.}}
// TWICE-FLAG: {{^}}cascade-opt: error: pass 'cascade-plan' is given option 'objective' twice{{$}}
// TWO-PASSES: {{^}}cascade-opt: error: cascade-plan: @main is already planned

// EMPTY-REPORT:     {{^}}cascade-opt: error: cascade-plan: report: the file name is empty{{$}}
// EMPTY-REPORT-NOT: {{.}}
