// The help lists every cascade pass flag with its one-line description and its options;
// --version names us.
// RUN: cascade-opt --help | filecheck %s
// RUN: cascade-opt --version | filecheck %s --check-prefix=VERSION

// CHECK:      cascade passes:
// CHECK:      --legalize-tosa {{ +}}convert TOSA operations to nn (options: fully-
// CHECK:      --cascade-plan {{ +}}group nn operations into cascades
// CHECK:      objective=min-sram|min-cycles
// CHECK-NEXT:   striping=none|h|hw|c|hc|hwc rolling-axes=h|hw
// CHECK:      --rolling-buffer {{ +}}turn intermediates inside cascades into rolling
// CHECK:      --allocate-memory {{ +}}place every buffer at an SRAM offset (options:
// CHECK:      --lower-to-ethosu {{ +}}lower scheduled IR to ethosu NPU commands (options:
// CHECK:      --ethosu-pipeline {{ +}}run the whole nn-to-ethosu pipeline (options:

// VERSION: cascade-opt {{[0-9.]+}} (xDSL 0.75.0)
