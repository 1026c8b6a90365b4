-- Systems (node types).  scaleup_gbps is per GPU, one direction (nccl-tests busbw compares with it).
INSERT INTO system(name, description, gpu, gpus_per_node, scaleup, scaleup_gbps, scaleup_domain,
  nics_per_node, nic_gbit, scaleout, scaleup_latency_us, scaleout_latency_us, oversubscription, node_power_kw, source) VALUES
('dgx-a100', 'NVIDIA DGX A100 80GB, 8x HDR 200 Gb/s', 'a100-sxm4-80gb', 8, 'nvswitch', 300, 8, 8, 200, 'ib-hdr', 25, 40, 1, 6.5,
  'NVIDIA DGX A100 user guide; deepops slurm-perf-cluster.md (8x ConnectX-6 HDR)'),
('dgx-h100', 'NVIDIA DGX H100, 8x NDR 400 Gb/s', 'h100-sxm', 8, 'nvswitch', 450, 8, 8, 400, 'ib-ndr', 20, 35, 1, 10.2,
  'https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html');
