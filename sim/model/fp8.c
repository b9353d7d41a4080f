/* fp8.c - what each FP8 recipe stores and moves per element: the one
 * table the memory model, the workload's casts and the estimator read.
 *
 * Transformer Engine keeps every FP8 GEMM operand in two layouts (the
 * GEMM of the forward takes one, the input- or weight-gradient GEMM the
 * other: a transpose on Hopper, a columnwise quantization for the block
 * scales), each with its scales:
 *   delayed     one fp32 scale per tensor, from the amax history
 *               (DelayedScaling): 1 byte per element;
 *   tensorwise  one fp32 scale per tensor from the tensor's own amax
 *               (Float8CurrentScaling): 1 byte, and the amax pass reads
 *               the tensor once more before the cast;
 *   blockwise   one fp32 scale per 1x128 block of an activation or
 *               gradient and per 128x128 block of a weight
 *               (Float8BlockScaling, DeepSeek-V3 section 3.3):
 *               1 + 4/128 and 1 + 4/16384 bytes;
 *   mxfp8       one E8M0 (1-byte) scale per 32 elements along the GEMM's
 *               reduction (MXFP8BlockScaling, OCP MX v1.0): 1 + 1/32.
 * Sources: Transformer Engine's recipe documentation (low-precision
 * training: FP8 current, delayed and blockwise scaling, MXFP8) and its
 * support matrix (per-tensor FP8 from compute capability 8.9, block
 * scaling on Hopper and Blackwell, MXFP8 on data-centre Blackwell only). */
#include "internal.h"

/* ORDER CFG_FP8_RECIPE */
static const mdl_fp8_recipe recipes[CFG_NFP8_RECIPES] = {
    [CFG_FP8_DELAYED] = {.act_bytes = 1.0, .weight_bytes = 1.0, .layouts = 2, .amax_pass = false},
    [CFG_FP8_TENSORWISE] = {.act_bytes = 1.0, .weight_bytes = 1.0, .layouts = 2, .amax_pass = true},
    [CFG_FP8_BLOCKWISE] = {.act_bytes = 1.0 + 4.0 / 128, .weight_bytes = 1.0 + 4.0 / (128 * 128), .layouts = 2,
                           .amax_pass = false},
    [CFG_FP8_MXFP8] = {.act_bytes = 1.0 + 1.0 / 32, .weight_bytes = 1.0 + 1.0 / 32, .layouts = 2,
                       .amax_pass = false},
};

const mdl_fp8_recipe *mdl_fp8_recipe_of(cfg_fp8_recipe r)
{
    return &recipes[(unsigned)r < CFG_NFP8_RECIPES ? r : CFG_FP8_DELAYED];
}

double mdl_saved_gemm_input_bytes(const cfg_model *m, const cfg_strategy *s)
{
    return s->fp8 ? mdl_fp8_recipe_of(s->fp8_recipe)->act_bytes : mdl_dtype_bytes(m);
}

double mdl_fp8_cast_bytes(const cfg_strategy *s, double dtype_bytes)
{
    const mdl_fp8_recipe *r = mdl_fp8_recipe_of(s->fp8_recipe);
    return dtype_bytes * (r->amax_pass ? 2.0 : 1.0) + r->layouts * r->act_bytes;
}
