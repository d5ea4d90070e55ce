// The smallest plan of a residual block keeps the residual add inside the cascade.
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128' | filecheck %s
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128' --print-op-generic \
// RUN:   | cascade-opt | filecheck %s
// RUN: cascade-opt %s --cascade-plan='sram-budget=6400 accelerator=ethos-u55-128' | filecheck %s --check-prefix=BUDGET
// RUN: not cascade-opt %s --cascade-plan='sram-budget=5887 accelerator=ethos-u55-128' 2>&1 | filecheck %s --check-prefix=TOO-SMALL
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128 report="%t.json"' > /dev/null
// RUN: filecheck %s --check-prefix=REPORT < %t.json
// RUN: cascade-opt %s --cascade-plan='objective=min-sram striping=none accelerator=ethos-u55-128' | filecheck %s --check-prefix=NONE
//
// x: 1x16x8x4 -> %y = conv 1x1 (32 ch) -> %t1 = conv 1x1 -> %t2 = depthwise 3x3 pad 1 ->
// %t3 = conv 1x1 -> %out = add(%y, %t3), returned. Bytes (Ethos-U: feature maps in NHCWB16,
// depth rounded up to 16; graph input and output in NHWC): x = 16*8*4 = 512, every 32-channel
// tensor 16*8*32 = 4096, one row of it 8*32 = 256. Streamed weights take no SRAM.
//
// One cascade [y .. out] in 1-row stripes: x (512) + out (4096) + rolling buffers:
//   %t3 feeds the add, %t2 feeds a 1x1 conv: 1 row each              =  256 + 256
//   %t1 feeds the 3x3 depthwise: rows i-1..i+1                      =  3 * 256 = 768
//   %y feeds the add (row i) and %t1's new row (i+1): rows i..i+1   =  2 * 256 = 512
//   total 512 + 4096 + 256 + 256 + 768 + 512                        =  6400
// Smaller: %y alone (x + y = 4608), then the cascade [t1 .. out] in 1-row stripes writing %out
// over the rows of %y it has read. Stripe i writes %out row i; %y is read from row i on (the
// add reads row i, %t1 row i+1), and from row i-1 by the add at stripe i-1, so %out starts
// i + 1 - (i - 1) = 2 rows (512 bytes) below %y: the two take 4096 + 512 = 4608, plus %t1's 3
// rows, %t2's and %t3's 1 row each: 4608 + 768 + 256 + 256 = 5888. In 2-row stripes %out
// starts 3 rows below and the rolling buffers grow too. So the smallest peak is 5888, which is
// also the row-striping lower bound.
//
// With a budget of 6400 bytes the fastest plan that fits is that same plan: any weights kept in
// SRAM would add bytes, and the one-cascade plan of 6400 bytes is slower. With 5887 bytes
// nothing fits: %t1 (and %t2, %t3, %out) only ever run in a cascade of at least 5888 bytes,
// while %y alone needs x + y = 4608.
//
// Without striping every operator runs alone; the largest step is the depthwise one (or the
// next two), with %y kept for the add: 4096 (y) + 4096 + 4096 = 12288.

