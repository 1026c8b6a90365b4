-- Systems (node types): GPUs per node, scale-up and scale-out links, latencies and power.
-- Facts from ../shared/reference/hardware.md sections 1.3 (scale-up links), 2.2 (node network
-- configurations), 2.4 (small-message latency) and 5.3 (power).
--
-- Conventions:
--   * scaleup_gbps is per GPU, ONE direction, decimal GB/s (what nccl-tests busbw compares
--     with): NVLink 3 300, NVLink 4 450, NVLink 5 900; PCIe Gen5 x16 ~64 (128 GB/s both
--     directions), Gen4 x16 ~32, Gen3 x16 ~16 (each generation halves).
--   * scaleup_domain = GPUs in one NVLink/xGMI domain (72 for GB200 NVL72); for PCIe nodes the
--     GPUs of the node.  nic_gbit is per NIC, Gb/s; only the NICs for GPU traffic are counted.
--   * scaleup_latency_us / scaleout_latency_us are the small-message all_reduce times of
--     hardware.md 2.4 for the system class (8x A100 ~45, 8x H100 ~26, 8x H200 ~30, 4x GB200
--     ~15 us; IB/NDR ~47, EFA v2 ~65-75, TCPXO ~123, EFA v1 ~160 us).  Where no figure exists
--     for the class the value comes from the 2.4 rule of thumb (15-45 us intra, 45-75 us IB,
--     120-160 us TCP/EFA v1) and a figure_source row marks it 'low'.
--   * oversubscription 1 (non-blocking) everywhere: hardware.md states no fabric figures.
--   * node_power_kw only where hardware.md 5.3 gives it; cloud instances leave it NULL.
INSERT INTO system(name, description, gpu, gpus_per_node, scaleup, scaleup_gbps, scaleup_domain,
  nics_per_node, nic_gbit, scaleout, scaleup_latency_us, scaleout_latency_us, oversubscription, node_power_kw, source) VALUES
-- NVIDIA DGX / HGX
('dgx-v100', 'NVIDIA DGX-1 V100: 8x V100 SXM2, NVLink 2 hybrid cube-mesh (no NVSwitch)', 'v100-sxm2-32gb', 8,
  'nvlink', 150, 8, 4, 100, 'ib-edr', 45, 60, 1, NULL,
  'hardware.md 1.3: NVLink 2, 6 links, 300 GB/s both directions per GPU, DGX-1 8-GPU hybrid cube-mesh'),
('dgx-a100-40gb', 'NVIDIA DGX A100 320GB (8x A100 40GB), 8x HDR 200 Gb/s', 'a100-sxm4-40gb', 8,
  'nvswitch', 300, 8, 8, 200, 'ib-hdr', 45, 60, 1, 6.5,
  'NVIDIA deepops https://github.com/NVIDIA/deepops/blob/master/docs/slurm-cluster/slurm-perf-cluster.md (8x ConnectX-6 HDR 200 Gb/s); NVLink 3 via 6 NVSwitch (hardware.md 1.3)'),
('dgx-a100', 'NVIDIA DGX A100 640GB (8x A100 80GB), 8x HDR 200 Gb/s', 'a100-sxm4-80gb', 8,
  'nvswitch', 300, 8, 8, 200, 'ib-hdr', 45, 60, 1, 6.5,
  'NVIDIA deepops https://github.com/NVIDIA/deepops/blob/master/docs/slurm-cluster/slurm-perf-cluster.md (8x ConnectX-6 HDR 200 Gb/s); NVLink 3 via 6 NVSwitch (hardware.md 1.3)'),
('dgx-h100', 'NVIDIA DGX H100, 8x NDR 400 Gb/s', 'h100-sxm', 8,
  'nvswitch', 450, 8, 8, 400, 'ib-ndr', 26, 47, 1, 10.2,
  'https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html (8x ConnectX-7 NDR 400 Gb/s; NVLink 4 via 4 NVSwitch)'),
