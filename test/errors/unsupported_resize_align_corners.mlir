// Unsupported operator: resize with align_corners.
// RUN: cd %S && %exit1 cascade-opt unsupported_resize_align_corners.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run unsupported_resize_align_corners.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate unsupported_resize_align_corners.mlir 2>&1 | filecheck %s --check-prefix=EST

func.func @main(%x: tensor<1x4x4x2xi8>) -> tensor<1x8x8x2xi8> {
  %0 = nn.resize %x {input_quant = #nn.quant<0.5:0>, mode = #nn<resize_mode bilinear>, align_corners = true, half_pixel_centers = false, output_quant = #nn.quant<0.5:0>} : (tensor<1x4x4x2xi8>) -> tensor<1x8x8x2xi8>
  func.return %0 : tensor<1x8x8x2xi8>
}

// OPT-NOT:  Traceback
// OPT:      {{^}}unsupported_resize_align_corners.mlir:7:3: error: 'nn.resize' op resize with align_corners is not supported{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: unsupported_resize_align_corners.mlir:7:3: 'nn.resize' op resize with align_corners is not supported{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: unsupported_resize_align_corners.mlir:7:3: 'nn.resize' op resize with align_corners is not supported{{$}}
// EST-NOT:  {{.}}