// CHECK-LABEL: func.func @residual
// CHECK-SAME:    cascade.peak_sram_bytes = 5888 : i64
// CHECK-SAME:    cascade.lower_bound_bytes = 5888 : i64
// CHECK:         %[[Y:.*]] = nn.conv2d %x, {{.*}}cascade.weights = #cascade.weights<stream>
// CHECK-NEXT:    %[[OUT:.*]] = cascade.group ins(%[[YA:.*]] = %[[Y]] : tensor<1x16x8x32xi8>) -> tensor<1x16x8x32xi8>
// CHECK-SAME:      stripe_shape [1, 1, 8, 32] stripe_order [1] num_stripes [16] weights stream peak_sram_bytes 5888
// CHECK-NEXT:      %[[T1:.*]] = nn.conv2d %[[YA]], {{.*}}cascade.stripe = #cascade.stripe<shape = [1, 3, 8, 32], offset = affine_map<(d0) -> (0, (d0 + -1), 0, 0)>, mode = rolling>
// CHECK-NEXT:      %[[T2:.*]] = nn.depthwise_conv2d %[[T1]], {{.*}}cascade.stripe = #cascade.stripe<shape = [1, 1, 8, 32], offset = affine_map<(d0) -> (0, d0, 0, 0)>, mode = rolling>
// CHECK-NEXT:      %[[T3:.*]] = nn.conv2d %[[T2]], {{.*}}cascade.stripe = #cascade.stripe<shape = [1, 1, 8, 32], offset = affine_map<(d0) -> (0, d0, 0, 0)>, mode = rolling>
// CHECK-NEXT:      %[[ADD:.*]] = nn.add %[[YA]], %[[T3]] {cascade.stripe = #cascade.stripe<shape = [1, 1, 8, 32], offset = affine_map<(d0) -> (0, d0, 0, 0)>>
// CHECK-NEXT:      cascade.yield %[[ADD]] : tensor<1x16x8x32xi8>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[OUT]] : tensor<1x16x8x32xi8>

// BUDGET-LABEL: func.func @residual
// BUDGET-SAME:    cascade.peak_sram_bytes = 5888 : i64
// BUDGET:         cascade.group {{.*}} stripe_shape [1, 1, 8, 32] stripe_order [1] num_stripes [16] weights stream peak_sram_bytes 5888

// TOO-SMALL: cascade-opt: error: cascade-plan: @residual: sram-budget of 5887 bytes is too small: nn.conv2d at {{.*}}residual.mlir:{{[0-9]+}}:3 needs at least 5888 bytes (its smallest working set)
// TOO-SMALL-NOT: Traceback

// REPORT:      "chosen": {
// REPORT-NEXT:   "peak_sram_bytes": 5888,
// REPORT-NEXT:   "cycles": {{[0-9]+}},
// REPORT-NEXT:   "cascades": 1
// REPORT-NEXT: },
// REPORT-NEXT: "lower_bound_bytes": 5888,
// REPORT-NEXT: "front": [
// REPORT:        "peak_sram_bytes": 5888,
// REPORT-NEXT:   "cycles": {{[0-9]+}},
// REPORT-NEXT:   "cascades": 1
// REPORT-NEXT:  }
// REPORT-NEXT: ]

// NONE-LABEL: func.func @residual
// NONE-SAME:    cascade.peak_sram_bytes = 12288 : i64
// NONE-NOT:     cascade.group

func.func @residual(%x: tensor<1x16x8x4xi8>) -> tensor<1x16x8x32xi8> {
  %w0 = arith.constant dense<1> : tensor<32x1x1x4xi8>
  %w1 = arith.constant dense<1> : tensor<32x1x1x32xi8>
  %w2 = arith.constant dense<1> : tensor<1x3x3x32xi8>
  %w3 = arith.constant dense<1> : tensor<32x1x1x32xi8>
  %b = arith.constant dense<0> : tensor<32xi32>
  %y = nn.conv2d %x, %w0, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x4xi8>, tensor<32x1x1x4xi8>, tensor<32xi32>) -> tensor<1x16x8x32xi8>
  %t1 = nn.conv2d %y, %w1, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x32xi8>, tensor<32x1x1x32xi8>, tensor<32xi32>) -> tensor<1x16x8x32xi8>
  %t2 = nn.depthwise_conv2d %t1, %w2, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x32xi8>, tensor<1x3x3x32xi8>, tensor<32xi32>) -> tensor<1x16x8x32xi8>
  %t3 = nn.conv2d %t2, %w3, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x32xi8>, tensor<32x1x1x32xi8>, tensor<32xi32>) -> tensor<1x16x8x32xi8>
  %out = nn.add %y, %t3 {input_quant = #nn.quant<0.5:0>, input2_quant = #nn.quant<0.5:0>, activation = #nn<activation none>, output_quant = #nn.quant<0.5:0>} : (tensor<1x16x8x32xi8>, tensor<1x16x8x32xi8>) -> tensor<1x16x8x32xi8>
  func.return %out : tensor<1x16x8x32xi8>
}
