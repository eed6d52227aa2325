/* microbench/deepbench.c — Baidu DeepBench's kernel lists (final list state, commit fc37410,
 * 2017-11-21), transcribed row for row from ../shared/reference/MODELS.md §6.4, plus seed 004's
 * DMM and SMM shapes. Row numbers in the comments are the tables'. Generated once from that
 * file; tests/test_microbench.c checks every row's derived FLOPs against the tables' column.
 */
#include "microbench/mb.h"

/* GEMM training_set: C (M x N) = op(A) (M x K) op(B) (K x N); ta/tb: that operand transposed. */
const MbGemmShape mb_deepbench_gemm_train[] = {
    {1760, 16, 1760, false, false, 0.09912}, /* #1 */
    {1760, 32, 1760, false, false, 0.1982}, /* #2 */
    {1760, 64, 1760, false, false, 0.3965}, /* #3 */
    {1760, 128, 1760, false, false, 0.793}, /* #4 */
    {1760, 7000, 1760, false, false, 43.37}, /* #5 */
    {2048, 16, 2048, false, false, 0.1342}, /* #6 */
    {2048, 32, 2048, false, false, 0.2684}, /* #7 */
    {2048, 64, 2048, false, false, 0.5369}, /* #8 */
    {2048, 128, 2048, false, false, 1.074}, /* #9 */
    {2048, 7000, 2048, false, false, 58.72}, /* #10 */
    {2560, 16, 2560, false, false, 0.2097}, /* #11 */
    {2560, 32, 2560, false, false, 0.4194}, /* #12 */
    {2560, 64, 2560, false, false, 0.8389}, /* #13 */
    {2560, 128, 2560, false, false, 1.678}, /* #14 */
    {2560, 7000, 2560, false, false, 91.75}, /* #15 */
    {4096, 16, 4096, false, false, 0.5369}, /* #16 */
    {4096, 32, 4096, false, false, 1.074}, /* #17 */
    {4096, 64, 4096, false, false, 2.147}, /* #18 */
    {4096, 128, 4096, false, false, 4.295}, /* #19 */
    {4096, 7000, 4096, false, false, 234.9}, /* #20 */
    {1760, 16, 1760, true, false, 0.09912}, /* #21 */
    {1760, 32, 1760, true, false, 0.1982}, /* #22 */
    {1760, 64, 1760, true, false, 0.3965}, /* #23 */
    {1760, 128, 1760, true, false, 0.793}, /* #24 */
    {1760, 7000, 1760, true, false, 43.37}, /* #25 */
    {2048, 16, 2048, true, false, 0.1342}, /* #26 */
    {2048, 32, 2048, true, false, 0.2684}, /* #27 */
    {2048, 64, 2048, true, false, 0.5369}, /* #28 */
    {2048, 128, 2048, true, false, 1.074}, /* #29 */
    {2048, 7000, 2048, true, false, 58.72}, /* #30 */
    {2560, 16, 2560, true, false, 0.2097}, /* #31 */
    {2560, 32, 2560, true, false, 0.4194}, /* #32 */
    {2560, 64, 2560, true, false, 0.8389}, /* #33 */
    {2560, 128, 2560, true, false, 1.678}, /* #34 */
    {2560, 7000, 2560, true, false, 91.75}, /* #35 */
    {4096, 16, 4096, true, false, 0.5369}, /* #36 */
    {4096, 32, 4096, true, false, 1.074}, /* #37 */
    {4096, 64, 4096, true, false, 2.147}, /* #38 */
    {4096, 128, 4096, true, false, 4.295}, /* #39 */
    {4096, 7000, 4096, true, false, 234.9}, /* #40 */
    {1760, 7133, 1760, false, true, 44.19}, /* #41 */
    {2048, 7133, 2048, false, true, 59.84}, /* #42 */
    {2560, 7133, 2560, false, true, 93.49}, /* #43 */
    {4096, 7133, 4096, false, true, 239.3}, /* #44 */
    {5124, 9124, 1760, false, false, 164.6}, /* #45 */
    {35, 8457, 1760, false, false, 1.042}, /* #46 */
    {5124, 9124, 2048, false, false, 191.5}, /* #47 */
    {35, 8457, 2048, false, false, 1.212}, /* #48 */
    {5124, 9124, 2560, false, false, 239.4}, /* #49 */
    {35, 8457, 2560, false, false, 1.515}, /* #50 */
    {5124, 9124, 4096, false, false, 383}, /* #51 */
    {35, 8457, 4096, false, false, 2.425}, /* #52 */
    {5124, 9124, 1760, true, false, 164.6}, /* #53 */
    {35, 8457, 1760, true, false, 1.042}, /* #54 */
    {5124, 9124, 2048, true, false, 191.5}, /* #55 */
    {35, 8457, 2048, true, false, 1.212}, /* #56 */
    {5124, 9124, 2560, true, false, 239.4}, /* #57 */
    {35, 8457, 2560, true, false, 1.515}, /* #58 */
    {5124, 9124, 4096, true, false, 383}, /* #59 */
    {35, 8457, 4096, true, false, 2.425}, /* #60 */
    {7680, 16, 2560, false, false, 0.6291}, /* #61 */
    {7680, 32, 2560, false, false, 1.258}, /* #62 */
    {7680, 64, 2560, false, false, 2.517}, /* #63 */
    {7680, 128, 2560, false, false, 5.033}, /* #64 */
    {7680, 16, 2560, true, false, 0.6291}, /* #65 */
    {7680, 32, 2560, true, false, 1.258}, /* #66 */
    {7680, 64, 2560, true, false, 2.517}, /* #67 */
    {7680, 128, 2560, true, false, 5.033}, /* #68 */
    {3072, 16, 1024, false, false, 0.1007}, /* #69 */
    {3072, 32, 1024, false, false, 0.2013}, /* #70 */
    {3072, 64, 1024, false, false, 0.4027}, /* #71 */
    {3072, 128, 1024, false, false, 0.8053}, /* #72 */
    {3072, 16, 1024, true, false, 0.1007}, /* #73 */
    {3072, 32, 1024, true, false, 0.2013}, /* #74 */
    {3072, 64, 1024, true, false, 0.4027}, /* #75 */
    {3072, 128, 1024, true, false, 0.8053}, /* #76 */
    {3072, 7435, 1024, false, true, 46.78}, /* #77 */
    {7680, 5481, 2560, false, true, 215.5}, /* #78 */
    {512, 8, 500000, false, false, 4.096}, /* #79 */
    {1024, 8, 500000, false, false, 8.192}, /* #80 */
    {512, 16, 500000, false, false, 8.192}, /* #81 */
    {1024, 16, 500000, false, false, 16.38}, /* #82 */
    {512, 8, 500000, true, false, 4.096}, /* #83 */
    {1024, 8, 500000, true, false, 8.192}, /* #84 */
    {512, 16, 500000, true, false, 8.192}, /* #85 */
    {1024, 16, 500000, true, false, 16.38}, /* #86 */
    {1024, 700, 512, false, false, 0.734}, /* #87 */
    {1024, 700, 512, true, false, 0.734}, /* #88 */
    {7680, 24000, 2560, false, false, 943.7}, /* #89 */
    {6144, 24000, 2048, false, false, 604}, /* #90 */
    {4608, 24000, 1536, false, false, 339.7}, /* #91 */
    {8448, 24000, 2816, false, false, 1142}, /* #92 */
    {3072, 24000, 1024, false, false, 151}, /* #93 */
    {7680, 48000, 2560, false, false, 1887}, /* #94 */
    {6144, 48000, 2048, false, false, 1208}, /* #95 */
    {4608, 48000, 1536, false, false, 679.5}, /* #96 */
    {8448, 48000, 2816, false, false, 2284}, /* #97 */
    {3072, 48000, 1024, false, false, 302}, /* #98 */
    {7680, 24000, 2560, true, false, 943.7}, /* #99 */
    {6144, 24000, 2048, true, false, 604}, /* #100 */
    {4608, 24000, 1536, true, false, 339.7}, /* #101 */
    {8448, 24000, 2816, true, false, 1142}, /* #102 */
    {3072, 24000, 1024, true, false, 151}, /* #103 */
    {7680, 48000, 2560, true, false, 1887}, /* #104 */
    {6144, 48000, 2048, true, false, 1208}, /* #105 */
    {4608, 48000, 1536, true, false, 679.5}, /* #106 */
    {8448, 48000, 2816, true, false, 2284}, /* #107 */
    {3072, 48000, 1024, true, false, 302}, /* #108 */
    {6144, 16, 2048, false, false, 0.4027}, /* #109 */
    {4608, 16, 1536, false, false, 0.2265}, /* #110 */
    {8448, 16, 2816, false, false, 0.7613}, /* #111 */
    {6144, 32, 2048, false, false, 0.8053}, /* #112 */
    {4608, 32, 1536, false, false, 0.453}, /* #113 */
    {8448, 32, 2816, false, false, 1.523}, /* #114 */
    {6144, 16, 2048, true, false, 0.4027}, /* #115 */
    {4608, 16, 1536, true, false, 0.2265}, /* #116 */
    {8448, 16, 2816, true, false, 0.7613}, /* #117 */
    {6144, 32, 2048, true, false, 0.8053}, /* #118 */
    {4608, 32, 1536, true, false, 0.453}, /* #119 */
    {8448, 32, 2816, true, false, 1.523}, /* #120 */
    {512, 24000, 2816, false, false, 69.21}, /* #121 */
    {512, 24000, 2048, false, false, 50.33}, /* #122 */
    {512, 24000, 2560, false, false, 62.91}, /* #123 */
    {512, 24000, 1536, false, false, 37.75}, /* #124 */
    {1024, 24000, 2816, false, false, 138.4}, /* #125 */
    {1024, 24000, 2048, false, false, 100.7}, /* #126 */
    {1024, 24000, 2560, false, false, 125.8}, /* #127 */
    {1024, 24000, 1536, false, false, 75.5}, /* #128 */
    {512, 16, 512, false, false, 0.008389}, /* #129 */
    {1024, 16, 512, false, false, 0.01678}, /* #130 */
    {512, 24000, 2816, true, false, 69.21}, /* #131 */
    {512, 24000, 2048, true, false, 50.33}, /* #132 */
    {512, 24000, 2560, true, false, 62.91}, /* #133 */
    {512, 24000, 1536, true, false, 37.75}, /* #134 */
    {1024, 24000, 2816, true, false, 138.4}, /* #135 */
    {1024, 24000, 2048, true, false, 100.7}, /* #136 */
    {1024, 24000, 2560, true, false, 125.8}, /* #137 */
    {1024, 24000, 1536, true, false, 75.5}, /* #138 */
    {512, 16, 512, false, true, 0.008389}, /* #139 */
    {1024, 16, 512, false, true, 0.01678}, /* #140 */
    {512, 48000, 2816, false, false, 138.4}, /* #141 */
    {512, 48000, 2048, false, false, 100.7}, /* #142 */
    {512, 48000, 2560, false, false, 125.8}, /* #143 */
    {512, 48000, 1536, false, false, 75.5}, /* #144 */
    {1024, 48000, 2816, false, false, 276.8}, /* #145 */
    {1024, 48000, 2048, false, false, 201.3}, /* #146 */
    {1024, 48000, 2560, false, false, 251.7}, /* #147 */
    {1024, 48000, 1536, false, false, 151}, /* #148 */
    {512, 32, 512, false, false, 0.01678}, /* #149 */
    {1024, 32, 512, false, false, 0.03355}, /* #150 */
    {512, 48000, 2816, true, false, 138.4}, /* #151 */
    {512, 48000, 2048, true, false, 100.7}, /* #152 */
    {512, 48000, 2560, true, false, 125.8}, /* #153 */
    {512, 48000, 1536, true, false, 75.5}, /* #154 */
    {1024, 48000, 2816, true, false, 276.8}, /* #155 */
    {1024, 48000, 2048, true, false, 201.3}, /* #156 */
    {1024, 48000, 2560, true, false, 251.7}, /* #157 */
    {1024, 48000, 1536, true, false, 151}, /* #158 */
    {512, 32, 512, false, true, 0.01678}, /* #159 */
    {1024, 32, 512, false, true, 0.03355}, /* #160 */
};
const int mb_deepbench_gemm_train_count = sizeof mb_deepbench_gemm_train / sizeof *mb_deepbench_gemm_train;

