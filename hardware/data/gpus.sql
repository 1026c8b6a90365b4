-- GPUs: datasheet figures, one row per device as the driver sees it (so one MI250X GCD, one
-- GB200 GPU).  Facts from the project reference ../shared/reference/hardware.md sections 0-1
-- (NVIDIA/AMD datasheets, whitepapers and tuning guides); nothing here was measured by us.
--
-- Conventions:
--   * TFLOP/s and TOP/s are DENSE (no 2:4 sparsity).  NULL = the dtype has no tensor path
--     (bf16 on V100/T4, fp8 on A100, ...) or no figure was found.
--   * fp64_tflops is the FP64 tensor (matrix) peak where the GPU has one, else the vector peak.
--     fp32_tflops is the non-tensor FP32 peak.
--   * memory_bytes is the driver-reported total (nvidia-smi memory.total, MiB x 2^20) where
--     hardware.md gives it, else the datasheet label in GB taken as GiB (label x 2^30); a
--     figure_source row says which for every GPU.
--   * hbm_gbps is decimal GB/s (1e9 B/s).  l2_bytes: vendor "MB" taken as MiB.
--   * boost_mhz is the clock the tensor peak is quoted at where known (H100 SXM: 1830 MHz,
--     not the 1980 MHz max boost), else the listed boost/max clock.
--   * tensor_units and fp16_flops_per_clock_unit only where hardware.md 1.1 derives the peak
--     from them (A100, H100 SXM, MI300X, MI250X): boost_mhz x units x FLOPs/clock = fp16 peak.
--   * The row's source is its main datasheet.  Figures that hardware.md marks (M) (remembered
--     datasheet value) or (U) (unconfirmed/derived), or that come from another source, have a
--     figure_source row: confidence 'medium' for (M), 'low' for (U), 'high' for a confirmed
--     figure from another source.
INSERT INTO gpu(name, vendor, arch, memory_bytes, hbm_gbps, l2_bytes, sms, boost_mhz, tdp_w,
  fp64_tflops, fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops, int8_tops, int4_tops,
  tensor_units, fp16_flops_per_clock_unit, source) VALUES
-- NVIDIA Volta
('v100-sxm2-32gb', 'nvidia', 'volta', 34359738368, 900, 6291456, 80, 1530, 300,
  7.8, 15.7, NULL, 125, NULL, NULL, 62.8, NULL, NULL, NULL,
  'NVIDIA V100 datasheet https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf'),
-- NVIDIA Ampere
('a100-sxm4-40gb', 'nvidia', 'ampere', 42949672960, 1555, 41943040, 108, 1410, 400,
  19.5, 19.5, 156, 312, 312, NULL, 624, NULL, 432, 512,
  'NVIDIA A100 datasheet https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf ; L2: https://docs.nvidia.com/cuda/ampere-tuning-guide/index.html'),
('a100-sxm4-80gb', 'nvidia', 'ampere', 85899345920, 2039, 41943040, 108, 1410, 400,
  19.5, 19.5, 156, 312, 312, NULL, 624, NULL, 432, 512,
  'NVIDIA A100 datasheet https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf ; L2: https://docs.nvidia.com/cuda/ampere-tuning-guide/index.html'),
('a100-pcie-80gb', 'nvidia', 'ampere', 85899345920, 1935, 41943040, 108, 1410, 300,
  19.5, 19.5, 156, 312, 312, NULL, 624, NULL, 432, 512,
  'NVIDIA A100 datasheet https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (same peaks as SXM, but capped at 300 W)'),
('a10g', 'nvidia', 'ampere', 25769803776, 600, 6291456, 80, 1710, 300,
  0.5, 35, 35, 70, 70, NULL, 140, NULL, NULL, NULL,
  'AWS G5 instances https://aws.amazon.com/ec2/instance-types/g5/ (NVIDIA publishes no A10G datasheet); rates: Baseten https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/'),
