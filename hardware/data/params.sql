-- Cost-model parameters (hardware/cost.c) for the shipped GPUs and systems, origin 'default':
-- each derived from a published measurement in ../shared/reference/hardware.md (sections 1.3,
-- 2.3, 4.4, 4.5) or kernels.csv (the attention rows, tools/fit-attention.py), and `method`
-- says which.  Keys without a row here fall back to the registry's defaults (hardware/params.c;
-- no conv_eff, iter_overhead_s or fabric_leaf_nodes rows: no source has figures for them).
--
-- Per GPU:
--   gemm_eff_<dtype>  achieved fraction of the dense peak on large GEMMs.  cuBLASLt large-shape
--                     figures are preferred over MAMF best-shape maxima (which are optimistic);
--                     the method says which.  Without a measurement: the hardware.md 4.4
--                     defaults (A100/H100 BF16 0.80-0.87, Hopper/Blackwell FP8 0.70-0.76,
--                     MI300X/MI325X BF16 0.5-0.6), low end.  No row for GPUs or dtypes that
--                     neither covers (V100, T4, L4, L40S, A10G, MI250X; TF32/FP32 everywhere).
--   hbm_eff           BabelStream copy/triad over peak; else the 4.5 default (85-90% on
--                     HBM3/3e, ~80% on A100), low end.
--   attn_flash2_*, attn_flash3_*, attn_seq_ramp_*  fused attention kernels' rate over the dense
--                     peak (FlashAttention-2 class; the architecture's fastest: FA3/cuDNN on
--                     Hopper, cuDNN/FA4 on Blackwell) and its ramp with key length.
--   gemm_k_ramp, kernel_launch_us  conventions of the model, not measurements; but the H100's and
--                     H200's GEMM efficiencies, k ramp and hbm_eff are paraplan's own measurements
--                     (calibrate/measured, docs/calibration.md section 6).
-- Per system:
--   coll_eff_intra             ring busbw / scaleup_gbps, large messages (NCCL_ALGO=RING).
--   coll_eff_intra_all_reduce  all_reduce busbw / scaleup_gbps with NCCL's default algorithm:
--                              NVLS (NVLink SHARP) on H100/H200/B200/GB200 reduces inside the
--                              switch, so busbw is not a wire speed and can exceed 1.
--   p2p_eff_intra              copy-engine p2pBandwidthLatencyTest / scaleup_gbps.
--   coll_eff_inter             achieved NCCL busbw per NIC / NIC peak.  2-node runs whose busbw
--                              exceeds the NICs (tree/NVLS) are converted with the hierarchical
--                              formula per-GPU NIC rate = busbw x (k-1)/(n-1) (k nodes, n ranks).
INSERT INTO param(scope, subject, key, value, origin, method, source) VALUES
-- ---- GPUs --------------------------------------------------------------------------------------
-- a100-sxm4-80gb
('gpu', 'a100-sxm4-80gb', 'gemm_eff_bf16', 0.82, 'default', 'large GEMM: FP16 cuBLASLt 253.7 (8192^3) to 256.5 (16384^3) of 312; BF16/FP16 randn 257 at 8192^3; MAMF best shape 271.2 not used', 'Azure AI-benchmarking-guide ND A100 v4; https://www.thonking.ai/p/strangely-matrix-multiplications (hardware.md 4.4)'),
('gpu', 'a100-sxm4-80gb', 'gemm_eff_fp16', 0.82, 'default', 'large GEMM: FP16 cuBLASLt 253.7 (8192^3) to 256.5 (16384^3) of 312, 10k warm-up; randn 257 at 8192^3', 'https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_A100_v4_results.md ; thonking.ai (hardware.md 4.4)'),
('gpu', 'a100-sxm4-80gb', 'hbm_eff', 0.81, 'default', 'BabelStream copy 1.61, triad 1.70 TB/s of 2.039 (79%, 83%): their mean', 'https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_A100_v4_results.md (hardware.md 4.5)'),
-- a100-sxm4-40gb: same compute as the 80GB part
('gpu', 'a100-sxm4-40gb', 'gemm_eff_bf16', 0.82, 'default', 'A100 SXM 80GB large-GEMM figures (cuBLASLt 253.7-256.5 of 312; randn 257) applied: same compute (hardware.md 1.1)', 'Azure AI-benchmarking-guide ND A100 v4; https://www.thonking.ai/p/strangely-matrix-multiplications (hardware.md 4.4)'),
('gpu', 'a100-sxm4-40gb', 'gemm_eff_fp16', 0.82, 'default', 'A100 SXM 80GB large-GEMM figures (cuBLASLt 253.7-256.5 of 312) applied: same compute (hardware.md 1.1)', 'https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_A100_v4_results.md (hardware.md 4.4)'),
('gpu', 'a100-sxm4-40gb', 'hbm_eff', 0.80, 'default', 'no 40GB measurement: hardware.md default for streaming kernels, ~80% of HBM peak on A100', 'hardware.md 4.5'),
-- a100-pcie-80gb
('gpu', 'a100-pcie-80gb', 'gemm_eff_bf16', 0.81, 'default', 'MAMF best-shape maximum BF16 252.9 of 312 (optimistic; no cuBLASLt large-shape figure for A100 PCIe)', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'a100-pcie-80gb', 'gemm_eff_fp16', 0.81, 'default', 'BF16 MAMF maximum 252.9 of 312 applied to FP16 (same dense peak); optimistic', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'a100-pcie-80gb', 'hbm_eff', 0.80, 'default', 'no measurement: hardware.md default for streaming kernels, ~80% of HBM peak on A100', 'hardware.md 4.5'),
-- h100-sxm
('gpu', 'h100-sxm', 'gemm_eff_bf16', 0.791, 'default', 'fit of the GEMM shape model over 530 bf16 cuBLASLt shapes (k_ramp 229, launch 5.57 us; rms 10.5% over 1,590 rows); MAMF best shape 794.5 of 989.4 (0.80) agrees', 'paraplan calibrate on one H100 80GB HBM3, 2026-11-28 (calibrate/measured/dgx-h100-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
('gpu', 'h100-sxm', 'gemm_eff_fp16', 0.791, 'default', 'the bf16 figure (the same tensor path; fp16 measured 0.742, last, on a warm GPU)', 'paraplan calibrate on one H100 80GB HBM3, 2026-11-28 (calibrate/measured/dgx-h100-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
('gpu', 'h100-sxm', 'gemm_eff_fp8', 0.689, 'default', 'fit of the GEMM shape model over 530 fp8 cuBLASLt shapes (k_ramp 229, launch 5.57 us); cuBLASLt 1377 TFLOP/s at 16384^3 (0.70) agrees', 'paraplan calibrate on one H100 80GB HBM3, 2026-11-28 (calibrate/measured/dgx-h100-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
('gpu', 'h100-sxm', 'hbm_eff', 0.904, 'default', 'device-to-device copy 3,027 GB/s (least squares over 5 buffers of 256 MiB-4 GiB) of 3,350; BabelStream 2.90-2.97 TB/s', 'paraplan calibrate on one H100 80GB HBM3, 2026-11-28 (calibrate/measured/dgx-h100-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
-- h100-pcie, h100-nvl: no measurements
('gpu', 'h100-pcie', 'gemm_eff_bf16', 0.80, 'default', 'no measurement: hardware.md default for A100/H100 BF16 large GEMMs (0.80-0.87), low end (power-capped PCIe card)', 'hardware.md 4.4'),
('gpu', 'h100-pcie', 'gemm_eff_fp16', 0.80, 'default', 'no measurement: hardware.md default for A100/H100 BF16 large GEMMs (0.80-0.87), low end, applied to FP16', 'hardware.md 4.4'),
('gpu', 'h100-pcie', 'gemm_eff_fp8', 0.70, 'default', 'no measurement: hardware.md default for Hopper/Blackwell FP8 large GEMMs (0.70-0.76), low end', 'hardware.md 4.4'),
('gpu', 'h100-nvl', 'gemm_eff_bf16', 0.80, 'default', 'no measurement: hardware.md default for A100/H100 BF16 large GEMMs (0.80-0.87), low end', 'hardware.md 4.4'),
('gpu', 'h100-nvl', 'gemm_eff_fp16', 0.80, 'default', 'no measurement: hardware.md default for A100/H100 BF16 large GEMMs (0.80-0.87), low end, applied to FP16', 'hardware.md 4.4'),
('gpu', 'h100-nvl', 'gemm_eff_fp8', 0.70, 'default', 'no measurement: hardware.md default for Hopper/Blackwell FP8 large GEMMs (0.70-0.76), low end', 'hardware.md 4.4'),
('gpu', 'h100-nvl', 'hbm_eff', 0.85, 'default', 'no measurement: hardware.md default for streaming kernels on HBM3/3e (85-90% of peak), low end', 'hardware.md 4.5'),
-- h200-sxm
('gpu', 'h200-sxm', 'gemm_eff_bf16', 0.788, 'default', 'fit of the GEMM shape model over 530 bf16 cuBLASLt shapes (k_ramp 192, launch 5.62 us; rms 11.2% over 2,120 rows)', 'paraplan calibrate on one H200, 2026-11-28 (calibrate/measured/hgx-h200-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
('gpu', 'h200-sxm', 'gemm_eff_fp16', 0.788, 'default', 'the bf16 figure (the same tensor path; fp16 measured 0.748, after the replays, on a warm GPU)', 'paraplan calibrate on one H200, 2026-11-28 (calibrate/measured/hgx-h200-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
('gpu', 'h200-sxm', 'gemm_eff_fp8', 0.698, 'default', 'fit of the GEMM shape model over 530 fp8 cuBLASLt shapes (k_ramp 192, launch 5.62 us); cuBLASLt 1366 TFLOP/s at 16384^3 (0.69) agrees', 'paraplan calibrate on one H200, 2026-11-28 (calibrate/measured/hgx-h200-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
('gpu', 'h200-sxm', 'hbm_eff', 0.893, 'default', 'device-to-device copy 4,287 GB/s (best of 5 buffers of 256 MiB-4 GiB) of 4,800; BabelStream 4.01-4.15 TB/s', 'paraplan calibrate on one H200, 2026-11-28 (calibrate/measured/hgx-h200-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
-- b200
('gpu', 'b200', 'gemm_eff_bf16', 0.78, 'default', 'MAMF best-shape maximum BF16 1745 of 2250 (torch 2.7.1+cu128); no cuBLASLt large-shape figure', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'b200', 'gemm_eff_fp16', 0.78, 'default', 'BF16 MAMF maximum 1745 of 2250 applied to FP16 (same dense peak)', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'b200', 'gemm_eff_fp8', 0.76, 'default', 'MAMF best-shape maximum FP8 3432.5 of 4500 (torch 2.7.1+cu128); no cuBLASLt large-shape figure', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'b200', 'hbm_eff', 0.85, 'default', 'no measurement: hardware.md default for streaming kernels on HBM3/3e (85-90% of peak), low end', 'hardware.md 4.5'),
-- gb200
('gpu', 'gb200', 'gemm_eff_bf16', 0.73, 'default', 'MAMF best-shape maximum BF16 1822 of 2500; no cuBLASLt BF16 figure', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'gb200', 'gemm_eff_fp16', 0.73, 'default', 'BF16 MAMF maximum 1822 of 2500 applied to FP16 (same dense peak)', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'gb200', 'gemm_eff_fp8', 0.58, 'default', 'FP8 cuBLASLt 2907 (16384^3) of 5000 (Azure ND GB200 v6); the MAMF maximum 3615.6 (0.72) is much higher', 'https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_GB200_v6_results.md ; ml-engineering (hardware.md 4.4)'),
('gpu', 'gb200', 'hbm_eff', 0.85, 'default', 'no measurement: hardware.md default for streaming kernels on HBM3/3e (85-90% of peak), low end', 'hardware.md 4.5'),
-- mi300x, mi325x
('gpu', 'mi300x', 'gemm_eff_bf16', 0.51, 'default', 'MAMF BF16 668.4 of 1307.4 (ROCm 6.3, PyTorch TunableOp); MI300X rates moved +300 TFLOP/s from ROCm 6.1 to 6.2', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.1, 4.4)'),
('gpu', 'mi300x', 'gemm_eff_fp16', 0.51, 'default', 'BF16 MAMF 668.4 of 1307.4 applied to FP16 (same dense peak)', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'mi300x', 'gemm_eff_fp8', 0.44, 'default', 'FP8 hipBLASLt 1222.9 (8192^3), 1081.4 (16384^3), 1142.4 (32768^3), 1148.7 (6144x12288^2) of 2614.9', 'kernels.csv: Azure AI-benchmarking-guide ND MI300X v5 (HipBLASLt, ROCm 6.2)'),
('gpu', 'mi300x', 'hbm_eff', 0.85, 'default', 'no measurement: hardware.md default for streaming kernels on HBM3/3e (85-90% of peak), low end', 'hardware.md 4.5'),
('gpu', 'mi325x', 'gemm_eff_bf16', 0.60, 'default', 'MAMF BF16 784.9 of 1307.4 (1000 W)', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'mi325x', 'gemm_eff_fp16', 0.60, 'default', 'BF16 MAMF 784.9 of 1307.4 applied to FP16 (same dense peak)', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'mi325x', 'hbm_eff', 0.85, 'default', 'no measurement: hardware.md default for streaming kernels on HBM3/3e (85-90% of peak), low end', 'hardware.md 4.5'),
-- conventions of the model, the same for every shipped GPU
('gpu', 'v100-sxm2-32gb', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'a100-sxm4-40gb', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'a100-sxm4-80gb', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'a100-pcie-80gb', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'a10g', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 't4', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'l4', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'l40s', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'h100-sxm', 'gemm_k_ramp', 229, 'default', 'fit of the GEMM shape model over 1,590 cuBLASLt shapes (bf16, fp8, fp16; k 128-16384): rms 10.5%', 'paraplan calibrate on one H100 80GB HBM3, 2026-11-28 (calibrate/measured/dgx-h100-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
('gpu', 'h100-pcie', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'h100-nvl', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'h200-sxm', 'gemm_k_ramp', 192, 'default', 'fit of the GEMM shape model over 2,120 cuBLASLt shapes (bf16, fp8, fp16, tf32; k 128-16384): rms 11.2%', 'paraplan calibrate on one H200, 2026-11-28 (calibrate/measured/hgx-h200-1gpu-2026-11-28.json, docs/calibration.md section 6)'),
('gpu', 'b200', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'gb200', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'mi250x-gcd', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'mi300x', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'mi325x', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'v100-sxm2-32gb', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'a100-sxm4-40gb', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'a100-sxm4-80gb', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'a100-pcie-80gb', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'a10g', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 't4', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'l4', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'l40s', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'h100-sxm', 'kernel_launch_us', 3, 'default', 'convention, what a kernel adds in a stream: in a CUDA graph an H100 GEMM took 2.7-2.9 us beyond its compute (h100-launch-2026-11-28.json); 5.57 us timed alone', 'calibrate/measured/dgx-h100-1gpu-2026-11-28.json'),
('gpu', 'h100-pcie', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'h100-nvl', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'h200-sxm', 'kernel_launch_us', 3, 'default', 'convention, what a kernel adds in a stream: in a CUDA graph an H100 GEMM took 2.7-2.9 us beyond its compute (h100-launch-2026-11-28.json); 5.62 us timed alone', 'calibrate/measured/hgx-h200-1gpu-2026-11-28.json'),
('gpu', 'b200', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'gb200', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'mi250x-gcd', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'mi300x', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'mi325x', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
-- ---- systems -----------------------------------------------------------------------------------
-- 8x A100 SXM on NVSwitch (NVLink 3, 300 GB/s)
('system', 'dgx-a100', 'coll_eff_intra', 0.77, 'default', 'ring busbw ~230 of 300 GB/s on 8x A100 NVSwitch at >=1 GB (NVIDIA); 231.6 at 8 GB on ND A100 v4 (NCCL 2.18.5)', 'https://github.com/NVIDIA/nccl-tests/issues/149 ; Azure AI-benchmarking-guide ND A100 v4 (hardware.md 2.3)'),
('system', 'dgx-a100', 'p2p_eff_intra', 0.91, 'default', 'p2pBandwidthLatencyTest (copy engine) 274 of 300 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'dgx-a100', 'coll_eff_inter', 0.96, 'default', '4x DGX A100 all_reduce busbw 191 GB/s at 4 GB of 8x HDR 200 Gb/s = 200 GB/s; NVIDIA quotes 192', 'https://github.com/NVIDIA/deepops/blob/master/docs/slurm-cluster/slurm-perf-cluster.md ; NVIDIA nccl #812 (hardware.md 2.3)'),
('system', 'dgx-a100-40gb', 'coll_eff_intra', 0.77, 'default', 'ring busbw ~230 of 300 GB/s on 8x A100 NVSwitch at >=1 GB (NVIDIA); 231.6 at 8 GB on ND A100 v4 (NCCL 2.18.5)', 'https://github.com/NVIDIA/nccl-tests/issues/149 ; Azure AI-benchmarking-guide ND A100 v4 (hardware.md 2.3)'),
('system', 'dgx-a100-40gb', 'p2p_eff_intra', 0.91, 'default', 'p2pBandwidthLatencyTest (copy engine) 274 of 300 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'dgx-a100-40gb', 'coll_eff_inter', 0.96, 'default', '4x DGX A100 all_reduce busbw 191 GB/s at 4 GB of 8x HDR 200 Gb/s = 200 GB/s; NVIDIA quotes 192', 'https://github.com/NVIDIA/deepops/blob/master/docs/slurm-cluster/slurm-perf-cluster.md ; NVIDIA nccl #812 (hardware.md 2.3)'),
('system', 'azure-nd-a100-v4', 'coll_eff_intra', 0.77, 'default', 'ring busbw 231.6 of 300 GB/s at 8 GB on this system (NCCL 2.18.5); 234.9 at 16 GiB; NVIDIA expects ~230', 'https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_A100_v4_results.md (hardware.md 2.3)'),
('system', 'azure-nd-a100-v4', 'p2p_eff_intra', 0.91, 'default', 'p2pBandwidthLatencyTest (copy engine) 274 of 300 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'azure-nd-a100-v4', 'coll_eff_inter', 0.96, 'default', 'DGX A100 figure for 8x HDR 200G: busbw 191 of 200 GB/s (4 nodes, 4 GB); Azure HDR NICs remembered (M)', 'https://github.com/NVIDIA/deepops/blob/master/docs/slurm-cluster/slurm-perf-cluster.md (hardware.md 2.3)'),
('system', 'aws-p4d', 'coll_eff_intra', 0.77, 'default', 'ring busbw ~230 of 300 GB/s on 8x A100 NVSwitch at >=1 GB (NVIDIA); 231.6 at 8 GB on ND A100 v4 (NCCL 2.18.5)', 'https://github.com/NVIDIA/nccl-tests/issues/149 ; Azure AI-benchmarking-guide ND A100 v4 (hardware.md 2.3)'),
('system', 'aws-p4d', 'p2p_eff_intra', 0.91, 'default', 'p2pBandwidthLatencyTest (copy engine) 274 of 300 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'aws-p4d', 'coll_eff_inter', 0.85, 'default', 'EFA v1: ml-engineering effective 340 of 400 Gb/s for all_reduce; 2x p4de busbw 78.3 > 50 GB/s is a 2-node tree effect, x 1/15 gives 0.84', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md ; aws-samples awsome-distributed-training nccl-tests README'),
('system', 'aws-p4de', 'coll_eff_intra', 0.77, 'default', 'ring busbw ~230 of 300 GB/s on 8x A100 NVSwitch at >=1 GB (NVIDIA); 231.6 at 8 GB on ND A100 v4 (NCCL 2.18.5)', 'https://github.com/NVIDIA/nccl-tests/issues/149 ; Azure AI-benchmarking-guide ND A100 v4 (hardware.md 2.3)'),
('system', 'aws-p4de', 'p2p_eff_intra', 0.91, 'default', 'p2pBandwidthLatencyTest (copy engine) 274 of 300 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'aws-p4de', 'coll_eff_inter', 0.85, 'default', 'EFA v1: ml-engineering effective 340 of 400 Gb/s for all_reduce; 2x p4de busbw 78.3 > 50 GB/s is a 2-node tree effect, x 1/15 gives 0.84', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md ; aws-samples awsome-distributed-training nccl-tests README'),
('system', 'gcp-a2-highgpu-8g', 'coll_eff_intra', 0.77, 'default', 'ring busbw ~230 of 300 GB/s on 8x A100 NVSwitch at >=1 GB (NVIDIA); 231.6 at 8 GB on ND A100 v4 (NCCL 2.18.5)', 'https://github.com/NVIDIA/nccl-tests/issues/149 ; Azure AI-benchmarking-guide ND A100 v4 (hardware.md 2.3)'),
('system', 'gcp-a2-highgpu-8g', 'p2p_eff_intra', 0.91, 'default', 'p2pBandwidthLatencyTest (copy engine) 274 of 300 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
-- 8x H100 SXM on NVSwitch (NVLink 4, 450 GB/s)
('system', 'dgx-h100', 'coll_eff_intra', 0.82, 'default', 'ring busbw (NCCL_ALGO=RING) ~365-370 of 450 GB/s on 8x H100 SXM at 2-4 GB', 'https://github.com/NVIDIA/nccl/issues/1455 ; https://github.com/NVIDIA/nccl-tests/issues/212 (hardware.md 2.3)'),
('system', 'dgx-h100', 'coll_eff_intra_all_reduce', 1.06, 'default', 'NVLS all_reduce busbw 478.9 of 450 at 8 GB (ND H100 v5, NCCL 2.18.5); NVLink SHARP reduces in the switch, so >1 is right', 'https://github.com/NVIDIA/nccl-tests/issues/212 ; Azure AI-benchmarking-guide ND H100 v5 (hardware.md 2.3)'),
('system', 'dgx-h100', 'p2p_eff_intra', 0.84, 'default', 'p2pBandwidthLatencyTest (copy engine) 376 of 450 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'dgx-h100', 'coll_eff_inter', 0.94, 'default', 'NVIDIA: expect 46-48 GB/s ring busbw per NDR 400G NIC (92-96% of 50), ~370-385 GB/s per 8-NIC node', 'https://github.com/NVIDIA/nccl-tests/issues/290 (hardware.md 2.1, 2.3)'),
('system', 'azure-nd-h100-v5', 'coll_eff_intra', 0.82, 'default', 'ring busbw (NCCL_ALGO=RING) ~365-370 of 450 GB/s on 8x H100 SXM at 2-4 GB', 'https://github.com/NVIDIA/nccl/issues/1455 ; https://github.com/NVIDIA/nccl-tests/issues/212 (hardware.md 2.3)'),
('system', 'azure-nd-h100-v5', 'coll_eff_intra_all_reduce', 1.06, 'default', 'NVLS all_reduce busbw 478.9 of 450 at 8 GB on this system (NCCL 2.18.5); NVLink SHARP reduces in the switch, so >1 is right', 'https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure%20Results/ND_H100_v5_results.md (hardware.md 2.3)'),
('system', 'azure-nd-h100-v5', 'p2p_eff_intra', 0.84, 'default', 'p2pBandwidthLatencyTest (copy engine) 376 of 450 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'azure-nd-h100-v5', 'coll_eff_inter', 0.94, 'default', 'NVIDIA: expect 46-48 GB/s ring busbw per NDR 400G NIC (92-96% of 50); Azure NDR NICs remembered (M)', 'https://github.com/NVIDIA/nccl-tests/issues/290 (hardware.md 2.1, 2.3)'),
('system', 'aws-p5', 'coll_eff_intra', 0.82, 'default', 'ring busbw (NCCL_ALGO=RING) ~365-370 of 450 GB/s on 8x H100 SXM at 2-4 GB', 'https://github.com/NVIDIA/nccl/issues/1455 ; https://github.com/NVIDIA/nccl-tests/issues/212 (hardware.md 2.3)'),
('system', 'aws-p5', 'coll_eff_intra_all_reduce', 1.06, 'default', 'NVLS all_reduce busbw 478.9 of 450 at 8 GB on 8x H100 (ND H100 v5); NVLink SHARP reduces in the switch, so >1 is right', 'https://github.com/NVIDIA/nccl-tests/issues/212 ; Azure AI-benchmarking-guide ND H100 v5 (hardware.md 2.3)'),
('system', 'aws-p5', 'p2p_eff_intra', 0.84, 'default', 'p2pBandwidthLatencyTest (copy engine) 376 of 450 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'aws-p5', 'coll_eff_inter', 0.65, 'default', '2x p5 busbw 487 GB/s at 16 GB exceeds the 400 GB/s EFA (2-node tree/NVLS): x (k-1)/(n-1) = 1/15 gives 32.5 of 50 GB/s per GPU', 'https://github.com/aws-samples/awsome-distributed-training/blob/main/micro-benchmarks/nccl-tests/README.md ; ml-engineering (hardware.md 2.3)'),
('system', 'gcp-a3-high', 'coll_eff_intra', 0.82, 'default', 'ring busbw (NCCL_ALGO=RING) ~365-370 of 450 GB/s on 8x H100 SXM at 2-4 GB', 'https://github.com/NVIDIA/nccl/issues/1455 ; https://github.com/NVIDIA/nccl-tests/issues/212 (hardware.md 2.3)'),
('system', 'gcp-a3-high', 'coll_eff_intra_all_reduce', 1.06, 'default', 'NVLS all_reduce busbw 478.9 of 450 at 8 GB on 8x H100 (ND H100 v5); NVLink SHARP reduces in the switch, so >1 is right', 'https://github.com/NVIDIA/nccl-tests/issues/212 ; Azure AI-benchmarking-guide ND H100 v5 (hardware.md 2.3)'),
('system', 'gcp-a3-high', 'p2p_eff_intra', 0.84, 'default', 'p2pBandwidthLatencyTest (copy engine) 376 of 450 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'gcp-a3-mega', 'coll_eff_intra', 0.82, 'default', 'ring busbw (NCCL_ALGO=RING) ~365-370 of 450 GB/s on 8x H100 SXM at 2-4 GB', 'https://github.com/NVIDIA/nccl/issues/1455 ; https://github.com/NVIDIA/nccl-tests/issues/212 (hardware.md 2.3)'),
('system', 'gcp-a3-mega', 'coll_eff_intra_all_reduce', 1.06, 'default', 'NVLS all_reduce busbw 478.9 of 450 at 8 GB on 8x H100 (ND H100 v5); NVLink SHARP reduces in the switch, so >1 is right', 'https://github.com/NVIDIA/nccl-tests/issues/212 ; Azure AI-benchmarking-guide ND H100 v5 (hardware.md 2.3)'),
('system', 'gcp-a3-mega', 'p2p_eff_intra', 0.84, 'default', 'p2pBandwidthLatencyTest (copy engine) 376 of 450 GB/s one direction; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'gcp-a3-mega', 'coll_eff_inter', 0.90, 'default', '2x A3 Mega busbw 338.8 GB/s at 8 GB exceeds the 200 GB/s TCPXO: x (k-1)/(n-1) = 1/15 gives 22.6 of 25 GB/s per GPU', 'https://github.com/lessizzmore/create-a3mega-ztan-fork ; ml-engineering hierarchical formula (hardware.md 2.3)'),
-- 8x H200 on NVSwitch (NVLink 4, 450 GB/s)
('system', 'hgx-h200', 'coll_eff_intra', 0.80, 'default', 'ring busbw on 8x H200 at 16 GiB: all_gather 361.4, reduce_scatter 362.9 of 450 GB/s (all_reduce ring 367.6)', 'Azure AI-benchmarking-guide ND H200 v5 results; ml-engineering network/README.md#sharp (hardware.md 2.3)'),
('system', 'hgx-h200', 'coll_eff_intra_all_reduce', 1.05, 'default', 'NVLS all_reduce busbw 473 of 450 on 8x H200 at 8 GiB (480.0 on ND H200 v5); in-switch reduction, so >1 is right', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md#sharp ; Azure ND H200 v5 (hardware.md 2.3)'),
('system', 'hgx-h200', 'p2p_eff_intra', 0.84, 'default', 'H100 p2pBandwidthLatencyTest 376 of 450 GB/s applied (same NVLink 4); NCCL send/recv gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'hgx-h200', 'coll_eff_inter', 0.94, 'default', 'NVIDIA: expect 46-48 GB/s ring busbw per NDR 400G NIC (92-96% of 50) on H100/H200 nodes', 'https://github.com/NVIDIA/nccl-tests/issues/290 (hardware.md 2.1, 2.3)'),
('system', 'azure-nd-h200-v5', 'coll_eff_intra', 0.80, 'default', 'ring busbw on this system at 16 GiB: all_gather 361.4, reduce_scatter 362.9 of 450 GB/s (all_reduce ring 367.6)', 'Azure AI-benchmarking-guide ND H200 v5 results (hardware.md 2.3)'),
('system', 'azure-nd-h200-v5', 'coll_eff_intra_all_reduce', 1.05, 'default', 'NVLS all_reduce busbw 473 of 450 on 8x H200 at 8 GiB (480.0 on this system); in-switch reduction, so >1 is right', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md#sharp ; Azure ND H200 v5 (hardware.md 2.3)'),
('system', 'azure-nd-h200-v5', 'p2p_eff_intra', 0.84, 'default', 'H100 p2pBandwidthLatencyTest 376 of 450 GB/s applied (same NVLink 4); NCCL send/recv gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'azure-nd-h200-v5', 'coll_eff_inter', 0.94, 'default', 'NVIDIA: expect 46-48 GB/s ring busbw per NDR 400G NIC (92-96% of 50); Azure NDR NICs remembered (M)', 'https://github.com/NVIDIA/nccl-tests/issues/290 (hardware.md 2.1, 2.3)'),
('system', 'aws-p5e', 'coll_eff_intra', 0.80, 'default', 'ring busbw on 8x H200 at 16 GiB: all_gather 361.4, reduce_scatter 362.9 of 450 GB/s (all_reduce ring 367.6)', 'Azure AI-benchmarking-guide ND H200 v5 results; ml-engineering network/README.md#sharp (hardware.md 2.3)'),
('system', 'aws-p5e', 'coll_eff_intra_all_reduce', 1.05, 'default', 'NVLS all_reduce busbw 473 of 450 on 8x H200 at 8 GiB (480.0 on ND H200 v5); in-switch reduction, so >1 is right', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md#sharp ; Azure ND H200 v5 (hardware.md 2.3)'),
('system', 'aws-p5e', 'p2p_eff_intra', 0.84, 'default', 'H100 p2pBandwidthLatencyTest 376 of 450 GB/s applied (same NVLink 4); NCCL send/recv gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'aws-p5e', 'coll_eff_inter', 0.65, 'default', 'p5 EFA v2 figure (same 32x 100G EFA): 2x p5 busbw 487 GB/s x 1/15 = 32.5 of 50 GB/s per GPU', 'https://github.com/aws-samples/awsome-distributed-training/blob/main/micro-benchmarks/nccl-tests/README.md (hardware.md 2.3)'),
('system', 'aws-p5en', 'coll_eff_intra', 0.80, 'default', 'ring busbw on 8x H200 at 16 GiB: all_gather 361.4, reduce_scatter 362.9 of 450 GB/s (all_reduce ring 367.6)', 'Azure AI-benchmarking-guide ND H200 v5 results; ml-engineering network/README.md#sharp (hardware.md 2.3)'),
('system', 'aws-p5en', 'coll_eff_intra_all_reduce', 1.05, 'default', 'NVLS all_reduce busbw 473 of 450 on 8x H200 at 8 GiB (480.0 on ND H200 v5); in-switch reduction, so >1 is right', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md#sharp ; Azure ND H200 v5 (hardware.md 2.3)'),
('system', 'aws-p5en', 'p2p_eff_intra', 0.84, 'default', 'H100 p2pBandwidthLatencyTest 376 of 450 GB/s applied (same NVLink 4); NCCL send/recv gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'gcp-a3-ultra', 'coll_eff_intra', 0.80, 'default', 'ring busbw on 8x H200 at 16 GiB: all_gather 361.4, reduce_scatter 362.9 of 450 GB/s (all_reduce ring 367.6)', 'Azure AI-benchmarking-guide ND H200 v5 results; ml-engineering network/README.md#sharp (hardware.md 2.3)'),
('system', 'gcp-a3-ultra', 'coll_eff_intra_all_reduce', 1.05, 'default', 'NVLS all_reduce busbw 473 of 450 on 8x H200 at 8 GiB (480.0 on ND H200 v5); in-switch reduction, so >1 is right', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md#sharp ; Azure ND H200 v5 (hardware.md 2.3)'),
('system', 'gcp-a3-ultra', 'p2p_eff_intra', 0.84, 'default', 'H100 p2pBandwidthLatencyTest 376 of 450 GB/s applied (same NVLink 4); NCCL send/recv gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'gcp-a3-ultra', 'coll_eff_inter', 0.82, 'default', '8x H100 over 8x 400G RoCE: busbw 330 of 400 GB/s at 1-2 nodes with NVLS off (~320 at 4 nodes); H100 figure applied', 'https://github.com/NVIDIA/nccl/issues/1221 (hardware.md 2.3)'),
-- 8x B200 on NVSwitch (NVLink 5, 900 GB/s)
('system', 'dgx-b200', 'coll_eff_intra', 0.76, 'default', 'ring all_reduce busbw 682.2 of 900 GB/s on 8x B200 (p6-b200) at 8 GiB, NCCL 2.27.7', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 2.3)'),
('system', 'dgx-b200', 'coll_eff_intra_all_reduce', 0.93, 'default', 'NVLS all_reduce busbw 838.0 of 900 GB/s on 8x B200 at 8 GiB (NVLS picked from 6 GPUs); in-switch reduction', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 2.3)'),
('system', 'dgx-b200', 'p2p_eff_intra', 0.83, 'default', 'GB200 p2pBandwidthLatencyTest 746 of 900 GB/s applied (same NVLink 5); NCCL send/recv gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'dgx-b200', 'coll_eff_inter', 0.94, 'default', 'NVIDIA expectation for H100/H200 nodes applied: 46-48 GB/s ring busbw per NDR 400G NIC (92-96% of 50)', 'https://github.com/NVIDIA/nccl-tests/issues/290 (hardware.md 2.1, 2.3)'),
('system', 'aws-p6-b200', 'coll_eff_intra', 0.76, 'default', 'ring all_reduce busbw 682.2 of 900 GB/s on this system (8x B200) at 8 GiB, NCCL 2.27.7', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 2.3)'),
('system', 'aws-p6-b200', 'coll_eff_intra_all_reduce', 0.93, 'default', 'NVLS all_reduce busbw 838.0 of 900 GB/s on this system at 8 GiB (NVLS picked from 6 GPUs); in-switch reduction', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 2.3)'),
('system', 'aws-p6-b200', 'p2p_eff_intra', 0.83, 'default', 'GB200 p2pBandwidthLatencyTest 746 of 900 GB/s applied (same NVLink 5); NCCL send/recv gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'aws-p6-b200', 'coll_eff_inter', 0.74, 'default', '4x p6-b200 all_reduce busbw 381.8 GB/s at 16 GiB (NCCL 2.27.7): ~37 of 50 GB/s per 400G EFA v4 NIC', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 2.3)'),
-- GB200 NVL72 (NVLink 5, 72-GPU domain)
('system', 'gb200-nvl72', 'coll_eff_intra', 0.76, 'default', 'ring all_reduce busbw 679.6 of 900 GB/s on one 4x GB200 host (ND GB200 v6, 8 GB); ~680 non-SHARP on NVL72 (GTC25 slide, U)', 'https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_GB200_v6_results.md ; ml-engineering (hardware.md 2.3)'),
('system', 'gb200-nvl72', 'coll_eff_intra_all_reduce', 0.94, 'default', 'NVLS ~850 of 900 GB/s across NVL72, read off a GTC25 slide (unconfirmed, U); in-switch reduction', 'ml-engineering citing GTC25 S72583 https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 2.3)'),
('system', 'gb200-nvl72', 'p2p_eff_intra', 0.83, 'default', 'p2pBandwidthLatencyTest (copy engine) 746 of 900 GB/s on GB200; NCCL send/recv (SM-driven) gets less', 'https://github.com/stas00/ml-engineering/blob/master/network/README.md (hardware.md 1.3)'),
('system', 'gb200-nvl72', 'coll_eff_inter', 0.94, 'default', 'NVIDIA expectation for H100/H200 nodes applied: 46-48 GB/s ring busbw per NDR 400G NIC (92-96% of 50)', 'https://github.com/NVIDIA/nccl-tests/issues/290 (hardware.md 2.1, 2.3)'),
-- MI300X: peer-to-peer is one xGMI link
('system', 'mi300x-8', 'p2p_eff_intra', 0.143, 'default', 'topology, not a measurement: a peer-to-peer stream uses one xGMI link, 64 of the 448 GB/s of 7 links', 'hardware.md 1.3 (AMD MI300X: 128 GB/s peak per link both directions)');

-- Fused attention: achieved fraction of the dense BF16 peak at long sequences, per generation
-- (attn_flash2_*: FlashAttention-2 class; attn_flash3_*: FA3/cuDNN on Hopper, cuDNN/FA4 on
-- Blackwell), and the sequence ramp rate x S/(S + ramp).  The H100 curve is fitted to the
-- measured FlashAttention-3 kernel times of kernels.csv by tools/fit-attention.py; the others
-- are published kernel rates with their sources (docs/profiles.md).
INSERT INTO param(scope, subject, key, value, origin, method, source) VALUES
('gpu', 'a100-sxm4-80gb', 'attn_flash2_fwd', 0.72, 'default', 'FA2 forward up to ~73% of the A100 dense peak (long sequences, head dim 128)', 'FA2 paper (Dao, arXiv 2307.08691): FlashAttention-2 reaches 50-73% of the A100 peak forward'),
('gpu', 'a100-sxm4-80gb', 'attn_flash2_bwd', 0.60, 'default', 'FA2 backward about 60% of the A100 peak (below the forward: more non-matmul work)', 'FA2 paper (Dao, arXiv 2307.08691): FlashAttention-2 reaches 50-73% of the A100 peak forward'),
('gpu', 'a100-sxm4-40gb', 'attn_flash2_fwd', 0.72, 'default', 'FA2 forward up to ~73% of the A100 dense peak (long sequences, head dim 128)', 'FA2 paper (Dao, arXiv 2307.08691): FlashAttention-2 reaches 50-73% of the A100 peak forward'),
('gpu', 'a100-sxm4-40gb', 'attn_flash2_bwd', 0.60, 'default', 'FA2 backward about 60% of the A100 peak (below the forward: more non-matmul work)', 'FA2 paper (Dao, arXiv 2307.08691): FlashAttention-2 reaches 50-73% of the A100 peak forward'),
('gpu', 'a100-pcie-80gb', 'attn_flash2_fwd', 0.72, 'default', 'FA2 forward up to ~73% of the A100 dense peak (long sequences, head dim 128)', 'FA2 paper (Dao, arXiv 2307.08691): FlashAttention-2 reaches 50-73% of the A100 peak forward'),
('gpu', 'a100-pcie-80gb', 'attn_flash2_bwd', 0.60, 'default', 'FA2 backward about 60% of the A100 peak (below the forward: more non-matmul work)', 'FA2 paper (Dao, arXiv 2307.08691): FlashAttention-2 reaches 50-73% of the A100 peak forward'),
('gpu', 'h100-sxm', 'attn_flash3_fwd', 0.839, 'default', 'fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-sxm', 'attn_seq_ramp_fwd', 1200, 'default', 'fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-sxm', 'attn_flash3_bwd', 0.775, 'default', 'fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-sxm', 'attn_seq_ramp_bwd', 3140, 'default', 'fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h200-sxm', 'attn_flash3_fwd', 0.839, 'default', 'H100 SXM rows (same SMs and clocks, hardware.md 1.1): fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h200-sxm', 'attn_seq_ramp_fwd', 1200, 'default', 'H100 SXM rows (same SMs and clocks, hardware.md 1.1): fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h200-sxm', 'attn_flash3_bwd', 0.775, 'default', 'H100 SXM rows (same SMs and clocks, hardware.md 1.1): fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h200-sxm', 'attn_seq_ramp_bwd', 3140, 'default', 'H100 SXM rows (same SMs and clocks, hardware.md 1.1): fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-sxm', 'attn_flash2_fwd', 0.33, 'default', 'FlashAttention-2 class on Hopper: PyTorch SDPA flash 288-304 TFLOP/s of 989 (D=128); FA3 paper: FA2 about 35%', 'pytorch/benchmark PR #2296; FA3 paper arXiv 2407.08608 (docs/profiles.md)'),
('gpu', 'h100-sxm', 'attn_flash2_bwd', 0.28, 'default', 'FlashAttention-2 class on Hopper, backward: the forward x 0.85 (FA2 backward/forward on A100)', 'FA3 paper arXiv 2407.08608; FA2 paper arXiv 2307.08691'),
('gpu', 'h200-sxm', 'attn_flash2_fwd', 0.33, 'default', 'FlashAttention-2 class on Hopper: PyTorch SDPA flash 288-304 TFLOP/s of 989 (D=128); FA3 paper: FA2 about 35%', 'pytorch/benchmark PR #2296; FA3 paper arXiv 2407.08608 (docs/profiles.md)'),
('gpu', 'h200-sxm', 'attn_flash2_bwd', 0.28, 'default', 'FlashAttention-2 class on Hopper, backward: the forward x 0.85 (FA2 backward/forward on A100)', 'FA3 paper arXiv 2407.08608; FA2 paper arXiv 2307.08691'),
('gpu', 'h100-pcie', 'attn_flash2_fwd', 0.33, 'default', 'FlashAttention-2 class on Hopper: PyTorch SDPA flash 288-304 TFLOP/s of 989 (D=128); FA3 paper: FA2 about 35%', 'pytorch/benchmark PR #2296; FA3 paper arXiv 2407.08608 (docs/profiles.md)'),
('gpu', 'h100-pcie', 'attn_flash2_bwd', 0.28, 'default', 'FlashAttention-2 class on Hopper, backward: the forward x 0.85 (FA2 backward/forward on A100)', 'FA3 paper arXiv 2407.08608; FA2 paper arXiv 2307.08691'),
('gpu', 'h100-nvl', 'attn_flash2_fwd', 0.33, 'default', 'FlashAttention-2 class on Hopper: PyTorch SDPA flash 288-304 TFLOP/s of 989 (D=128); FA3 paper: FA2 about 35%', 'pytorch/benchmark PR #2296; FA3 paper arXiv 2407.08608 (docs/profiles.md)'),
('gpu', 'h100-nvl', 'attn_flash2_bwd', 0.28, 'default', 'FlashAttention-2 class on Hopper, backward: the forward x 0.85 (FA2 backward/forward on A100)', 'FA3 paper arXiv 2407.08608; FA2 paper arXiv 2307.08691'),
('gpu', 'h100-pcie', 'attn_flash3_fwd', 0.839, 'default', 'H100 SXM rows applied (same SMs): fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-pcie', 'attn_seq_ramp_fwd', 1200, 'default', 'H100 SXM rows applied (same SMs): fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-pcie', 'attn_flash3_bwd', 0.775, 'default', 'H100 SXM rows applied (same SMs): fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-pcie', 'attn_seq_ramp_bwd', 3140, 'default', 'H100 SXM rows applied (same SMs): fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-nvl', 'attn_flash3_fwd', 0.839, 'default', 'H100 SXM rows applied (same SMs): fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-nvl', 'attn_seq_ramp_fwd', 1200, 'default', 'H100 SXM rows applied (same SMs): fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-nvl', 'attn_flash3_bwd', 0.775, 'default', 'H100 SXM rows applied (same SMs): fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'h100-nvl', 'attn_seq_ramp_bwd', 3140, 'default', 'H100 SXM rows applied (same SMs): fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'b200', 'attn_flash3_fwd', 0.72, 'default', 'FA4 causal D=128 S=8192 forward 1418 of 2250 TFLOP/s = 0.63 at 8K, x (8192 + 1200)/8192 for the H100 ramp', 'Dao-AILab/flash-attention PR #2280 (B200; docs/profiles.md)'),
('gpu', 'b200', 'attn_flash3_bwd', 0.74, 'default', 'FA4 causal D=128 S=8192 backward 1209 of 2250 TFLOP/s = 0.54 at 8K, x (8192 + 3140)/8192 for the H100 ramp', 'Dao-AILab/flash-attention PR #2280 (B200; docs/profiles.md)'),
('gpu', 'b200', 'attn_seq_ramp_fwd', 1200, 'default', 'H100 FlashAttention-3 ramp applied (tools/fit-attention.py)', 'kernels.csv FA3 rows'),
('gpu', 'b200', 'attn_seq_ramp_bwd', 3140, 'default', 'H100 FlashAttention-3 ramp applied (tools/fit-attention.py)', 'kernels.csv FA3 rows'),
('gpu', 'b200', 'attn_flash2_fwd', 0.17, 'default', 'flash-attn 2.7.4 on B200 (no tcgen05): 308-381 TFLOP/s forward at D=64 of 2250', 'Dao-AILab/flash-attention issue #1589 (docs/profiles.md)'),
('gpu', 'b200', 'attn_flash2_bwd', 0.14, 'default', 'flash-attn 2.7.4 on B200: 243-334 TFLOP/s backward at D=64 of 2250', 'Dao-AILab/flash-attention issue #1589 (docs/profiles.md)'),
('gpu', 'gb200', 'attn_flash3_fwd', 0.72, 'default', 'FA4 causal D=128 S=8192 forward 1418 of 2250 TFLOP/s = 0.63 at 8K, x (8192 + 1200)/8192 for the H100 ramp', 'Dao-AILab/flash-attention PR #2280 (B200; docs/profiles.md)'),
('gpu', 'gb200', 'attn_flash3_bwd', 0.74, 'default', 'FA4 causal D=128 S=8192 backward 1209 of 2250 TFLOP/s = 0.54 at 8K, x (8192 + 3140)/8192 for the H100 ramp', 'Dao-AILab/flash-attention PR #2280 (B200; docs/profiles.md)'),
('gpu', 'gb200', 'attn_seq_ramp_fwd', 1200, 'default', 'H100 FlashAttention-3 ramp applied (tools/fit-attention.py)', 'kernels.csv FA3 rows'),
('gpu', 'gb200', 'attn_seq_ramp_bwd', 3140, 'default', 'H100 FlashAttention-3 ramp applied (tools/fit-attention.py)', 'kernels.csv FA3 rows'),
('gpu', 'gb200', 'attn_flash2_fwd', 0.17, 'default', 'flash-attn 2.7.4 on B200 (no tcgen05): 308-381 TFLOP/s forward at D=64 of 2250', 'Dao-AILab/flash-attention issue #1589 (docs/profiles.md)'),
('gpu', 'gb200', 'attn_flash2_bwd', 0.14, 'default', 'flash-attn 2.7.4 on B200: 243-334 TFLOP/s backward at D=64 of 2250', 'Dao-AILab/flash-attention issue #1589 (docs/profiles.md)'),
('gpu', 'mi300x', 'attn_flash2_fwd', 0.30, 'default', 'CK flash attention about 350-450 TFLOP/s forward of 1307 (low confidence: MI325X FlyDSL comparison)', 'ROCm/FlyDSL PR #225 (docs/profiles.md)'),
('gpu', 'mi300x', 'attn_flash2_bwd', 0.24, 'default', 'CK flash attention backward: the forward x 0.8 (no measurement)', 'ROCm/FlyDSL PR #225 (docs/profiles.md)'),
('gpu', 'mi325x', 'attn_flash2_fwd', 0.30, 'default', 'CK flash attention about 350-450 TFLOP/s forward of 1307 (low confidence: MI325X FlyDSL comparison)', 'ROCm/FlyDSL PR #225 (docs/profiles.md)'),
('gpu', 'mi325x', 'attn_flash2_bwd', 0.24, 'default', 'CK flash attention backward: the forward x 0.8 (no measurement)', 'ROCm/FlyDSL PR #225 (docs/profiles.md)'),
-- ---- GPUs added for the 2024-2025 serving rows, and the 4-bit rates ----------------------------
-- gh200: the H100's Hopper GPU with HBM3e (gpus.sql)
('gpu', 'gh200', 'gemm_eff_bf16', 0.84, 'default', 'MAMF best-shape maximum BF16 828.6 of 989.4 (GH200 at 900 W)', 'ml-engineering https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md (hardware.md 4.4)'),
('gpu', 'gh200', 'gemm_eff_fp16', 0.84, 'default', 'BF16 MAMF maximum 828.6 of 989.4 applied to FP16 (same dense peak)', 'ml-engineering (hardware.md 4.4)'),
('gpu', 'gh200', 'gemm_eff_fp8', 0.70, 'default', 'the H100 SXM cuBLASLt large-shape FP8 figure (1377 of 1979, same GPU); the GH200 MAMF maximum 1535 (0.78) is a best shape', 'Azure AI-benchmarking-guide ND H100 v5; ml-engineering (hardware.md 4.4)'),
('gpu', 'gh200', 'hbm_eff', 0.85, 'default', 'no measurement: hardware.md default for streaming kernels on HBM3/3e (85-90% of peak), low end', 'hardware.md 4.5'),
('gpu', 'gh200', 'gemm_k_ramp', 128, 'default', 'convention: tile prologue/epilogue charged as 128 extra k-steps; hardware.md has no per-k measurements', 'hardware/cost.c'),
('gpu', 'gh200', 'kernel_launch_us', 3, 'default', 'convention: a few microseconds per kernel launch; not a published measurement', 'hardware/cost.c'),
('gpu', 'gh200', 'attn_flash3_fwd', 0.839, 'default', 'H100 SXM rows (the same Hopper GPU): fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'gh200', 'attn_seq_ramp_fwd', 1200, 'default', 'H100 SXM rows (the same Hopper GPU): fit of rate = eff x peak x S/(S + ramp) to FA3 fwd TFLOP/s by S (1024 364, 2048 560, 4096 667, 8192 685)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'gh200', 'attn_flash3_bwd', 0.775, 'default', 'H100 SXM rows (the same Hopper GPU): fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'gh200', 'attn_seq_ramp_bwd', 3140, 'default', 'H100 SXM rows (the same Hopper GPU): fit of rate = eff x peak x S/(S + ramp) to FA3 bwd TFLOP/s by S (1024 182, 2048 316, 4096 444, 8192 539)', 'kernels.csv: meta-pytorch/tritonbench PR #1267 (H100 BF16 FA3 causal, B=4 H=48 D=128, S=1K-8K)'),
('gpu', 'gh200', 'attn_flash2_fwd', 0.33, 'default', 'H100 SXM figure (the same Hopper GPU): FlashAttention-2 class on Hopper: PyTorch SDPA flash 288-304 TFLOP/s of 989 (D=128); FA3 paper: FA2 about 35%', 'pytorch/benchmark PR #2296; FA3 paper arXiv 2407.08608 (docs/profiles.md)'),
('gpu', 'gh200', 'attn_flash2_bwd', 0.28, 'default', 'H100 SXM figure (the same Hopper GPU): FlashAttention-2 class on Hopper, backward: the forward x 0.85 (FA2 backward/forward on A100)', 'FA3 paper arXiv 2407.08608; FA2 paper arXiv 2307.08691'),
-- mi325x: the MI300X silicon with HBM3E: its measured FP8 rate applies
('gpu', 'mi325x', 'gemm_eff_fp8', 0.44, 'default', 'MI300X FP8 hipBLASLt 1081-1223 of 2614.9 (kernels.csv) applied: the same CDNA3 silicon and clock', 'kernels.csv: Azure AI-benchmarking-guide ND MI300X v5 (hardware.md 1.1)'),
-- Blackwell FP4 (NVFP4/MXFP4): dense peaks and the one measured FP4 GEMM rate
('gpu', 'b200', 'fp4_tflops', 9000, 'default', 'FP4 dense 9000 TFLOP/s per B200 (HGX B200; 18 PFLOP/s is the sparse figure)', 'NVIDIA HGX B200 (hardware.md 1.1)'),
('gpu', 'gb200', 'fp4_tflops', 10000, 'default', 'FP4 dense 10000 TFLOP/s per GPU of the GB200 NVL72', 'NVIDIA GB200 NVL72 (hardware.md 1.1)'),
('gpu', 'gb200', 'gemm_eff_fp4', 0.76, 'default', 'FP4 cuBLASLt 7628 of 10000 TFLOP/s (Azure ND GB200 v6)', 'Azure AI-benchmarking-guide ND GB200 v6 results (hardware.md 4.4)'),
('gpu', 'b200', 'gemm_eff_fp4', 0.76, 'default', 'no B200 FP4 figure: the GB200 cuBLASLt fraction 7628 of 10000 applied (the same Blackwell GPU)', 'Azure AI-benchmarking-guide ND GB200 v6 results (hardware.md 4.4)'),
-- systems
('system', 'mi325x-8', 'p2p_eff_intra', 0.143, 'default', 'topology, not a measurement: a peer-to-peer stream uses one xGMI link, 64 of the 448 GB/s of 7 links', 'hardware.md 1.3 (as mi300x-8)');