('hgx-h200', 'NVIDIA HGX H200 8-GPU, DGX-style 8x NDR 400 Gb/s', 'h200-sxm', 8,
  'nvswitch', 450, 8, 8, 400, 'ib-ndr', 30, 47, 1, 10.2,
  'https://www.nvidia.com/en-us/data-center/h200/ ; network as DGX H100/H200: https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html'),
('dgx-b200', 'NVIDIA DGX B200, 8x ConnectX-7 400 Gb/s', 'b200', 8,
  'nvswitch', 900, 8, 8, 400, 'ib-ndr', 30, 47, 1, 14.3,
  'DGX B200 datasheet https://resources.nvidia.com/en-us-dgx-systems/dgx-b200-datasheet ; NVLink 5, 8 GPUs (hardware.md 1.3)'),
('gb200-nvl72', 'NVIDIA GB200 NVL72: one 72-GPU NVLink domain, 18 trays of 4 GPUs, one 400G NIC per GPU', 'gb200', 4,
  'nvswitch', 900, 72, 4, 400, 'ib-ndr', 15, 47, 1, 7.5,
  'https://www.nvidia.com/en-us/data-center/gb200-nvl72/ ; tray NICs: https://docs.nvidia.com/dgx/dgxgb200-user-guide/networking.html (4x ConnectX-7 400 Gb/s)'),
-- AWS
('aws-p4d', 'AWS p4d.24xlarge: 8x A100 40GB, 4x 100 Gb/s EFA v1', 'a100-sxm4-40gb', 8,
  'nvswitch', 300, 8, 4, 100, 'efa', 45, 160, 1, NULL,
  'https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html'),
('aws-p4de', 'AWS p4de.24xlarge: 8x A100 80GB, 4x 100 Gb/s EFA v1', 'a100-sxm4-80gb', 8,
  'nvswitch', 300, 8, 4, 100, 'efa', 45, 160, 1, NULL,
  'https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html'),
('aws-p5', 'AWS p5.48xlarge: 8x H100, 32x 100 Gb/s EFA v2', 'h100-sxm', 8,
  'nvswitch', 450, 8, 32, 100, 'efa', 26, 70, 1, NULL,
  'https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html (p5 EKS manifests request vpc.amazonaws.com/efa: 32)'),
('aws-p5e', 'AWS p5e.48xlarge: 8x H200, 32x 100 Gb/s EFA v2', 'h200-sxm', 8,
  'nvswitch', 450, 8, 32, 100, 'efa', 30, 70, 1, NULL,
  'https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html'),
('aws-p5en', 'AWS p5en.48xlarge: 8x H200, 16x 200 Gb/s EFA v3', 'h200-sxm', 8,
  'nvswitch', 450, 8, 16, 200, 'efa', 30, 70, 1, NULL,
  'https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html'),
('aws-p6-b200', 'AWS p6-b200.48xlarge: 8x B200, 8x 400 Gb/s EFA v4', 'b200', 8,
  'nvswitch', 900, 8, 8, 400, 'efa', 30, 70, 1, NULL,
  'https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html (1,432 GiB GPU memory)'),
-- Google Cloud
('gcp-a2-highgpu-8g', 'GCP a2-highgpu-8g: 8x A100 40GB, 100 Gb/s VM NIC', 'a100-sxm4-40gb', 8,
  'nvswitch', 300, 8, 1, 100, 'tcp', 45, 160, 1, NULL,
  'https://cloud.google.com/compute/docs/accelerator-optimized-machines'),
('gcp-a3-high', 'GCP a3-highgpu-8g (A3 High): 8x H100, 4x 200 Gb/s GPUDirect-TCPX', 'h100-sxm', 8,
  'nvswitch', 450, 8, 4, 200, 'tcp', 26, 160, 1, NULL,
  'https://docs.cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx (plus a 200 Gb/s host NIC, not counted)'),