-- NVIDIA Turing and Ada (PCIe inference cards)
('t4', 'nvidia', 'turing', 17179869184, 320, 4194304, 40, 1590, 70,
  0.25, 8.1, NULL, 65, NULL, NULL, 130, 260, NULL, NULL,
  'NVIDIA T4 datasheet https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf'),
('l4', 'nvidia', 'ada', 25769803776, 300, 50331648, 58, 2040, 72,
  0.47, 30.3, 60, 121, 121, 242.5, 242.5, NULL, NULL, NULL,
  'NVIDIA L4 https://www.nvidia.com/en-us/data-center/l4/ (datasheet prints sparse rates; halved here)'),
('l40s', 'nvidia', 'ada', 51539607552, 864, 100663296, 142, 2520, 350,
  1.4, 91.6, 183, 362, 362, 733, 733, NULL, NULL, NULL,
  'NVIDIA L40S https://www.nvidia.com/en-us/data-center/l40s/'),
-- NVIDIA Hopper
('h100-sxm', 'nvidia', 'hopper', 85520809984, 3350, 52428800, 132, 1830, 700,
  66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, NULL, 528, 1024,
  'NVIDIA H100 datasheet https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet ; L2: https://docs.nvidia.com/cuda/hopper-tuning-guide/index.html'),
('h100-pcie', 'nvidia', 'hopper', 85899345920, 2000, 52428800, 114, 1755, 350,
  51, 51, 378, 756, 756, 1513, 1513, NULL, NULL, NULL,
  'NVIDIA H100 datasheet https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet ; H100 PCIe product brief PB-11133-001'),
('h100-nvl', 'nvidia', 'hopper', 100931731456, 3900, 52428800, 132, 1785, 400,
  60, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5, NULL, NULL, NULL,
  'NVIDIA H100 NVL, per-GPU datasheet (not the 2023 two-GPU NVL sheet) https://www.nvidia.com/en-us/data-center/h100/'),
('h200-sxm', 'nvidia', 'hopper', 150754820096, 4800, 52428800, 132, 1830, 700,
  67, 67, 494.5, 989, 989, 1979, 1979, NULL, NULL, NULL,
  'NVIDIA H200 https://www.nvidia.com/en-us/data-center/h200/ ; L2: https://docs.nvidia.com/cuda/hopper-tuning-guide/index.html'),
-- NVIDIA Blackwell
('b200', 'nvidia', 'blackwell', 192265846784, 8000, 132120576, 148, 1965, 1000,
  37, 80, 1125, 2250, 2250, 4500, 4500, NULL, NULL, NULL,
  'NVIDIA HGX B200 https://www.nvidia.com/en-us/data-center/hgx/ ; DGX B200 datasheet https://resources.nvidia.com/en-us-dgx-systems/dgx-b200-datasheet'),
('gb200', 'nvidia', 'blackwell', 199715979264, 8000, 132120576, 148, 2062, 1200,
  45, 80, 1250, 2500, 2500, 5000, 5000, NULL, NULL, NULL,
  'NVIDIA GB200 NVL72, per B200 GPU of the superchip https://www.nvidia.com/en-us/data-center/gb200-nvl72/'),
-- AMD CDNA
('mi250x-gcd', 'amd', 'cdna2', 68719476736, 1638.4, 8388608, 110, 1700, 250,
  47.85, 23.95, NULL, 191.5, 191.5, NULL, 191.5, NULL, 440, 256,
  'AMD Instinct MI250X https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html ; one GCD (one device to the OS and RCCL): half of every OAM figure'),
('mi300x', 'amd', 'cdna3', 206158430208, 5300, 33554432, 304, 2100, 750,
  163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, NULL, 1216, 512,
  'AMD Instinct MI300X https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html'),
('mi325x', 'amd', 'cdna3', 274877906944, 6000, 33554432, 304, 2100, 1000,
  163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, NULL, NULL, NULL,
  'AMD Instinct MI325X https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html (same silicon and clock as MI300X)');

