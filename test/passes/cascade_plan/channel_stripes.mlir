// Channel stripes (striping=hwc, the default) cut a convolution and the channel-wise operators after it
// into slices of output channels, down to a global mean that no row stripe can cut.
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128 striping=hw' | filecheck %s --check-prefix=HW
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128 striping=hwc' | filecheck %s
// RUN: cascade-opt %s --cascade-plan='objective=min-sram accelerator=ethos-u55-128 striping=hwc' \
// RUN:   --rolling-buffer --allocate-memory=accelerator=ethos-u55-128 > %t.mlir
// RUN: %python -m cascade.interpreter.scheduled %t.mlir %s --seed 5 | filecheck %s --check-prefix=EXEC
// RUN: cascade-opt %t.mlir --lower-to-ethosu=accelerator=ethos-u55-128 > %t.lowered.mlir
// RUN: %python -m cascade.passes.lower_to_ethosu %t.lowered.mlir %s --seed 5 | filecheck %s --check-prefix=NPU
//
// x: 1x4x4x8 -> %t0 = conv 1x1 (64 channels) -> %t1 = depthwise 3x3 pad 1 -> %m = mean over H, W.
// Bytes (U55-128): x is a graph input (NHWC) 4*4*8 = 128; %t0 and %t1 are bricked,
// 4*4*64 = 1024 each; %m, the graph output (NHWC), 64.
//
// Channel stripes of 16 (the NPU's granule, the smallest tried), all three in one cascade: x,
// a 4x4x16 slice of %t0 (256), the same of %t1 (256) and %m: 128 + 256 + 256 + 64 = 704.
// Nothing holds less: x lives until the convolution ran, and every other plan keeps %t0 or %t1
// whole (1024) beside something. The mean reads whole rows and columns, so row and column
// stripes cannot reach it. Without channel stripes the best is the row-striping lower bound:
// %t0 and %t1 in 1-row stripes, x + %t1 + 3 rows of %t0 (3*4*64 = 768) = 1920, then %t1 and %m
// (1088); one at a time, %t0 + %t1 = 2048. (2-D stripes are not tried on outputs this small.)
// Weights stream: channel stripes read each slice of them once.

// HW-LABEL: func.func @head
// HW-SAME:    cascade.peak_sram_bytes = 1920 : i64
// HW-SAME:    cascade.lower_bound_bytes = 1920 : i64
// HW-NOT:     stripe_order [1] num_stripes [4]

// CHECK-LABEL: func.func @head
// CHECK-SAME:    cascade.peak_sram_bytes = 704 : i64
// CHECK:         cascade.group ins(%x_1 = %x : tensor<1x4x4x8xi8>) -> tensor<1x64xi8>
// CHECK-SAME:      stripe_shape [1, 16] stripe_order [1] num_stripes [4] weights stream
// CHECK-NEXT:      nn.conv2d {{.*}}#cascade.stripe<shape = [1, 4, 4, 16], offset = affine_map<(d0) -> (0, 0, 0, (d0 * 16))>, mode = recompute>
// CHECK-NEXT:      nn.depthwise_conv2d {{.*}}#cascade.stripe<shape = [1, 4, 4, 16], offset = affine_map<(d0) -> (0, 0, 0, (d0 * 16))>, mode = recompute>
// CHECK-NEXT:      nn.mean {{.*}}#cascade.stripe<shape = [1, 16], offset = affine_map<(d0) -> (0, (d0 * 16))>>

// EXEC:       bit-exact: {{[1-9]}}/{{[1-9]}} tensors

// NPU:        npu commands: {{[1-9][0-9]*}} in 1 streams
// NPU-NEXT:   bit-exact: 1/1 outputs