('gcp-a3-mega', 'GCP a3-megagpu-8g (A3 Mega): 8x H100, 8x 200 Gb/s GPUDirect-TCPXO', 'h100-sxm', 8,
  'nvswitch', 450, 8, 8, 200, 'tcp', 26, 123, 1, NULL,
  'https://docs.cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx'),
('gcp-a3-ultra', 'GCP a3-ultragpu-8g (A3 Ultra): 8x H200, 8x ConnectX-7 RoCE', 'h200-sxm', 8,
  'nvswitch', 450, 8, 8, 400, 'roce', 30, 60, 1, NULL,
  'https://github.com/GoogleCloudPlatform/cluster-toolkit/discussions/3478'),
-- Microsoft Azure
('azure-nd-a100-v4', 'Azure ND96asr A100 v4: 8x A100 40GB, 8x HDR 200 Gb/s InfiniBand', 'a100-sxm4-40gb', 8,
  'nvswitch', 300, 8, 8, 200, 'ib-hdr', 45, 60, 1, NULL,
  'Azure VM docs (remembered, hardware.md 2.2 M); latency: https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_A100_v4_results.md'),
('azure-nd-h100-v5', 'Azure ND96isr H100 v5: 8x H100, 8x NDR 400 Gb/s InfiniBand', 'h100-sxm', 8,
  'nvswitch', 450, 8, 8, 400, 'ib-ndr', 26, 47, 1, NULL,
  'Azure VM docs (remembered, hardware.md 2.2 M); latency: https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure%20Results/ND_H100_v5_results.md'),
('azure-nd-h200-v5', 'Azure ND H200 v5: 8x H200, 8x NDR 400 Gb/s InfiniBand', 'h200-sxm', 8,
  'nvswitch', 450, 8, 8, 400, 'ib-ndr', 30, 47, 1, NULL,
  'Azure VM docs (remembered, hardware.md 2.2 M); latency: Azure AI-benchmarking-guide ND H200 v5 results'),
-- AMD
('mi300x-8', 'AMD MI300X 8-GPU platform: fully connected Infinity Fabric mesh, no switch', 'mi300x', 8,
  'xgmi', 448, 8, 8, 400, 'roce', 45, 60, 1, NULL,
  'hardware.md 1.3: 7 Infinity Fabric links per GPU, 128 GB/s peak per link both directions (64 per direction), 448 GB/s per GPU one direction'),
-- PCIe servers without NVLink (inference)
('pcie-l40sx8', 'generic PCIe server: 8x L40S on PCIe Gen4 x16, no NVLink', 'l40s', 8,
  'pcie', 32, 8, 1, 100, 'tcp', 45, 160, 1, NULL,
  'generic configuration, not a product: L40S is PCIe Gen4 x16 only (hardware.md 1.2, 1.3)'),
('pcie-l4x8', 'generic PCIe server: 8x L4 on PCIe Gen4 x16, no NVLink', 'l4', 8,
  'pcie', 32, 8, 1, 100, 'tcp', 45, 160, 1, NULL,
  'generic configuration, not a product: L4 is PCIe Gen4 x16 only (hardware.md 1.2, 1.3)'),
('pcie-t4x4', 'generic PCIe server: 4x T4 on PCIe Gen3 x16, no NVLink', 't4', 4,
  'pcie', 16, 4, 1, 100, 'tcp', 45, 160, 1, NULL,
  'generic configuration, not a product: T4 is PCIe Gen3 x16 only (hardware.md 1.2, 1.3)');

