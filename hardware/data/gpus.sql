-- GPUs: datasheet figures (dense TFLOP/s, decimal GB/s), one row per GPU.
-- Sources: ../shared/reference/hardware.md sections 1.1-1.4 (NVIDIA/AMD datasheets and whitepapers).
INSERT INTO gpu(name, vendor, arch, memory_bytes, hbm_gbps, l2_bytes, sms, boost_mhz, tdp_w,
  fp64_tflops, fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops, int8_tops, int4_tops,
  tensor_units, fp16_flops_per_clock_unit, source) VALUES
('a100-sxm4-80gb', 'nvidia', 'ampere', 85899345920, 2039, 41943040, 108, 1410, 400,
  19.5, 19.5, 156, 312, 312, NULL, 624, 1248, 432, 512,
  'NVIDIA A100 datasheet https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf'),
('h100-sxm', 'nvidia', 'hopper', 85520809984, 3350, 52428800, 132, 1830, 700,
  66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, NULL, 528, 1024,
  'NVIDIA H100 datasheet https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet');