-- Per-figure sources: how memory_bytes was obtained (every GPU), figures marked (M) or (U) in
-- hardware.md, and figures from another source than the row's.
INSERT INTO figure_source(tbl, name, field, source, confidence) VALUES
-- v100-sxm2-32gb: the datasheet figures are remembered, not re-read (M)
('gpu', 'v100-sxm2-32gb', 'memory_bytes', 'datasheet label 32 GB HBM2 taken as 32 x 2^30 B; driver-reported total not in hardware.md (M)', 'medium'),
('gpu', 'v100-sxm2-32gb', 'hbm_gbps', 'V100 datasheet, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'v100-sxm2-32gb', 'l2_bytes', 'V100 6 MB L2, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'v100-sxm2-32gb', 'boost_mhz', 'V100 SXM2 1530 MHz boost, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'v100-sxm2-32gb', 'tdp_w', 'V100 SXM2 300 W, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'v100-sxm2-32gb', 'fp64_tflops', 'V100 FP64 7.8 (vector; Volta has no FP64 tensor path), remembered (hardware.md 1.1, M)', 'medium'),
('gpu', 'v100-sxm2-32gb', 'fp32_tflops', 'V100 FP32 15.7, remembered not re-read (hardware.md 1.1, M)', 'medium'),
('gpu', 'v100-sxm2-32gb', 'fp16_tflops', 'V100 FP16 tensor 125, remembered not re-read (hardware.md 1.1, M)', 'medium'),
('gpu', 'v100-sxm2-32gb', 'int8_tops', 'no tensor INT8 on Volta: DP4A rate estimated as 4 x FP32 = 62.8 (hardware.md 1.1, U)', 'low'),
-- A100
('gpu', 'a100-sxm4-40gb', 'memory_bytes', 'datasheet label 40 GB taken as 40 x 2^30 B; deviceQuery shows 40441 MB usable (hardware.md 1.2)', 'medium'),
('gpu', 'a100-sxm4-40gb', 'boost_mhz', 'tensor peak clock: 1410 MHz x 432 tensor cores x 512 FLOPs = 311.9 TFLOP/s (hardware.md 1.1; https://glennklockwood.com/garden/processors/A100)', 'high'),
('gpu', 'a100-sxm4-80gb', 'memory_bytes', 'driver-reported nvidia-smi memory.total 81920 MiB (hardware.md 0)', 'high'),
('gpu', 'a100-sxm4-80gb', 'boost_mhz', 'tensor peak clock: 1410 MHz x 432 tensor cores x 512 FLOPs = 311.9 TFLOP/s (hardware.md 1.1; https://glennklockwood.com/garden/processors/A100)', 'high'),
('gpu', 'a100-pcie-80gb', 'memory_bytes', 'driver-reported nvidia-smi memory.total 81920 MiB (hardware.md 1.2)', 'high'),
('gpu', 'a100-pcie-80gb', 'boost_mhz', 'tensor peak clock: 1410 MHz x 432 tensor cores x 512 FLOPs = 311.9 TFLOP/s (hardware.md 1.1); sustained lower at 300 W', 'high'),
-- a10g: no NVIDIA datasheet; rates are estimates (U)
('gpu', 'a10g', 'memory_bytes', 'label 24 GB GDDR6 taken as 24 x 2^30 B (AWS G5 page; hardware.md 1.2)', 'medium'),
('gpu', 'a10g', 'l2_bytes', '6 MB, unconfirmed (hardware.md 1.2, U)', 'low'),
('gpu', 'a10g', 'sms', '80 SMs, unconfirmed (hardware.md 1.2, U)', 'low'),
('gpu', 'a10g', 'boost_mhz', '1710 MHz, unconfirmed (hardware.md 1.2, U)', 'low'),
('gpu', 'a10g', 'tdp_w', '300 W as nvidia-smi reports on g5 instances (AWS GPU table gist, hardware.md 1.2, U)', 'low'),
('gpu', 'a10g', 'fp64_tflops', '~0.5, estimate (hardware.md 1.1, U)', 'low'),
('gpu', 'a10g', 'fp32_tflops', '~35, estimate; Baseten: A10G has more CUDA-core but less tensor throughput than A10 (hardware.md 1.1, U)', 'low'),
('gpu', 'a10g', 'tf32_tflops', '~35, estimate (hardware.md 1.1, U); A10 for comparison: 62.5', 'low'),
('gpu', 'a10g', 'fp16_tflops', '~70, estimate (hardware.md 1.1, U); A10 for comparison: 125', 'low'),
('gpu', 'a10g', 'bf16_tflops', '~70, estimate (hardware.md 1.1, U); A10 for comparison: 125', 'low'),
('gpu', 'a10g', 'int8_tops', '~140, estimate (hardware.md 1.1, U); A10 for comparison: 250', 'low'),
-- t4
('gpu', 't4', 'memory_bytes', 'datasheet label 16 GB GDDR6 taken as 16 x 2^30 B (hardware.md 1.2)', 'medium'),
('gpu', 't4', 'hbm_gbps', 'T4 datasheet 320 GB/s, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 't4', 'fp64_tflops', '~0.25 at 1/32 of FP32, not on the datasheet (hardware.md 1.1, U)', 'low'),
('gpu', 't4', 'fp32_tflops', 'T4 datasheet 8.1, remembered not re-read (hardware.md 1.1, M)', 'medium'),
('gpu', 't4', 'fp16_tflops', 'T4 datasheet 65 FP16 mixed precision, remembered not re-read (hardware.md 1.1, M)', 'medium'),
('gpu', 't4', 'int8_tops', 'T4 datasheet 130, remembered not re-read (hardware.md 1.1, M)', 'medium'),
('gpu', 't4', 'int4_tops', 'T4 datasheet 260, remembered not re-read (hardware.md 1.1, M)', 'medium'),
-- l4
('gpu', 'l4', 'memory_bytes', 'datasheet label 24 GB GDDR6 taken as 24 x 2^30 B (hardware.md 1.2)', 'medium'),
('gpu', 'l4', 'sms', '58 SMs; listings say 58 or 60 (hardware.md 1.2, U)', 'low'),
('gpu', 'l4', 'fp64_tflops', '~0.47 at 1/64 of FP32, not on the datasheet (hardware.md 1.1, U)', 'low'),
-- l40s
('gpu', 'l40s', 'memory_bytes', 'datasheet label 48 GB GDDR6 taken as 48 x 2^30 B (hardware.md 1.2)', 'medium'),
('gpu', 'l40s', 'l2_bytes', 'L40S 96 MB L2, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'l40s', 'boost_mhz', 'L40S 2520 MHz boost, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'l40s', 'fp64_tflops', '~1.4 at 1/64 of FP32, not on the datasheet (hardware.md 1.1, U)', 'low'),
-- h100-sxm
('gpu', 'h100-sxm', 'memory_bytes', 'driver-reported nvidia-smi memory.total 81559 MiB = 79.6 GiB (hardware.md 0)', 'high'),
('gpu', 'h100-sxm', 'boost_mhz', 'tensor peak clock 1830 MHz (x 528 x 1024 = 989.4 TFLOP/s); max boost 1980 MHz is for FP64/FP32 (https://glennklockwood.com/garden/processors/h100 ; ml-engineering)', 'high'),
('gpu', 'h100-sxm', 'fp64_tflops', 'FP64 tensor 66.9 (67); vector 33.5 (hardware.md 1.1)', 'high'),
-- h100-pcie
('gpu', 'h100-pcie', 'memory_bytes', 'datasheet label 80 GB HBM2e taken as 80 x 2^30 B (hardware.md 1.2)', 'medium'),
('gpu', 'h100-pcie', 'sms', '114 SMs, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'h100-pcie', 'boost_mhz', '1755 MHz boost, remembered not re-read; not shown to be the tensor peak clock (hardware.md 1.2, M)', 'medium'),
('gpu', 'h100-pcie', 'tdp_w', '350 W per H100 PCIe product brief PB-11133-001 (range 300-350 W, hardware.md 1.2)', 'high'),
('gpu', 'h100-pcie', 'fp64_tflops', 'FP64 tensor 51 (vector 26), remembered not re-read (hardware.md 1.1, M)', 'medium'),
-- h100-nvl: most figures remembered (M)
('gpu', 'h100-nvl', 'memory_bytes', 'datasheet label 94 GB HBM3 taken as 94 x 2^30 B; label remembered (hardware.md 1.2, M)', 'medium'),
('gpu', 'h100-nvl', 'hbm_gbps', '3.9 TB/s, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'h100-nvl', 'sms', '132 SMs, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'h100-nvl', 'boost_mhz', '~1785 MHz, unconfirmed (hardware.md 1.2, U)', 'low'),
('gpu', 'h100-nvl', 'tdp_w', 'upper end of the configurable 350-400 W (hardware.md 1.2)', 'high'),
('gpu', 'h100-nvl', 'fp64_tflops', 'FP64 tensor 60 (vector 30), per-GPU datasheet, remembered (hardware.md 1.1, M)', 'medium'),
('gpu', 'h100-nvl', 'fp32_tflops', '60, per-GPU datasheet, remembered (hardware.md 1.1, M)', 'medium'),
('gpu', 'h100-nvl', 'tf32_tflops', '417.5 dense (835 sparse), per-GPU datasheet, remembered (hardware.md 1.1, M)', 'medium'),
('gpu', 'h100-nvl', 'fp16_tflops', '835.5 dense (1671 sparse), per-GPU datasheet, remembered (hardware.md 1.1, M)', 'medium'),
('gpu', 'h100-nvl', 'bf16_tflops', '835.5 dense (1671 sparse), per-GPU datasheet, remembered (hardware.md 1.1, M)', 'medium'),
('gpu', 'h100-nvl', 'fp8_tflops', '1670.5 dense (3341 sparse), per-GPU datasheet, remembered (hardware.md 1.1, M)', 'medium'),
('gpu', 'h100-nvl', 'int8_tops', '1670.5 dense (3341 sparse), per-GPU datasheet, remembered (hardware.md 1.1, M)', 'medium'),
-- h200-sxm
('gpu', 'h200-sxm', 'memory_bytes', 'driver-reported nvidia-smi memory.total 143771 MiB = 140.4 GiB (hardware.md 0)', 'high'),
('gpu', 'h200-sxm', 'boost_mhz', 'clocks as H100 SXM: 1830 MHz is the tensor peak clock, 1980 MHz max boost (hardware.md 1.1, 1.2)', 'high'),
-- b200
('gpu', 'b200', 'memory_bytes', 'driver-reported 183359 MiB = 179.1 GiB (hardware.md 0); AWS p6-b200 lists 1,432 GiB for 8 GPUs; labels say 180 or 192 GB', 'high'),
('gpu', 'b200', 'l2_bytes', '126 MB from the Blackwell tuning guide GB200 example, assumed for B200 (https://docs.nvidia.com/cuda/blackwell-tuning-guide/index.html, hardware.md 1.2, U)', 'low'),
('gpu', 'b200', 'sms', '148 SMs, SKU-dependent (hardware.md 1.1, 1.2)', 'high'),
('gpu', 'b200', 'boost_mhz', 'device-reported max SM clock 1965 MHz; the clock the tensor peak is quoted at is not published (hardware.md 1.2)', 'medium'),
('gpu', 'b200', 'tdp_w', '1000 W max TGP; DGX B200 default set point 700 W (https://docs.nvidia.com/dgx/dgxb200-user-guide/power-capping.html)', 'high'),
('gpu', 'b200', 'fp64_tflops', 'FP64 37 (296 per 8-GPU HGX; early pages said 40) (hardware.md 1.1)', 'high'),
('gpu', 'b200', 'fp32_tflops', '80, unconfirmed (hardware.md 1.1, U)', 'low'),
-- gb200
('gpu', 'gb200', 'memory_bytes', 'label 186 GB HBM3e taken as 186 x 2^30 B; driver-reported total not in hardware.md', 'medium'),
('gpu', 'gb200', 'l2_bytes', '126 MB, Blackwell tuning guide GB200 example https://docs.nvidia.com/cuda/blackwell-tuning-guide/index.html', 'high'),
('gpu', 'gb200', 'sms', 'assumed equal to B200 (148); hardware.md marks the GB200 SM count unconfirmed (U)', 'low'),
('gpu', 'gb200', 'boost_mhz', 'device-reported max SM clock 2062 MHz; the clock the tensor peak is quoted at is not published (hardware.md 1.2)', 'medium'),
('gpu', 'gb200', 'tdp_w', '1200 W per-GPU max, NVIDIA Mission Control FAQ https://docs.nvidia.com/mission-control/docs/systems-administration-guide/2.3.0/prs/faq.html', 'high'),
('gpu', 'gb200', 'fp64_tflops', '~45 = 3,240 per NVL72 / 72, unconfirmed (hardware.md 1.1, U)', 'low'),
('gpu', 'gb200', 'fp32_tflops', '80, unconfirmed (hardware.md 1.1, U)', 'low'),
-- mi250x-gcd: one GCD = half of the OAM
('gpu', 'mi250x-gcd', 'memory_bytes', 'one GCD of 2: 64 GB of the 128 GB HBM2e label, taken as 64 x 2^30 B (hardware.md 1.2, 1.5)', 'medium'),
('gpu', 'mi250x-gcd', 'hbm_gbps', 'half of the OAM 3.2768 TB/s (hardware.md 1.2, 1.5)', 'high'),
('gpu', 'mi250x-gcd', 'l2_bytes', '8 MB per GCD, remembered not re-read (hardware.md 1.2, M)', 'medium'),
('gpu', 'mi250x-gcd', 'sms', '110 CUs = half of the OAM 220 (hardware.md 1.2)', 'high'),
('gpu', 'mi250x-gcd', 'tdp_w', 'half of the OAM 500 W TDP (560 W peak TBP); the split per GCD is our convention (hardware.md 1.2)', 'medium'),
('gpu', 'mi250x-gcd', 'fp64_tflops', 'FP64 matrix 95.7 per OAM / 2 (vector 47.9 / 2), remembered (hardware.md 1.1, M)', 'medium'),
('gpu', 'mi250x-gcd', 'tensor_units', '880 matrix cores per OAM / 2; 1700 MHz x 440 x 256 = 191.5 TFLOP/s (hardware.md 1.1)', 'high'),
-- mi300x, mi325x
('gpu', 'mi300x', 'memory_bytes', 'datasheet label 192 GB HBM3 taken as 192 x 2^30 B (hardware.md 1.2)', 'medium'),
('gpu', 'mi300x', 'l2_bytes', '4 MB L2 per XCD x 8 = 32 MB; the 256 MB Infinity Cache is not counted (https://rocm.docs.amd.com/projects/ai-ecosystem/en/latest/optimization/workload-optimization.html)', 'high'),
('gpu', 'mi300x', 'fp64_tflops', 'FP64 matrix 163.4 (vector 81.7), remembered (hardware.md 1.1, M)', 'medium'),
('gpu', 'mi300x', 'tensor_units', '1216 matrix cores; 2100 MHz x 1216 x 512 = 1307.4 TFLOP/s (hardware.md 1.1)', 'high'),
('gpu', 'mi325x', 'memory_bytes', 'datasheet label 256 GB HBM3E taken as 256 x 2^30 B (hardware.md 1.2)', 'medium'),
('gpu', 'mi325x', 'l2_bytes', 'as MI300X: 4 MB per XCD x 8 = 32 MB, plus 256 MB Infinity Cache not counted (hardware.md 1.2)', 'high'),
('gpu', 'mi325x', 'fp64_tflops', 'FP64 matrix 163.4 (vector 81.7), remembered (hardware.md 1.1, M)', 'medium');

-- The V100 of the DGX-2H (SXM3, 450 W) that Megatron-LM (Shoeybi et al. 2019) and its 2020
-- README measured on.  Its tensor peak is not in hardware.md; Shoeybi et al. section 5.1 gives
-- it: "39 TeraFLOPs ... 30% of the theoretical peak FLOPS" -> 130 TFLOP/s.
INSERT INTO gpu(name, vendor, arch, memory_bytes, hbm_gbps, l2_bytes, sms, boost_mhz, tdp_w,
  fp64_tflops, fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops, int8_tops, int4_tops,
  tensor_units, fp16_flops_per_clock_unit, source) VALUES
('v100-sxm3-32gb', 'nvidia', 'volta', 34359738368, 900, 6291456, 80, NULL, 450,
  NULL, NULL, NULL, 130, NULL, NULL, NULL, NULL, NULL, NULL,
  'Shoeybi et al. 2019, Megatron-LM (arXiv 1909.08053) section 5.1: 39 TFLOP/s = 30% of the DGX-2H V100 peak');
INSERT INTO figure_source(tbl, name, field, source, confidence) VALUES
('gpu', 'v100-sxm3-32gb', 'memory_bytes', 'V100-SXM3-32GB: 32 GB HBM2 label taken as 32 x 2^30 B', 'medium'),
('gpu', 'v100-sxm3-32gb', 'hbm_gbps', 'as the V100 SXM2 datasheet (hardware.md 1.2, M); the 450 W SXM3 part may run its memory faster', 'low'),
('gpu', 'v100-sxm3-32gb', 'l2_bytes', 'V100 6 MB (hardware.md 1.2, M)', 'medium'),
('gpu', 'v100-sxm3-32gb', 'sms', 'V100: 80 SMs (hardware.md 1.2)', 'high'),
('gpu', 'v100-sxm3-32gb', 'tdp_w', 'DGX-2H V100 SXM3 at 450 W (Shoeybi et al. 2019 describe DGX-2H servers)', 'low');

-- The Hopper GPU of the GH200 Grace Hopper Superchip with 144 GB of HBM3e, on which MLPerf
-- Inference v4.1 results ran (serving-2024-2025.csv): the H100's compute (same SMs and tensor
-- peaks) with faster, larger memory; its module runs up to 1000 W with the Grace CPU.
INSERT INTO gpu(name, vendor, arch, memory_bytes, hbm_gbps, l2_bytes, sms, boost_mhz, tdp_w,
  fp64_tflops, fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops, int8_tops, int4_tops,
  tensor_units, fp16_flops_per_clock_unit, source) VALUES
('gh200', 'nvidia', 'hopper', 154618822656, 4900, 52428800, 132, 1830, 900,
  66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, NULL, NULL, NULL,
  'NVIDIA GH200 Grace Hopper Superchip datasheet (HBM3e version: 144 GB, 4.9 TB/s; H100 tensor cores) https://resources.nvidia.com/en-us-grace-cpu/grace-hopper-superchip');
INSERT INTO figure_source(tbl, name, field, source, confidence) VALUES
('gpu', 'gh200', 'memory_bytes', 'datasheet label 144 GB HBM3e taken as 144 x 2^30 B (the MLPerf v4.1 system name GH200-144GB)', 'medium'),
('gpu', 'gh200', 'hbm_gbps', 'GH200 HBM3e datasheet 4.9 TB/s, remembered (hardware.md has no GH200 row)', 'medium'),
('gpu', 'gh200', 'bf16_tflops', 'the H100 SXM dense peaks: the same Hopper GPU (hardware.md 4.4 lists GH200 MAMF 828.6 BF16 / 1535 FP8, above the H100 SXM''s at its higher power)', 'medium'),
('gpu', 'gh200', 'tdp_w', 'GH200 module up to 1000 W with the CPU; MLPerf and ml-engineering quote the GPU at 900 W (hardware.md 4.4)', 'low');
