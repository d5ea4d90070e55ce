// lower-to-ethosu checks the placements it is given as allocate-memory does (memory_check): a
// stream addresses memory where they say, so two live buffers placed over each other, or a
// buffer past the SRAM, would compute garbage. Placements edited by hand are one error line.
// RUN: cascade-opt %s --lower-to-ethosu | filecheck %s --check-prefix=VALID
// The first rolling buffer moved over the argument, which is still being read:
// RUN: sed -e 's/<sram, 4096, 4096> : tensor<1x16x16x64xi8>/<sram, 0, 4096> : tensor<1x16x16x64xi8>/' %s \
// RUN:   | %exit1 cascade-opt --lower-to-ethosu 2>&1 | filecheck %s --check-prefix=OVERLAP
// The loop's output moved 2 GiB up:
// RUN: sed -e 's/<sram, 8192, 4096>}/<sram, 2147483648, 4096>}/' %s \
// RUN:   | %exit1 cascade-opt --lower-to-ethosu -t ethosu-cs 2>&1 | filecheck %s --check-prefix=PEAK
// ethosu-pipeline lowers what its allocate-memory has just checked, without checking it again:
// RUN: cascade-opt %s --lower-to-ethosu=check-allocation=false | filecheck %s --check-prefix=VALID

// VALID: ethosu.command_stream "ethos-u55-128"
// OVERLAP: cascade-opt: error: lower-to-ethosu: @patches: the allocation is not valid: argument 0 [0, 4096) and rolling buffer (step 0) [0, 4096) overlap while both are live (steps 0..0)
// PEAK: cascade-opt: error: lower-to-ethosu: @patches: the allocation is not valid: {{.*}}ends at 2147487744, above the allocated peak 14336

builtin.module {
  func.func @patches(%x: tensor<1x16x16x16xi8> {cascade.placement = #cascade.placement<sram, 0, 4096>}) -> tensor<1x16x16x16xi8> attributes {cascade.peak_sram_bytes = 14336 : i64, cascade.cycles = 25952 : i64, cascade.lower_bound_bytes = 12288 : i64, cascade.accelerator = "ethos-u55-128", cascade.allocated_peak_bytes = 14336 : i64, cascade.max_live_bytes = 14336 : i64} {
    %w0 = arith.constant dense<1> : tensor<64x1x1x16xi8>
    %b0 = arith.constant dense<0> : tensor<64xi32>
    %w1 = arith.constant dense<1> : tensor<1x3x3x64xi8>
    %w2 = arith.constant dense<1> : tensor<16x1x1x64xi8>
    %b2 = arith.constant dense<0> : tensor<16xi32>
    %out = cascade.for_stripes (%row) ins(%x_1 = %x : tensor<1x16x16x16xi8>) -> tensor<1x16x16x16xi8> stripe_shape [1, 2, 16, 16] stripe_order [1] num_stripes [8] weights stream peak_sram_bytes 14336 cycles 25952 attributes {cascade.placement = #cascade.placement<sram, 8192, 4096>} {
      %t0 = nn.conv2d %x_1, %w0, %b0 {cascade.stripe = #cascade.stripe<shape = [1, 4, 16, 64], offset = affine_map<(d0) -> (0, ((d0 * 2) + -1), 0, 0)>, mode = rolling>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.5:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<8.0:0>} : (tensor<1x16x16x16xi8>, tensor<64x1x1x16xi8>, tensor<64xi32>) -> tensor<1x16x16x64xi8>
      %t0_rolling = cascade.rolling_buffer %t0 depth 4 index_map affine_map<(d0, d1, d2, d3) -> (d0, (d1 mod 4), d2, d3)> placement #cascade.placement<sram, 4096, 4096> : tensor<1x16x16x64xi8>
      %t1 = nn.depthwise_conv2d %t0_rolling, %w1, %b0 {cascade.stripe = #cascade.stripe<shape = [1, 2, 16, 64], offset = affine_map<(d0) -> (0, (d0 * 2), 0, 0)>, mode = rolling>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<8.0:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<16.0:0>} : (tensor<1x16x16x64xi8>, tensor<1x3x3x64xi8>, tensor<64xi32>) -> tensor<1x16x16x64xi8>
      %t1_rolling = cascade.rolling_buffer %t1 depth 2 index_map affine_map<(d0, d1, d2, d3) -> (d0, (d1 mod 2), d2, d3)> placement #cascade.placement<sram, 12288, 2048> : tensor<1x16x16x64xi8>
      %out_1 = nn.conv2d %t1_rolling, %w2, %b2 {cascade.stripe = #cascade.stripe<shape = [1, 2, 16, 16], offset = affine_map<(d0) -> (0, (d0 * 2), 0, 0)>>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<16.0:0>, weight_quant = #nn.quant<0.5:0>, output_quant = #nn.quant<64.0:0>} : (tensor<1x16x16x64xi8>, tensor<16x1x1x64xi8>, tensor<16xi32>) -> tensor<1x16x16x16xi8>
      cascade.yield %out_1 : tensor<1x16x16x16xi8>
    }
    func.return %out : tensor<1x16x16x16xi8>
  }
}