-- Per-figure sources of the systems: latencies (hardware.md 2.4), power (5.3), and every
-- assumption.
INSERT INTO figure_source(tbl, name, field, source, confidence) VALUES
('system', 'dgx-v100', 'nics_per_node', 'assumption: 4x 100 Gb/s EDR InfiniBand (EDR is the V100-era generation, hardware.md 2.1); NICs of DGX-1 not in hardware.md', 'low'),
('system', 'dgx-v100', 'nic_gbit', 'assumption: EDR 100 Gb/s per 4x port (hardware.md 2.1)', 'low'),
('system', 'dgx-v100', 'scaleup_gbps', 'NVLink 2: 6 links, 150 GB/s per GPU one direction; hybrid cube-mesh, not every pair directly linked (hardware.md 1.3, M)', 'medium'),
('system', 'dgx-v100', 'scaleup_latency_us', 'no V100 figure: 8x A100 small-message all_reduce ~45 us used (hardware.md 2.4)', 'low'),
('system', 'dgx-v100', 'scaleout_latency_us', 'no figure: middle of the 45-75 us IB rule of thumb (hardware.md 2.4)', 'low'),
('system', 'dgx-a100-40gb', 'scaleup_latency_us', '8x A100 all_reduce ~45 us at 1 KB (derived from Azure ND A100 v4 busbw); 43.8 us at 32 KB (ml-engineering) (hardware.md 2.4)', 'medium'),
('system', 'dgx-a100-40gb', 'scaleout_latency_us', 'no HDR figure: middle of the 45-75 us IB rule of thumb (hardware.md 2.4)', 'low'),
('system', 'dgx-a100-40gb', 'node_power_kw', 'DGX A100 6.5 kW system max, remembered (hardware.md 5.3, M)', 'medium'),
('system', 'dgx-a100', 'scaleup_latency_us', '8x A100 all_reduce ~45 us at 1 KB (derived from Azure ND A100 v4 busbw); 43.8 us at 32 KB (ml-engineering) (hardware.md 2.4)', 'medium'),
('system', 'dgx-a100', 'scaleout_latency_us', 'no HDR figure: middle of the 45-75 us IB rule of thumb (hardware.md 2.4)', 'low'),
('system', 'dgx-a100', 'node_power_kw', 'DGX A100 6.5 kW system max, remembered (hardware.md 5.3, M)', 'medium'),
('system', 'dgx-h100', 'scaleup_latency_us', '8x H100 NVLS all_reduce ~26 us at 1 KB, derived from Azure ND H100 v5 busbw 0.07 GB/s (hardware.md 2.4)', 'medium'),
('system', 'dgx-h100', 'scaleout_latency_us', '2 nodes x 8 H20 (Hopper), NDR IB, NVLSTree: 46-48 us at 4-1024 B (https://github.com/NVIDIA/nccl/issues/1244)', 'medium'),
('system', 'dgx-h100', 'node_power_kw', 'DGX H100 10.2 kW system max, remembered (hardware.md 5.3, M)', 'medium'),
('system', 'hgx-h200', 'nics_per_node', 'DGX H100/H200 network (8x ConnectX-7 NDR 400 Gb/s); an HGX H200 server''s NICs depend on its maker', 'medium'),
('system', 'hgx-h200', 'scaleup_latency_us', '8x H200 all_reduce ~30 us at 1 KB, derived from Azure ND H200 v5 busbw 0.06 GB/s (hardware.md 2.4)', 'medium'),
('system', 'hgx-h200', 'scaleout_latency_us', '2 nodes x 8 H20 (Hopper), NDR IB, NVLSTree: 46-48 us (https://github.com/NVIDIA/nccl/issues/1244)', 'medium'),
('system', 'hgx-h200', 'node_power_kw', 'not in hardware.md: DGX H100 10.2 kW assumed (same 700 W GPUs)', 'low'),
('system', 'dgx-b200', 'nics_per_node', '8x ConnectX-7 400 Gb/s, DGX B200 datasheet remembered (hardware.md 2.2, M)', 'medium'),
('system', 'dgx-b200', 'scaleup_latency_us', 'no B200 figure: 8x H200 ~30 us used (hardware.md 2.4)', 'low'),
('system', 'dgx-b200', 'scaleout_latency_us', 'no B200 figure: Hopper NDR IB 46-48 us used (https://github.com/NVIDIA/nccl/issues/1244)', 'low'),
('system', 'dgx-b200', 'node_power_kw', 'DGX B200 ~14.3 kW, remembered and corroborated by a 2026 rack blueprint page (hardware.md 5.3, M)', 'medium'),
('system', 'gb200-nvl72', 'scaleup_latency_us', '4x GB200 in one host ~15 us at 1 KB, derived from Azure ND GB200 v6; a 72-GPU collective is likely slower (hardware.md 2.4)', 'low'),
('system', 'gb200-nvl72', 'scaleout_latency_us', 'no GB200 figure: Hopper NDR IB 46-48 us used (https://github.com/NVIDIA/nccl/issues/1244)', 'low'),
('system', 'gb200-nvl72', 'scaleout', 'ConnectX-7 400 Gb/s; IB or Ethernet mode not stated (hardware.md 2.2)', 'medium'),
('system', 'gb200-nvl72', 'node_power_kw', 'no GB200 figure: GB300 NVL72 node budget 7.5 kW (135 kW / 18) used (NVIDIA Mission Control FAQ via ml-engineering, hardware.md 5.3)', 'low'),
('system', 'aws-p4d', 'scaleup_latency_us', '8x A100 all_reduce ~45 us at 1 KB (Azure ND A100 v4, hardware.md 2.4)', 'medium'),
('system', 'aws-p4d', 'scaleout_latency_us', '2x p4de (EFA v1) ~160 us at 8 B (https://github.com/aws-samples/awsome-distributed-training/blob/main/micro-benchmarks/nccl-tests/README.md)', 'medium'),
('system', 'aws-p4de', 'scaleup_latency_us', '8x A100 all_reduce ~45 us at 1 KB (Azure ND A100 v4, hardware.md 2.4)', 'medium'),
('system', 'aws-p4de', 'scaleout_latency_us', '2x p4de (EFA v1) ~160 us at 8 B (https://github.com/aws-samples/awsome-distributed-training/blob/main/micro-benchmarks/nccl-tests/README.md)', 'high'),
('system', 'aws-p5', 'scaleup_latency_us', '8x H100 NVLS all_reduce ~26 us at 1 KB (Azure ND H100 v5, hardware.md 2.4)', 'medium'),
('system', 'aws-p5', 'scaleout_latency_us', '2x p5 (EFA v2) 65-75 us at 8 B (https://github.com/aws-samples/awsome-distributed-training/blob/main/micro-benchmarks/nccl-tests/README.md)', 'high'),
('system', 'aws-p5e', 'scaleup_latency_us', '8x H200 all_reduce ~30 us at 1 KB (Azure ND H200 v5, hardware.md 2.4)', 'medium'),
('system', 'aws-p5e', 'scaleout_latency_us', 'p5 EFA v2 figure, 65-75 us at 8 B (aws-samples nccl-tests README)', 'medium'),
('system', 'aws-p5en', 'scaleup_latency_us', '8x H200 all_reduce ~30 us at 1 KB (Azure ND H200 v5, hardware.md 2.4)', 'medium'),
('system', 'aws-p5en', 'scaleout_latency_us', 'no EFA v3 figure: p5 EFA v2 65-75 us used (aws-samples nccl-tests README)', 'low'),
('system', 'aws-p6-b200', 'scaleup_latency_us', 'no B200 figure: 8x H200 ~30 us used (hardware.md 2.4)', 'low'),
('system', 'aws-p6-b200', 'scaleout_latency_us', 'no EFA v4 figure: p5 EFA v2 65-75 us used (aws-samples nccl-tests README)', 'low'),
('system', 'gcp-a2-highgpu-8g', 'nic_gbit', '100 Gb/s VM NIC, remembered (hardware.md 2.2, M)', 'medium'),
('system', 'gcp-a2-highgpu-8g', 'scaleup_latency_us', '8x A100 all_reduce ~45 us at 1 KB (Azure ND A100 v4, hardware.md 2.4)', 'medium'),
('system', 'gcp-a2-highgpu-8g', 'scaleout_latency_us', 'no figure: upper end of the 120-160 us TCP/EFA v1 rule of thumb (hardware.md 2.4)', 'low'),
('system', 'gcp-a3-high', 'scaleup_latency_us', '8x H100 NVLS all_reduce ~26 us at 1 KB (Azure ND H100 v5, hardware.md 2.4)', 'medium'),
('system', 'gcp-a3-high', 'scaleout_latency_us', 'no GPUDirect-TCPX figure: upper end of the 120-160 us TCP rule of thumb (hardware.md 2.4)', 'low'),
('system', 'gcp-a3-mega', 'scaleup_latency_us', '8x H100 NVLS all_reduce ~26 us at 1 KB (Azure ND H100 v5, hardware.md 2.4)', 'medium'),
('system', 'gcp-a3-mega', 'scaleout_latency_us', '2x A3 Mega (TCPXO) ~123 us at 8 B (https://github.com/lessizzmore/create-a3mega-ztan-fork)', 'high'),
('system', 'gcp-a3-ultra', 'nic_gbit', '400 Gb/s per ConnectX-7, remembered (hardware.md 2.2, M)', 'medium'),
('system', 'gcp-a3-ultra', 'scaleup_latency_us', '8x H200 all_reduce ~30 us at 1 KB (Azure ND H200 v5, hardware.md 2.4)', 'medium'),
('system', 'gcp-a3-ultra', 'scaleout_latency_us', 'no RoCE figure: middle of the 45-75 us IB rule of thumb (hardware.md 2.4)', 'low'),
('system', 'azure-nd-a100-v4', 'nics_per_node', '8x 200 Gb/s HDR IB, Azure VM docs remembered (hardware.md 2.2, M)', 'medium'),
('system', 'azure-nd-a100-v4', 'scaleup_latency_us', '~45 us at 1 KB, derived from this system''s busbw (Azure ND A100 v4 results, hardware.md 2.4)', 'high'),
('system', 'azure-nd-a100-v4', 'scaleout_latency_us', 'no HDR figure: middle of the 45-75 us IB rule of thumb (hardware.md 2.4)', 'low'),
('system', 'azure-nd-h100-v5', 'nics_per_node', '8x 400 Gb/s NDR IB, Azure VM docs remembered (hardware.md 2.2, M)', 'medium'),
('system', 'azure-nd-h100-v5', 'scaleup_latency_us', '~26 us at 1 KB, derived from this system''s busbw 0.07 GB/s (Azure ND H100 v5 results, hardware.md 2.4)', 'high'),
('system', 'azure-nd-h100-v5', 'scaleout_latency_us', '2 nodes x 8 H20 (Hopper), NDR IB, NVLSTree: 46-48 us (https://github.com/NVIDIA/nccl/issues/1244)', 'medium'),
('system', 'azure-nd-h200-v5', 'nics_per_node', '8x 400 Gb/s NDR IB, Azure VM docs remembered (hardware.md 2.2, M)', 'medium'),
('system', 'azure-nd-h200-v5', 'scaleup_latency_us', '~30 us at 1 KB, derived from this system''s busbw 0.06 GB/s (Azure ND H200 v5 results, hardware.md 2.4)', 'high'),
('system', 'azure-nd-h200-v5', 'scaleout_latency_us', '2 nodes x 8 H20 (Hopper), NDR IB, NVLSTree: 46-48 us (https://github.com/NVIDIA/nccl/issues/1244)', 'medium'),
('system', 'mi300x-8', 'scaleup_gbps', '7 links x 64 GB/s per direction, all peers at once; one peer-to-peer stream gets one link, 64 GB/s (hardware.md 1.3)', 'high'),
('system', 'mi300x-8', 'nics_per_node', 'assumption: one 400 Gb/s NIC per GPU as on the 8-GPU NVIDIA systems of hardware.md 2.2; MI300X node NICs not in hardware.md', 'low'),
('system', 'mi300x-8', 'nic_gbit', 'assumption: 400 Gb/s per NIC (hardware.md has no MI300X node network)', 'low'),
('system', 'mi300x-8', 'scaleout', 'assumption: RoCE (hardware.md has no MI300X node network)', 'low'),
('system', 'mi300x-8', 'scaleup_latency_us', 'no RCCL figure: upper end of the 15-45 us intra-node rule of thumb (hardware.md 2.4)', 'low'),
('system', 'mi300x-8', 'scaleout_latency_us', 'no figure: middle of the 45-75 us IB rule of thumb (hardware.md 2.4)', 'low'),
('system', 'pcie-l40sx8', 'scaleup_gbps', 'PCIe Gen4 x16 ~32 GB/s one direction: half of Gen5 x16, which is 128 GB/s both directions = 64 one way (hardware.md 1.2)', 'medium'),
('system', 'pcie-l40sx8', 'nics_per_node', 'assumption: one 100 Gb/s Ethernet NIC (the GCP A100 VM NIC of hardware.md 2.2); no figure for L40S servers', 'low'),
('system', 'pcie-l40sx8', 'nic_gbit', 'assumption: 100 Gb/s Ethernet (hardware.md has no L40S server network)', 'low'),
('system', 'pcie-l40sx8', 'scaleup_latency_us', 'no PCIe figure: upper end of the 15-45 us intra-node rule of thumb (hardware.md 2.4)', 'low'),
('system', 'pcie-l40sx8', 'scaleout_latency_us', 'no figure: upper end of the 120-160 us TCP rule of thumb (hardware.md 2.4)', 'low'),
('system', 'pcie-l4x8', 'scaleup_gbps', 'PCIe Gen4 x16 ~32 GB/s one direction: half of Gen5 x16, which is 128 GB/s both directions = 64 one way (hardware.md 1.2)', 'medium'),
('system', 'pcie-l4x8', 'nics_per_node', 'assumption: one 100 Gb/s Ethernet NIC (the GCP A100 VM NIC of hardware.md 2.2); no figure for L4 servers', 'low'),
('system', 'pcie-l4x8', 'nic_gbit', 'assumption: 100 Gb/s Ethernet (hardware.md has no L4 server network)', 'low'),
('system', 'pcie-l4x8', 'scaleup_latency_us', 'no PCIe figure: upper end of the 15-45 us intra-node rule of thumb (hardware.md 2.4)', 'low'),
('system', 'pcie-l4x8', 'scaleout_latency_us', 'no figure: upper end of the 120-160 us TCP rule of thumb (hardware.md 2.4)', 'low'),
('system', 'pcie-t4x4', 'scaleup_gbps', 'PCIe Gen3 x16 ~16 GB/s one direction: half of Gen4 x16 ~32 (hardware.md 1.2)', 'medium'),
('system', 'pcie-t4x4', 'nics_per_node', 'assumption: one 100 Gb/s Ethernet NIC; no figure for T4 servers in hardware.md', 'low'),
('system', 'pcie-t4x4', 'nic_gbit', 'assumption: 100 Gb/s Ethernet (hardware.md has no T4 server network)', 'low'),
('system', 'pcie-t4x4', 'scaleup_latency_us', 'no PCIe figure: upper end of the 15-45 us intra-node rule of thumb (hardware.md 2.4)', 'low'),
('system', 'pcie-t4x4', 'scaleout_latency_us', 'no figure: upper end of the 120-160 us TCP rule of thumb (hardware.md 2.4)', 'low');