func.func @head(%x: tensor<1x4x4x8xi8>) -> tensor<1x64xi8> {
  %w0 = arith.constant dense<"0xA54DCA182530BB1D6D132CDED6237B2ED91E3F721FCB1971174494D6493C9D5C3460BE31201E69FEDAA0EEE8B9997F5C7C2999FDAFE593253CD654AF4DFAD71427A0AEB3FEE9232F8AF2211F9EE491C5B10BECB5563BFC1E6F93427ECBC8FE2955E5CD8E46DC8ED4B7C2764D2A5A4D767706F85D8690024AD6BDA3401BE9C8CBCCC935F6CD1F61226AE15338AE1A34004D33BA0D246AC04C81B1BAF23E3BF9EEF5F79F2B4934AF87F5520B69B94B0D982E85BB55B672A872637ACD7466FCB60E0E8FF18463B0E4B2BA29703474F064AC68F700F5B02B3DC666F45BDEAA2CCAEDCD2B5157410E4DEE4AF2B34F430A073447DE636C0E806C957BA684D6431FB5EAD7424D09E15D024C5848F23D1FA6F7361D7F618D1532E70E20E2A6668DE7F47E8467E546D53EC8E2A1257BDB256C9B3E4FBB498146EF7030CBF9537252DCCEADD764B6A32FBB09ADEAE109C4A997203975352B878B145C8A42D884CF4CFDA72D8E1D5DD92589082D852A7122873EE805ADD58942167A385286195C679F9C6994E45B8AB1098012070961F37DE436DDFDC99D6E75AF6547CFB11B42072482DC531C2BC3907C9617EB5E5089E40186BAA8A57D119E6FB65D00ABC32AF38E667F022E872D49CC15C90B999B772B4FC7A6FD4C914A16DB4708752B0F1544B835C0E719097DFA8701E9232F21F2812687786976EBFCC327F5931765274BA9829B4406"> : tensor<64x1x1x8xi8>
  %w1 = arith.constant dense<"0xF61FF889326FFA9492EDEEEE3C669F2BF20894EA27E689C66B6B262E4886B8438F39BA76FEF8C90C5101FBE6CF9A48D5B0C0A13DA900A6ADCB3D64069481BE21C9C727B8DB8C188F341A924C7F88DFA161BFDB0ECC682919D2E64692F8194157F1D4AF90988285CF7A9AF7C93D5552266AFE70E7AAE6DA47627C2E59AF2EA37ABC84670AD3C4D36BC08AAD1FFF8EB8406E2F8A7FC4CCE4DD9F0B4110D9F2FA0025C8EFE57F37724F4D37EA2B14004077139B4180DF3932249962C6857200059AEB8EA17CF3787E0ED29D1C0B63FFD7298374D9BD74FC11ADD7B9CA6503952269FD669F6376EE71879737FD5F72F8D51C4AC91B6D0C48D41A1E5EC9E6A0392854A8615EEF109FC1BFA9E2563701288F29B3D73F6AC2B69EDD2C19F264BEE462A5BAF20FD27ECF14C011ED201F836320ADB98BAB1686A28D9801210C7736F3EEC580DCFC43FE5D049B4D78A7A3EBB92865C8517ED02111F6A652DA3524872B6A31D7FFE4587744D5EB783E96968F89BE828565E07E5F7D784E9060A721CA807D7633ED123402F376E5BF1496773D19616326BE5BE5850336B36F13BCAE48166882136805A7D1BE5E9F276810FDF720D033CA4F2E53CB8AD1919DD51A9FB6D4D509BA64C8CF6803DE50D83A2ECFBAEB5342071A48CB2DBD574AB29152572237C4FB659A4016F7A11BC62C5271CF64F25D6F15CC50C4B73F4C7E621513A53CC7E99CD79D7FD9C7BCE4E05B0B01FAEE78E4EA5BF2CC362241B7DCBB2EE21414422AA0281BC1450D21386343FB93547121B38151A58CE94982F56A8679A3BE12655DCE"> : tensor<1x3x3x64xi8>
  %b = arith.constant dense<0> : tensor<64xi32>
  %t0 = nn.conv2d %x, %w0, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, activation = #nn<activation none>, input_quant = #nn.quant<0.05:0>, weight_quant = #nn.quant<0.02:0>, output_quant = #nn.quant<0.3:0>} : (tensor<1x4x4x8xi8>, tensor<64x1x1x8xi8>, tensor<64xi32>) -> tensor<1x4x4x64xi8>
  %t1 = nn.depthwise_conv2d %t0, %w1, %b {stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, activation = #nn<activation none>, input_quant = #nn.quant<0.3:0>, weight_quant = #nn.quant<0.02:0>, output_quant = #nn.quant<1.0:0>} : (tensor<1x4x4x64xi8>, tensor<1x3x3x64xi8>, tensor<64xi32>) -> tensor<1x4x4x64xi8>
  %m = nn.mean %t1 {input_quant = #nn.quant<1.0:0>, axes = array<i64: 1, 2>, keep_dims = false, output_quant = #nn.quant<1.0:0>} : (tensor<1x4x4x64xi8>) -> tensor<1x64xi8>
  func.return %m : tensor<1x64xi8>
}
