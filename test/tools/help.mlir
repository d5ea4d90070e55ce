// The help lists every cascade pass flag with its one-line description; --version names us.
// RUN: cascade-opt --help | filecheck %s
// RUN: cascade-opt --version | filecheck %s --check-prefix=VERSION

// CHECK:      cascade passes:
// CHECK:      --legalize-tosa {{ +}}convert TOSA operations to nn
// CHECK-NEXT: --cascade-plan {{ +}}group nn operations into cascades
// CHECK:      --rolling-buffer {{ +}}turn intermediates inside cascades into rolling
// CHECK:      --allocate-memory {{ +}}place every buffer at an SRAM offset
// CHECK-NEXT: --lower-to-ethosu {{ +}}lower scheduled IR to ethosu NPU commands
// CHECK-NEXT: --ethosu-pipeline {{ +}}run the whole nn-to-ethosu pipeline

// VERSION: cascade-opt {{[0-9.]+}} (xDSL 0.75.0)