-- NVIDIA DGX-2H: the 16-GPU NVSwitch server of the Megatron-LM 2019-2020 measurements.
INSERT INTO system(name, description, gpu, gpus_per_node, scaleup, scaleup_gbps, scaleup_domain,
  nics_per_node, nic_gbit, scaleout, scaleup_latency_us, scaleout_latency_us, oversubscription, node_power_kw, source) VALUES
('dgx-2h', 'NVIDIA DGX-2H: 16x V100 SXM3 32GB, NVSwitch, 8x 100 Gb/s InfiniBand', 'v100-sxm3-32gb', 16,
  'nvswitch', 150, 16, 8, 100, 'ib-edr', 45, 60, 1, NULL,
  'Shoeybi et al. 2019 (arXiv 1909.08053) section 5: DGX-2H servers, 16 V100 on NVSwitch, 8 InfiniBand adapters per server (100 GB/s); NVLink 2 per GPU 150 GB/s one direction (hardware.md 1.3)');
INSERT INTO figure_source(tbl, name, field, source, confidence) VALUES
('system', 'dgx-2h', 'scaleup_gbps', 'V100 NVLink 2: 6 links, 300 GB/s both directions per GPU; DGX-2 uses 12 NVSwitch gen1 (hardware.md 1.3, M)', 'medium'),
('system', 'dgx-2h', 'scaleup_latency_us', 'no V100 figure: 8x A100 small-message all_reduce ~45 us used (hardware.md 2.4)', 'low'),
('system', 'dgx-2h', 'scaleout_latency_us', 'no figure: middle of the 45-75 us IB rule of thumb (hardware.md 2.4)', 'low');

