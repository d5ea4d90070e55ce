// Malformed MLIR: a file cut inside a weight blob, so its last string never closes. One
// error at the string's start, its 300-character line cut around it, at once: xDSL's own
// string pattern takes time doubling with every hex digit here (28 digits: over 20 s).
// RUN: cd %S && %exit1 cascade-opt syntax_truncated_blob.mlir 2>&1 | filecheck %s --check-prefix=OPT
// RUN: cd %S && %exit1 cascade-run syntax_truncated_blob.mlir 2>&1 | filecheck %s --check-prefix=EXE
// RUN: cd %S && %exit1 cascade-estimate syntax_truncated_blob.mlir 2>&1 | filecheck %s --check-prefix=EST

// OPT-NOT:  Traceback
// OPT:      {{^}}syntax_truncated_blob.mlir:23:35: error: End of file reached before closing string literal.{{$}}
// OPT-NEXT: {{^}}  %weights = arith.constant dense<"0x00254A6F94B9DE03284D7297BCE1062B50759ABFE4092E53789DC2E70C31567...{{$}}
// OPT-NEXT: {{^}}                                  ^{{$}}
// OPT-NOT:  {{.}}

// EXE-NOT:  Traceback
// EXE:      {{^}}cascade-run: error: syntax_truncated_blob.mlir:23:35: End of file reached before closing string literal.{{$}}
// EXE-NOT:  {{.}}

// EST-NOT:  Traceback
// EST:      {{^}}cascade-estimate: error: syntax_truncated_blob.mlir:23:35: End of file reached before closing string literal.{{$}}
// EST-NOT:  {{.}}

func.func @main() -> tensor<300xi8> {
  %weights = arith.constant dense<"0x00254A6F94B9DE03284D7297BCE1062B50759ABFE4092E53789DC2E70C31567BA0C5EA0F34597EA3C8ED12375C81A6CBF0153A5F84A9CEF3183D6287ACD1F61B40658AAFD4F91E43688DB2D7FC21466B90B5DAFF24496E93B8DD02274C7196BBE0052A4F7499BEE3082D52779CC1E60B30557A9FC4E90E33587DA2C7EC11365B80A5CAEF14395E83A8CDF2173C6186ABD0F51A3F6489
