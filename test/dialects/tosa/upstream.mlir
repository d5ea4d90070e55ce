// cascade-opt's TOSA, custom and generic, is read by upstream tosa-opt and read back unchanged.
// REQUIRES: tosa-tools
// RUN: cascade-opt %S/ops.mlir --split-input-file | tosa-opt --split-input-file | cascade-opt --split-input-file | filecheck %S/ops.mlir
// RUN: cascade-opt %S/ops.mlir --split-input-file --print-op-generic | tosa-opt --split-input-file --mlir-print-op-generic | cascade-opt --split-input-file | filecheck %S/ops.mlir
