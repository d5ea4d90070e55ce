// A bad pipeline is reported in one line naming the pass and the option, with exit status 1.
// RUN: not cascade-opt %s -p 'cascade-plan{nonsense=1}' 2>&1 | filecheck %s --check-prefix=UNKNOWN-OPTION
// RUN: not cascade-opt %s --cascade-plan='sram-budget=abc' 2>&1 | filecheck %s --check-prefix=BAD-VALUE
// RUN: not cascade-opt %s -p 'no-such-pass' 2>&1 | filecheck %s --check-prefix=UNKNOWN-PASS
// RUN: not cascade-opt %s -p 'cascade-plan{' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not cascade-opt %s --rolling-buffer=depth=3 2>&1 | filecheck %s --check-prefix=NO-OPTIONS

// UNKNOWN-OPTION:     cascade-opt: error: pass 'cascade-plan' has no option 'nonsense'; its options are sram-budget: int|None, accelerator: str
// UNKNOWN-OPTION-NOT: Traceback
// BAD-VALUE:          cascade-opt: error: invalid options for pass 'cascade-plan': option 'sram-budget' expects int, got 'abc'
// BAD-VALUE-NOT:      Traceback
// UNKNOWN-PASS:       cascade-opt: error: unknown pass 'no-such-pass'
// UNKNOWN-PASS-NOT:   Traceback
// SYNTAX:             cascade-opt: error: invalid pass pipeline at column 14: Expected argument name here
// SYNTAX-NEXT:        cascade-plan{
// SYNTAX-NEXT:        {{^ +\^$}}
// SYNTAX-NOT:         Traceback
// NO-OPTIONS:         cascade-opt: error: pass 'rolling-buffer' has no option 'depth'; it takes no options

func.func @f() {
  func.return
}