/* Convolution training_set: input W x H x C, batch N, K filters of R (height) x S (width), pads,
 * strides; fwd GFLOP = 2 N K C R S P Q. */
const MbConvShape mb_deepbench_conv_train[] = {
    {.w = 700, .h = 161, .c = 1, .n = 4, .k = 32, .r = 5, .s = 20, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.6896}, /* #1 */
    {.w = 700, .h = 161, .c = 1, .n = 8, .k = 32, .r = 5, .s = 20, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 1.379}, /* #2 */
    {.w = 700, .h = 161, .c = 1, .n = 16, .k = 32, .r = 5, .s = 20, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 2.759}, /* #3 */
    {.w = 700, .h = 161, .c = 1, .n = 32, .k = 32, .r = 5, .s = 20, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 5.517}, /* #4 */
    {.w = 341, .h = 79, .c = 32, .n = 4, .k = 32, .r = 5, .s = 10, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 2.584}, /* #5 */
    {.w = 341, .h = 79, .c = 32, .n = 8, .k = 32, .r = 5, .s = 10, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 5.168}, /* #6 */
    {.w = 341, .h = 79, .c = 32, .n = 16, .k = 32, .r = 5, .s = 10, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 10.34}, /* #7 */
    {.w = 341, .h = 79, .c = 32, .n = 32, .k = 32, .r = 5, .s = 10, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 20.67}, /* #8 */
    {.w = 480, .h = 48, .c = 1, .n = 16, .k = 16, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 0.1062}, /* #9 */
    {.w = 240, .h = 24, .c = 16, .n = 16, .k = 32, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 0.8493}, /* #10 */
    {.w = 120, .h = 12, .c = 32, .n = 16, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 0.8493}, /* #11 */
    {.w = 60, .h = 6, .c = 64, .n = 16, .k = 128, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 0.8493}, /* #12 */
    {.w = 108, .h = 108, .c = 3, .n = 8, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 2, .stride_w = 2, .gflop = 0.08062}, /* #13 */
    {.w = 54, .h = 54, .c = 64, .n = 8, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 1.72}, /* #14 */
    {.w = 27, .h = 27, .c = 128, .n = 8, .k = 128, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 1.72}, /* #15 */
    {.w = 14, .h = 14, .c = 128, .n = 8, .k = 256, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 0.9248}, /* #16 */
    {.w = 7, .h = 7, .c = 256, .n = 8, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 0.9248}, /* #17 */
    {.w = 224, .h = 224, .c = 3, .n = 8, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 1.387}, /* #18 */
    {.w = 112, .h = 112, .c = 64, .n = 8, .k = 128, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 14.8}, /* #19 */
    {.w = 56, .h = 56, .c = 128, .n = 8, .k = 256, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 14.8}, /* #20 */
    {.w = 28, .h = 28, .c = 256, .n = 8, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 14.8}, /* #21 */
    {.w = 14, .h = 14, .c = 512, .n = 8, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 7.399}, /* #22 */
    {.w = 7, .h = 7, .c = 512, .n = 8, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 1.85}, /* #23 */
    {.w = 224, .h = 224, .c = 3, .n = 16, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 2.775}, /* #24 */
    {.w = 112, .h = 112, .c = 64, .n = 16, .k = 128, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 29.6}, /* #25 */
    {.w = 56, .h = 56, .c = 128, .n = 16, .k = 256, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 29.6}, /* #26 */
    {.w = 28, .h = 28, .c = 256, .n = 16, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 29.6}, /* #27 */
    {.w = 14, .h = 14, .c = 512, .n = 16, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 14.8}, /* #28 */
    {.w = 7, .h = 7, .c = 512, .n = 16, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 3.699}, /* #29 */
    {.w = 224, .h = 224, .c = 3, .n = 16, .k = 64, .r = 7, .s = 7, .pad_h = 3, .pad_w = 3, .stride_h = 2, .stride_w = 2, .gflop = 3.776}, /* #30 */
    {.w = 28, .h = 28, .c = 192, .n = 16, .k = 32, .r = 5, .s = 5, .pad_h = 2, .pad_w = 2, .stride_h = 1, .stride_w = 1, .gflop = 3.854}, /* #31 */
    {.w = 28, .h = 28, .c = 192, .n = 16, .k = 64, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.3083}, /* #32 */
    {.w = 14, .h = 14, .c = 512, .n = 16, .k = 48, .r = 5, .s = 5, .pad_h = 2, .pad_w = 2, .stride_h = 1, .stride_w = 1, .gflop = 3.854}, /* #33 */
    {.w = 14, .h = 14, .c = 512, .n = 16, .k = 192, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.6166}, /* #34 */
    {.w = 7, .h = 7, .c = 832, .n = 16, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.334}, /* #35 */
    {.w = 7, .h = 7, .c = 832, .n = 16, .k = 128, .r = 5, .s = 5, .pad_h = 2, .pad_w = 2, .stride_h = 1, .stride_w = 1, .gflop = 4.175}, /* #36 */
    {.w = 56, .h = 56, .c = 64, .n = 8, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 1.85}, /* #37 */
    {.w = 56, .h = 56, .c = 64, .n = 8, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.2055}, /* #38 */
    {.w = 28, .h = 28, .c = 128, .n = 8, .k = 128, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 1.85}, /* #39 */
    {.w = 28, .h = 28, .c = 128, .n = 8, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.2055}, /* #40 */
    {.w = 14, .h = 14, .c = 256, .n = 8, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.2055}, /* #41 */
    {.w = 14, .h = 14, .c = 256, .n = 8, .k = 256, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 1.85}, /* #42 */
    {.w = 14, .h = 14, .c = 256, .n = 8, .k = 1024, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.2055}, /* #43 */
    {.w = 7, .h = 7, .c = 512, .n = 8, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.2055}, /* #44 */
    {.w = 7, .h = 7, .c = 2048, .n = 8, .k = 512, .r = 1, .s = 1, .pad_h = 3, .pad_w = 3, .stride_h = 2, .stride_w = 2, .gflop = 0.8221}, /* #45 */
    {.w = 56, .h = 56, .c = 64, .n = 16, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 3.699}, /* #46 */
    {.w = 56, .h = 56, .c = 64, .n = 16, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.411}, /* #47 */
    {.w = 28, .h = 28, .c = 128, .n = 16, .k = 128, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 3.699}, /* #48 */
    {.w = 28, .h = 28, .c = 128, .n = 16, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.411}, /* #49 */
    {.w = 14, .h = 14, .c = 256, .n = 16, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.411}, /* #50 */
    {.w = 14, .h = 14, .c = 256, .n = 16, .k = 256, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 3.699}, /* #51 */
    {.w = 14, .h = 14, .c = 256, .n = 16, .k = 1024, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.411}, /* #52 */
    {.w = 7, .h = 7, .c = 512, .n = 16, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.411}, /* #53 */
    {.w = 7, .h = 7, .c = 2048, .n = 16, .k = 512, .r = 1, .s = 1, .pad_h = 3, .pad_w = 3, .stride_h = 2, .stride_w = 2, .gflop = 1.644}, /* #54 */
    {.w = 700, .h = 161, .c = 1, .n = 16, .k = 64, .r = 5, .s = 5, .pad_h = 1, .pad_w = 1, .stride_h = 2, .stride_w = 2, .gflop = 1.43}, /* #55 */
    {.w = 350, .h = 80, .c = 64, .n = 16, .k = 64, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 33.03}, /* #56 */
    {.w = 350, .h = 80, .c = 64, .n = 16, .k = 128, .r = 5, .s = 5, .pad_h = 1, .pad_w = 1, .stride_h = 2, .stride_w = 2, .gflop = 44.47}, /* #57 */
    {.w = 175, .h = 40, .c = 128, .n = 16, .k = 128, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 33.03}, /* #58 */
    {.w = 175, .h = 40, .c = 128, .n = 16, .k = 256, .r = 5, .s = 5, .pad_h = 1, .pad_w = 1, .stride_h = 2, .stride_w = 2, .gflop = 43.33}, /* #59 */
    {.w = 84, .h = 20, .c = 256, .n = 16, .k = 256, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 31.71}, /* #60 */
    {.w = 84, .h = 20, .c = 256, .n = 16, .k = 512, .r = 5, .s = 5, .pad_h = 1, .pad_w = 1, .stride_h = 2, .stride_w = 2, .gflop = 38.69}, /* #61 */
    {.w = 42, .h = 10, .c = 512, .n = 16, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 31.71}, /* #62 */
    {.w = 112, .h = 112, .c = 64, .n = 8, .k = 64, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #63 */
    {.w = 56, .h = 56, .c = 64, .n = 8, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #64 */
    {.w = 56, .h = 56, .c = 256, .n = 8, .k = 64, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #65 */
    {.w = 56, .h = 56, .c = 256, .n = 8, .k = 128, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.411}, /* #66 */
    {.w = 28, .h = 28, .c = 128, .n = 8, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #67 */
    {.w = 28, .h = 28, .c = 512, .n = 8, .k = 128, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #68 */
    {.w = 28, .h = 28, .c = 512, .n = 8, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.411}, /* #69 */
    {.w = 14, .h = 14, .c = 256, .n = 8, .k = 1024, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #70 */
    {.w = 28, .h = 28, .c = 512, .n = 8, .k = 1024, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 1.644}, /* #71 */
    {.w = 14, .h = 14, .c = 1024, .n = 8, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #72 */
    {.w = 14, .h = 14, .c = 256, .n = 8, .k = 1024, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #73 */
    {.w = 14, .h = 14, .c = 1024, .n = 8, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.411}, /* #74 */
    {.w = 7, .h = 7, .c = 512, .n = 8, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 1.85}, /* #75 */
    {.w = 7, .h = 7, .c = 512, .n = 8, .k = 2048, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #76 */
    {.w = 14, .h = 14, .c = 1024, .n = 8, .k = 2048, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 1.644}, /* #77 */
    {.w = 7, .h = 7, .c = 2048, .n = 8, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 0.8221}, /* #78 */
    {.w = 112, .h = 112, .c = 64, .n = 16, .k = 64, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #79 */
    {.w = 56, .h = 56, .c = 64, .n = 16, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #80 */
    {.w = 56, .h = 56, .c = 256, .n = 16, .k = 64, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #81 */
    {.w = 56, .h = 56, .c = 256, .n = 16, .k = 128, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.8221}, /* #82 */
    {.w = 28, .h = 28, .c = 128, .n = 16, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #83 */
    {.w = 28, .h = 28, .c = 512, .n = 16, .k = 128, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #84 */
    {.w = 28, .h = 28, .c = 512, .n = 16, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.8221}, /* #85 */
    {.w = 14, .h = 14, .c = 256, .n = 16, .k = 1024, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #86 */
    {.w = 28, .h = 28, .c = 512, .n = 16, .k = 1024, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 3.288}, /* #87 */
    {.w = 14, .h = 14, .c = 1024, .n = 16, .k = 256, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #88 */
    {.w = 14, .h = 14, .c = 256, .n = 16, .k = 1024, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #89 */
    {.w = 14, .h = 14, .c = 1024, .n = 16, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 0.8221}, /* #90 */
    {.w = 7, .h = 7, .c = 512, .n = 16, .k = 512, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1, .gflop = 3.699}, /* #91 */
    {.w = 7, .h = 7, .c = 512, .n = 16, .k = 2048, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #92 */
    {.w = 14, .h = 14, .c = 1024, .n = 16, .k = 2048, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 2, .stride_w = 2, .gflop = 3.288}, /* #93 */
    {.w = 7, .h = 7, .c = 2048, .n = 16, .k = 512, .r = 1, .s = 1, .pad_h = 0, .pad_w = 0, .stride_h = 1, .stride_w = 1, .gflop = 1.644}, /* #94 */
};
const int mb_deepbench_conv_train_count = sizeof mb_deepbench_conv_train / sizeof *mb_deepbench_conv_train;

/* RNN training_set: hidden H, batch N, time steps T, cell; fwd GFLOP (recurrent part) 2 g H^2 N T. */
const MbRnnShape mb_deepbench_rnn_train[] = {
    {1760, 16, 50, MB_RNN_VANILLA, 4.956}, /* #1 */
    {1760, 32, 50, MB_RNN_VANILLA, 9.912}, /* #2 */
    {1760, 64, 50, MB_RNN_VANILLA, 19.82}, /* #3 */
    {1760, 128, 50, MB_RNN_VANILLA, 39.65}, /* #4 */
    {2048, 16, 50, MB_RNN_VANILLA, 6.711}, /* #5 */
    {2048, 32, 50, MB_RNN_VANILLA, 13.42}, /* #6 */
    {2048, 64, 50, MB_RNN_VANILLA, 26.84}, /* #7 */
    {2048, 128, 50, MB_RNN_VANILLA, 53.69}, /* #8 */
    {2560, 16, 50, MB_RNN_VANILLA, 10.49}, /* #9 */
    {2560, 32, 50, MB_RNN_VANILLA, 20.97}, /* #10 */
    {2560, 64, 50, MB_RNN_VANILLA, 41.94}, /* #11 */
    {2560, 128, 50, MB_RNN_VANILLA, 83.89}, /* #12 */
    {512, 16, 25, MB_RNN_LSTM, 0.8389}, /* #13 */
    {512, 32, 25, MB_RNN_LSTM, 1.678}, /* #14 */
    {512, 64, 25, MB_RNN_LSTM, 3.355}, /* #15 */
    {512, 128, 25, MB_RNN_LSTM, 6.711}, /* #16 */
    {1024, 16, 25, MB_RNN_LSTM, 3.355}, /* #17 */
    {1024, 32, 25, MB_RNN_LSTM, 6.711}, /* #18 */
    {1024, 64, 25, MB_RNN_LSTM, 13.42}, /* #19 */
    {1024, 128, 25, MB_RNN_LSTM, 26.84}, /* #20 */
    {2048, 16, 25, MB_RNN_LSTM, 13.42}, /* #21 */
    {2048, 32, 25, MB_RNN_LSTM, 26.84}, /* #22 */
    {2048, 64, 25, MB_RNN_LSTM, 53.69}, /* #23 */
    {2048, 128, 25, MB_RNN_LSTM, 107.4}, /* #24 */
    {4096, 16, 25, MB_RNN_LSTM, 53.69}, /* #25 */
    {4096, 32, 25, MB_RNN_LSTM, 107.4}, /* #26 */
    {4096, 64, 25, MB_RNN_LSTM, 214.7}, /* #27 */
    {4096, 128, 25, MB_RNN_LSTM, 429.5}, /* #28 */
    {1536, 8, 50, MB_RNN_LSTM, 7.55}, /* #29 */
    {1536, 16, 50, MB_RNN_LSTM, 15.1}, /* #30 */
    {1536, 32, 50, MB_RNN_LSTM, 30.2}, /* #31 */
    {256, 16, 150, MB_RNN_LSTM, 1.258}, /* #32 */
    {256, 32, 150, MB_RNN_LSTM, 2.517}, /* #33 */
    {256, 64, 150, MB_RNN_LSTM, 5.033}, /* #34 */
    {2816, 32, 1500, MB_RNN_GRU, 2284}, /* #35 */
    {2816, 32, 750, MB_RNN_GRU, 1142}, /* #36 */
    {2816, 32, 375, MB_RNN_GRU, 570.9}, /* #37 */
    {2816, 32, 187, MB_RNN_GRU, 284.7}, /* #38 */
    {2048, 32, 1500, MB_RNN_GRU, 1208}, /* #39 */
    {2048, 32, 750, MB_RNN_GRU, 604}, /* #40 */
    {2048, 32, 375, MB_RNN_GRU, 302}, /* #41 */
    {2048, 32, 187, MB_RNN_GRU, 150.6}, /* #42 */
    {1536, 32, 1500, MB_RNN_GRU, 679.5}, /* #43 */
    {1536, 32, 750, MB_RNN_GRU, 339.7}, /* #44 */
    {1536, 32, 375, MB_RNN_GRU, 169.9}, /* #45 */
    {1536, 32, 187, MB_RNN_GRU, 84.71}, /* #46 */
    {2560, 32, 1500, MB_RNN_GRU, 1887}, /* #47 */
    {2560, 32, 750, MB_RNN_GRU, 943.7}, /* #48 */
    {2560, 32, 375, MB_RNN_GRU, 471.9}, /* #49 */
    {2560, 32, 187, MB_RNN_GRU, 235.3}, /* #50 */
    {512, 32, 1, MB_RNN_GRU, 0.05033}, /* #51 */
    {1024, 32, 1500, MB_RNN_GRU, 302}, /* #52 */
    {1024, 64, 1500, MB_RNN_GRU, 604}, /* #53 */
};
const int mb_deepbench_rnn_train_count = sizeof mb_deepbench_rnn_train / sizeof *mb_deepbench_rnn_train;

/* Sparse GEMM inference_server_set (DeepBench has no sparse training list): weight M x K
 * of the given sparsity (fraction of zeros) times dense K x N; all NN. */
const MbSparseShape mb_deepbench_sparse[] = {
    {7680, 1, 2560, 0.95}, /* #1 */
    {7860, 2, 2560, 0.95}, /* #2 */
    {7860, 4, 2560, 0.95}, /* #3 */
    {7680, 1500, 2560, 0.95}, /* #4 */
    {7860, 3000, 2560, 0.95}, /* #5 */
    {7860, 6000, 2560, 0.95}, /* #6 */
    {10752, 1, 3584, 0.95}, /* #7 */
    {10752, 2, 3584, 0.95}, /* #8 */
    {10752, 4, 3584, 0.95}, /* #9 */
    {10752, 1500, 3584, 0.95}, /* #10 */
    {10752, 3000, 3584, 0.95}, /* #11 */
    {10752, 6000, 3584, 0.95}, /* #12 */
    {7680, 1, 2560, 0.9}, /* #13 */
    {7860, 2, 2560, 0.9}, /* #14 */
    {7860, 4, 2560, 0.9}, /* #15 */
    {7680, 1500, 2560, 0.9}, /* #16 */
    {7860, 3000, 2560, 0.9}, /* #17 */
    {7860, 6000, 2560, 0.9}, /* #18 */
    {10752, 1, 3584, 0.9}, /* #19 */
    {10752, 2, 3584, 0.9}, /* #20 */
    {10752, 4, 3584, 0.9}, /* #21 */
    {10752, 1500, 3584, 0.9}, /* #22 */
    {10752, 3000, 3584, 0.9}, /* #23 */
    {10752, 6000, 3584, 0.9}, /* #24 */
};
const int mb_deepbench_sparse_count = sizeof mb_deepbench_sparse / sizeof *mb_deepbench_sparse;

/* Seed 004 (the Aalto hardware benchmark built on DeepBench): its five DMM and four SMM
 * shapes, written there as DeepBench (M, N, K[, sparsity]) rows: (3072,128,1024) is
 * DeepBench's C (3072 x 128) with inner dimension 1024, although the seed's prose puts the
 * inner dimension second. The SMM sparsity is read as DeepBench's (fraction of zeros). */
const MbGemmShape mb_seed004_dmm[] = {
    {3072, 128, 1024, false, false, 0.805306},
    {5124, 9124, 2560, false, false, 239.367},
    {2560, 64, 2560, false, false, 0.838861},
    {7860, 64, 2560, false, false, 2.57556},
    {1760, 128, 1760, false, false, 0.792986},
};
const int mb_seed004_dmm_count = sizeof mb_seed004_dmm / sizeof *mb_seed004_dmm;
const MbSparseShape mb_seed004_smm[] = {
    {10752, 1, 3584, 0.9},
    {7680, 1500, 2560, 0.95},
    {7680, 2, 2560, 0.95},
    {7680, 1, 2560, 0.95},
};
const int mb_seed004_smm_count = sizeof mb_seed004_smm / sizeof *mb_seed004_smm;
