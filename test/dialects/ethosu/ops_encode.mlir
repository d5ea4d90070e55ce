// Every command stream of ops.mlir is one Vela's generator encodes, as the verifiers demand
// of what they accept: so the syntax examples are also valid NPU programs. (Its last chunk
// holds standalone attributes and no stream, hence the final error and `not`.)
// RUN: not cascade-opt %S/ops.mlir --split-input-file -t ethosu-cs 2>&1 | filecheck %s

// CHECK:      // ethosu.command_stream 0 (ethos-u55-128): command stream, {{[0-9]+}} words
// CHECK:      // -----
// CHECK-NEXT: // ethosu.command_stream 0 (ethos-u55-32): command stream, 1 words
// CHECK:      // ethosu.command_stream 1 (ethos-u65-512): command stream, {{[0-9]+}} words
// CHECK:      // -----
// CHECK-NEXT: // ethosu.command_stream 0 (ethos-u65-512): command stream, {{[0-9]+}} words
// CHECK:      // -----
// CHECK-NEXT: // ethosu.command_stream 0 (ethos-u55-256): command stream, {{[0-9]+}} words
// CHECK:      // -----
// CHECK-NEXT: // ethosu.command_stream 0 (ethos-u55-64): command stream, {{[0-9]+}} words
// CHECK:      // -----
// CHECK-NEXT: // ethosu.command_stream 0 (ethos-u55-128): command stream, {{[0-9]+}} words
// CHECK:      // -----
// CHECK-NEXT: cascade-opt: error: ethosu-cs: the module has no ethosu.command_stream to write: run ethosu-pipeline (or lower-to-ethosu) first
// CHECK-NOT:  error
