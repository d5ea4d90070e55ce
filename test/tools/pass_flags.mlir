// Pass flags run in command-line order, after the -p passes; an input file after a flag is not
// taken as its options. cascade-plan, rolling-buffer and allocate-memory leave a function without
// nn operators unchanged, and so do lower-to-ethosu and ethosu-pipeline (the whole pipeline).
// RUN: cascade-opt --cascade-plan --rolling-buffer %s 2>&1 | filecheck %s --check-prefix=PLAN-OK
// RUN: cascade-opt %s -p 'allocate-memory,cascade-plan{sram-budget=1000}' --rolling-buffer 2>&1 \
// RUN:   | filecheck %s --check-prefix=PLAN-OK
// RUN: cascade-opt %s --lower-to-ethosu --ethosu-pipeline --cascade-plan 2>&1 | filecheck %s --check-prefix=PLAN-OK
// RUN: cascade-opt %s --cascade-plan --rolling-buffer -p ethosu-pipeline 2>&1 \
// RUN:   | filecheck %s --check-prefix=PLAN-OK
// RUN: cascade-opt %s -p 'ethosu-pipeline,cascade-plan{sram-budget=1000}' --rolling-buffer 2>&1 \
// RUN:   | filecheck %s --check-prefix=PLAN-OK

// Options: quoted, unquoted, and with the input file after the flag.
// RUN: cascade-opt %s --cascade-plan='sram-budget=1000 accelerator=ethos-u55-128' 2>&1 \
// RUN:   | filecheck %s --check-prefix=PLAN-OK
// RUN: cascade-opt --cascade-plan=sram-budget=1000 %s 2>&1 | filecheck %s --check-prefix=PLAN-OK
// RUN: cascade-opt --ethosu-pipeline='accelerator=ethos-u65-256 system-config=Ethos_U65_High_End memory-mode=Dedicated_Sram sram-budget=4096' %s 2>&1 \
// RUN:   | filecheck %s --check-prefix=PLAN-OK

// An xDSL pass given with -p runs (and its IR is printed) before the first flag pass.
// RUN: cascade-opt %s -p canonicalize --cascade-plan --rolling-buffer --lower-to-ethosu --ethosu-pipeline --print-between-passes 2>&1 \
// RUN:   | filecheck %s --check-prefix=BETWEEN

// PLAN-OK:         func.func @f(%a: i32) -> i32 {
// PLAN-OK-NEXT:      func.return %a : i32
// PLAN-OK-NOT:     error
// BETWEEN:         IR after canonicalize:
// BETWEEN-NEXT:    builtin.module {
// BETWEEN:         func.func @f
// BETWEEN:         IR after cascade-plan:
// BETWEEN:         func.func @f
// BETWEEN:         IR after rolling-buffer:
// BETWEEN:         func.func @f
// BETWEEN:         IR after lower-to-ethosu:
// BETWEEN:         func.func @f
// BETWEEN-NOT:     error

func.func @f(%a: i32) -> i32 {
  func.return %a : i32
}
