// The planner also searches a memory-lean operator order (planner/order.py) and moves the nn
// operators when a plan in that order wins.
//
// resnet8's converter lists the second residual block's 1x1 shortcut (conv2d_10, 992 bytes of
// encoded weights on U55-128) before the main branch's 3x3 convolution (conv2d_8, 5,728 bytes,
// output re_lu_12): the 3x3 convolution then runs next to three full tensors, its 16 KiB input,
// the shortcut's 8 KiB output and its own 8 KiB output. Run first, it has no shortcut output
// to keep beside it. Likewise the third block's 1x1 shortcut (conv2d_13) runs before its 3x3
// convolution (conv2d_12, 37,520 bytes of weights), which then starts after the block's 8 KiB
// input has died (and runs with the block's add in stripes of 16 channels). At Vela's
// `--optimise Size` peak on U55-128 (35840 bytes) the plan that wins is in that order;
// `reorder=false` keeps the converter's.
//
// RUN: cascade-opt %models/resnet8.tflite -p 'cascade-plan{accelerator=ethos-u55-128 sram-budget=35840}' -o %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: cascade-run %t.mlir --seed 2 --compare-tflite %models/resnet8.tflite | filecheck %s --check-prefix=EXACT
// RUN: cascade-opt %models/resnet8.tflite -p 'cascade-plan{accelerator=ethos-u55-128 sram-budget=35840 reorder=false}' \
// RUN:   | filecheck %s --check-prefix=KEEP
// RUN: cascade-opt %models/resnet8.tflite -p 'ethosu-pipeline{accelerator=ethos-u55-128 sram-budget=35840}' -o %t.lowered.mlir
// RUN: cascade-run %t.lowered.mlir --seed 2 --compare-tflite %models/resnet8.tflite | filecheck %s --check-prefix=EXACT

// CHECK-LABEL: func.func @main
// CHECK:         %re_lu_12_1_Relu = nn.conv2d %re_lu_11_1_Relu, %conv2d_8_1_convolution
// CHECK-NEXT:    %conv2d_10_1_convolution1 = nn.conv2d %re_lu_11_1_Relu, %conv2d_10_1_convolution
// CHECK-NEXT:    %conv2d_9_1_convolution1 = nn.conv2d %re_lu_12_1_Relu
// CHECK:         %conv2d_13_1_convolution1 = nn.conv2d %re_lu_13_1_Relu
// CHECK-NEXT:    %re_lu_15_1_Relu = cascade.group
// CHECK-SAME:      stripe_order [3]
// CHECK-NEXT:      %conv2d_12_1_convolution1 = nn.conv2d %re_lu_14_1_Relu_1
// CHECK-NEXT:      %re_lu_15_1_Relu_1 = nn.add %conv2d_13_1_convolution1_1, %conv2d_12_1_convolution1
// CHECK-NEXT:      cascade.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    nn.mean
// CHECK-NEXT:    nn.fully_connected
// CHECK-NEXT:    nn.softmax
// CHECK-NEXT:    func.return

// EXACT: bit-exact: {{([0-9]+)/\1}} tensors

// KEEP-LABEL: func.func @main
// KEEP:         %conv2d_10_1_convolution1 = nn.conv2d %re_lu_11_1_Relu, %conv2d_10_1_convolution
// KEEP-NEXT:    %re_lu_12_1_Relu = nn.conv2d %re_lu_11_1_Relu, %conv2d_8_1_convolution
// KEEP:         %conv2d_12_1_convolution1 = nn.conv2d %re_lu_14_1_Relu
// KEEP-NEXT:    %conv2d_13_1_convolution1 = nn.conv2d %re_lu_13_1_Relu