-- Systems of the 2024-2025 serving measurements that the tables above lack.
INSERT INTO system(name, description, gpu, gpus_per_node, scaleup, scaleup_gbps, scaleup_domain,
  nics_per_node, nic_gbit, scaleout, scaleup_latency_us, scaleout_latency_us, oversubscription, node_power_kw, source) VALUES
('gh200', 'NVIDIA GH200 Grace Hopper Superchip: one H100-class GPU per node, NVLink-C2C to its Grace CPU', 'gh200', 1,
  'nvlink', 450, 1, 1, 400, 'ib-ndr', 26, 47, 1, NULL,
  'NVIDIA GH200 datasheet: one GPU per superchip, NVLink 4 (900 GB/s both directions), one ConnectX-7 400 Gb/s per superchip in MGX servers; the single-superchip MLPerf Inference v4.1 system'),
('mi325x-8', 'AMD MI325X 8-GPU platform: fully connected Infinity Fabric mesh, no switch', 'mi325x', 8,
  'xgmi', 448, 8, 8, 400, 'roce', 45, 60, 1, NULL,
  'as mi300x-8 (hardware.md 1.3: 7 Infinity Fabric links per GPU, 64 GB/s per direction each): MI325X is the MI300X package with HBM3E');
INSERT INTO figure_source(tbl, name, field, source, confidence) VALUES
('system', 'gh200', 'nics_per_node', 'assumption: one ConnectX-7 400 Gb/s per superchip (NVIDIA MGX GH200 reference designs, remembered)', 'low'),
('system', 'gh200', 'scaleup_latency_us', 'one GPU: no intra-node collective; the 8x H100 NVLS figure kept for a multi-GPU use', 'low'),
('system', 'gh200', 'scaleout_latency_us', 'Hopper NDR IB 46-48 us (https://github.com/NVIDIA/nccl-tests, hardware.md 2.4)', 'medium'),
('system', 'mi325x-8', 'nics_per_node', 'assumption: one 400 Gb/s NIC per GPU, as mi300x-8', 'low'),
('system', 'mi325x-8', 'scaleup_latency_us', 'no RCCL figure: upper end of the 15-45 us intra-node rule of thumb (hardware.md 2.4)', 'low'),
('system', 'mi325x-8', 'scaleout_latency_us', 'no figure: middle of the 45-75 us IB rule of thumb (hardware.md 2.4)', 'low');
