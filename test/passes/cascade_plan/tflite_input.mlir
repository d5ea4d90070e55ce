// A .tflite model is planned straight from the flatbuffer (imported as nn).
// RUN: cascade-opt %S/../../models/resnet8.tflite --cascade-plan='accelerator=ethos-u55-128' | filecheck %s

// CHECK:     func.func @main(%{{.*}}: tensor<1x32x32x3xi8>) -> tensor<1x10xi8>
// CHECK-SAME:  cascade.peak_sram_bytes = {{[0-9]+}} : i64, cascade.cycles = {{[0-9]+}} : i64, cascade.lower_bound_bytes = {{[0-9]+}} : i64
// CHECK:     cascade.group ins(
// CHECK-SAME:  stripe_order [{{[12](, [12])?}}]
// CHECK:     nn.fully_connected
// CHECK:     func.return
