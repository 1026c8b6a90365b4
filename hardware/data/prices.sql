-- Prices, each dated and sourced: every price of ../shared/reference/hardware.md sections 5.1
-- (cloud rental) and 5.2 (purchase) that maps to a GPU or system of this database.
--
--   * subject_kind 'system': the price of that system itself (a cloud instance type, a DGX).
--     subject_kind 'gpu': a per-GPU offer that is not one of our systems (Lambda, RunPod,
--     CoreWeave, GCP's GPU component, an instance type we do not model, a server price / 8).
--   * usd is in `unit` (gpu-hour, node-hour, gpu, node).  Per-GPU-hour figures of an instance
--     are the instance price / 8.
--   * date is when the price was seen: 'YYYY-MM-DD' or 'YYYY-MM'.  Where hardware.md gives only
--     a year or "late 2024", the month is an approximation and the source says so.
--   * confidence as hardware.md gives it; figures it marks (M) or (U) are 'low'.
--   * Epoch = Epoch AI hardware price dataset with archive URLs:
--     https://github.com/epoch-research/training-cost-trends/blob/main/data/Hardware%20prices.csv
INSERT INTO price(subject, subject_kind, provider, kind, usd, unit, date, source, confidence) VALUES
-- AWS instances (systems)
('aws-p4d', 'system', 'AWS', 'on-demand', 32.77, 'node-hour', '2023-03', 'https://aws.amazon.com/ec2/instance-types/p4/ (web.archive.org via Epoch); $4.10/GPU-h, unchanged 2021-06 to 2023-03, us-east-1', 'high'),
('aws-p4d', 'system', 'AWS', 'reserved-1y', 2.40, 'gpu-hour', '2023-03', 'https://aws.amazon.com/ec2/instance-types/p4/ (web.archive.org via Epoch), 2021-06 to 2023-03', 'high'),
('aws-p4d', 'system', 'AWS', 'reserved-3y', 1.45, 'gpu-hour', '2023-03', 'https://aws.amazon.com/ec2/instance-types/p4/ (web.archive.org via Epoch), 2021-06 to 2023-03', 'high'),
('aws-p4d', 'system', 'AWS', 'capacity-block', 14.75, 'node-hour', '2024-12', 'https://aws.amazon.com/ec2/capacityblocks/pricing/ (mirror copy, late 2024, month approximate; us-east-2/us-west-2)', 'medium'),
('aws-p4de', 'system', 'AWS', 'on-demand', 40.96, 'node-hour', '2022-12', 'https://aws.amazon.com/ec2/instance-types/p4/ (web.archive.org via Epoch); $5.12/GPU-h, 2022-08 to 2022-12', 'high'),
('aws-p4de', 'system', 'AWS', 'reserved-1y', 3.00, 'gpu-hour', '2022-12', 'https://aws.amazon.com/ec2/instance-types/p4/ (web.archive.org via Epoch), 2022-08 to 2022-12', 'high'),
('aws-p4de', 'system', 'AWS', 'reserved-3y', 1.81, 'gpu-hour', '2022-12', 'https://aws.amazon.com/ec2/instance-types/p4/ (web.archive.org via Epoch), 2022-08 to 2022-12', 'high'),
('aws-p5', 'system', 'AWS', 'on-demand', 98.32, 'node-hour', '2023-07-27', 'https://www.nextplatform.com/2023/07/27/h100-gpu-instance-pricing-on-aws-grin-and-bear-it/ ($12.29/GPU-h)', 'high'),
('aws-p5', 'system', 'AWS', 'capacity-block', 39.33, 'node-hour', '2024-12', 'https://aws.amazon.com/ec2/capacityblocks/pricing/ (mirror copy, late 2024, month approximate; us-east-1/2); $4.916/GPU-h', 'medium'),
('aws-p5', 'system', 'AWS', 'on-demand', 55.04, 'node-hour', '2025-06', 'AWS What''s New, June 2025 price cut (remembered, U); $6.88/GPU-h corroborated by a 2026-04 spec page quoting AWS', 'low'),
('aws-p5e', 'system', 'AWS', 'capacity-block', 43.26, 'node-hour', '2024-12', 'https://aws.amazon.com/ec2/capacityblocks/pricing/ (mirror copy, late 2024, month approximate; us-east-2); $5.408/GPU-h', 'medium'),
('aws-p6-b200', 'system', 'AWS', 'on-demand', 113.93, 'node-hour', '2025-05', 'launch price as remembered (U), ~$14.24/GPU-h; a 2026-06 blog quotes AWS B200 at $14.24/h', 'low'),
-- Azure instances
('azure-nd-a100-v4', 'system', 'Azure', 'on-demand', 3.40, 'gpu-hour', '2024-01-29', 'https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/ via Epoch; ND96asr A100 v4, East US', 'high'),
('azure-nd-a100-v4', 'system', 'Azure', 'reserved-1y', 2.83, 'gpu-hour', '2024-01-29', 'https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/ via Epoch; ND96asr A100 v4', 'high'),
('azure-nd-a100-v4', 'system', 'Azure', 'reserved-3y', 1.70, 'gpu-hour', '2024-01-29', 'https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/ via Epoch; ND96asr A100 v4', 'high'),
('azure-nd-h100-v5', 'system', 'Azure', 'on-demand', 98.32, 'node-hour', '2024-01', 'ND96isr H100 v5, remembered (U), ~$12.29/GPU-h; dated only "2024", month approximate', 'low'),
('a100-sxm4-80gb', 'gpu', 'Azure ND96amsr A100 v4', 'on-demand', 4.10, 'gpu-hour', '2024-01-29', 'https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/ via Epoch', 'high'),
('a100-sxm4-80gb', 'gpu', 'Azure ND96amsr A100 v4', 'reserved-1y', 3.53, 'gpu-hour', '2024-01-29', 'https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/ via Epoch', 'high'),
('a100-sxm4-80gb', 'gpu', 'Azure ND96amsr A100 v4', 'reserved-3y', 2.13, 'gpu-hour', '2024-01-29', 'https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/ via Epoch', 'high'),
('a100-pcie-80gb', 'gpu', 'Azure NC24ads A100 v4', 'on-demand', 3.72, 'gpu-hour', '2024-01', 'https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/ via Epoch ($3.67 in 2022-23)', 'high'),
('a100-pcie-80gb', 'gpu', 'Azure NC24ads A100 v4', 'reserved-1y', 3.10, 'gpu-hour', '2024-01', 'https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/ via Epoch (date of the reserved rate inferred)', 'medium'),
('a100-pcie-80gb', 'gpu', 'Azure NC24ads A100 v4', 'reserved-3y', 2.30, 'gpu-hour', '2024-01', 'https://azure.microsoft.com/en-us/pricing/details/virtual-machines/linux/ via Epoch (date of the reserved rate inferred)', 'medium'),
-- Google Cloud
('gcp-a2-highgpu-8g', 'system', 'GCP', 'on-demand', 3.67, 'gpu-hour', '2022-08-04', 'full-stack cloud-gpus.csv via Epoch; all-in price per GPU', 'medium'),
('gcp-a3-high', 'system', 'GCP', 'on-demand', 88.49, 'node-hour', '2024-01', 'a3-highgpu-8g, remembered (U), ~$11.06/GPU-h; dated only "2024", month approximate', 'low'),
('a100-sxm4-40gb', 'gpu', 'GCP A100 40GB (GPU only)', 'on-demand', 2.93, 'gpu-hour', '2022-12-12', 'https://cloud.google.com/compute/gpus-pricing (web.archive.org via Epoch), us-central1; the VM is billed on top', 'high'),
('a100-sxm4-40gb', 'gpu', 'GCP A100 40GB (GPU only)', 'reserved-1y', 1.85, 'gpu-hour', '2022-12-12', 'https://cloud.google.com/compute/gpus-pricing (web.archive.org via Epoch), us-central1; the VM is billed on top', 'high'),
('a100-sxm4-40gb', 'gpu', 'GCP A100 40GB (GPU only)', 'reserved-3y', 1.03, 'gpu-hour', '2022-12-12', 'https://cloud.google.com/compute/gpus-pricing (web.archive.org via Epoch), us-central1; the VM is billed on top', 'high'),
('a100-sxm4-80gb', 'gpu', 'GCP A100 80GB (GPU only)', 'on-demand', 3.93, 'gpu-hour', '2022-12-12', 'https://cloud.google.com/compute/gpus-pricing (web.archive.org via Epoch); the VM is billed on top', 'high'),
-- Lambda
('h100-sxm', 'gpu', 'Lambda (8x H100 SXM)', 'on-demand', 3.49, 'gpu-hour', '2024-01-29', 'https://lambdalabs.com/service/gpu-cloud via Epoch ($27.92/h for 8)', 'high'),
('h100-pcie', 'gpu', 'Lambda', 'on-demand', 2.49, 'gpu-hour', '2024-01-29', 'https://lambdalabs.com/service/gpu-cloud via Epoch', 'high'),
('a100-sxm4-80gb', 'gpu', 'Lambda (8x A100 80GB)', 'on-demand', 1.50, 'gpu-hour', '2023-02', 'full-stack cloud-gpus.csv via Epoch', 'medium'),
('a100-sxm4-40gb', 'gpu', 'Lambda (8x A100 40GB)', 'on-demand', 1.10, 'gpu-hour', '2022-08', 'full-stack cloud-gpus.csv via Epoch', 'medium'),
('h100-sxm', 'gpu', 'Lambda (1x H100 SXM)', 'on-demand', 3.78, 'gpu-hour', '2026-05-07', 'https://techbytes.app/posts/serverless-gpu-pricing-matrix-modal-replicate-lambda-2026/ (claimed verified)', 'low'),
('h100-pcie', 'gpu', 'Lambda (1x H100 PCIe)', 'on-demand', 2.86, 'gpu-hour', '2026-05-07', 'https://techbytes.app/posts/serverless-gpu-pricing-matrix-modal-replicate-lambda-2026/ (claimed verified)', 'low'),
('a100-sxm4-40gb', 'gpu', 'Lambda (1x A100 40GB)', 'on-demand', 1.48, 'gpu-hour', '2026-05-07', 'https://techbytes.app/posts/serverless-gpu-pricing-matrix-modal-replicate-lambda-2026/ (claimed verified)', 'low'),
-- CoreWeave (remembered list prices)
('h100-sxm', 'gpu', 'CoreWeave (HGX H100)', 'on-demand', 4.76, 'gpu-hour', '2023-01', 'https://www.coreweave.com/pricing, 2023 list price remembered (U); dated only "2023", month approximate', 'low'),
('h100-sxm', 'gpu', 'CoreWeave (HGX H100)', 'on-demand', 6.16, 'gpu-hour', '2025-01', 'https://www.coreweave.com/pricing, remembered (U): $49.24 per 8-GPU node-hour, 2024-25; month approximate', 'low'),
('h200-sxm', 'gpu', 'CoreWeave', 'on-demand', 6.31, 'gpu-hour', '2025-01', 'https://www.coreweave.com/pricing, remembered (U); dated only "2025", month approximate', 'low'),
('b200', 'gpu', 'CoreWeave', 'on-demand', 8.60, 'gpu-hour', '2025-01', 'https://www.coreweave.com/pricing, remembered (U); dated only "2025", month approximate', 'low'),
('gb200', 'gpu', 'CoreWeave (GB200 NVL72)', 'on-demand', 10.50, 'gpu-hour', '2025-01', 'https://www.coreweave.com/pricing, remembered (U); dated only "2025", month approximate', 'low'),
-- RunPod
('h100-sxm', 'gpu', 'RunPod', 'on-demand', 2.69, 'gpu-hour', '2026-01', 'https://www.runpod.io/pricing via secondary blogs: $2.69-2.79; dated only "2026", month approximate', 'low'),
('h200-sxm', 'gpu', 'RunPod', 'on-demand', 3.59, 'gpu-hour', '2026-01', 'https://www.runpod.io/pricing via secondary blogs; dated only "2026", month approximate', 'low'),
('b200', 'gpu', 'RunPod', 'on-demand', 5.98, 'gpu-hour', '2026-01', 'https://www.runpod.io/pricing via secondary blogs; dated only "2026", month approximate', 'low'),
('a100-sxm4-80gb', 'gpu', 'RunPod', 'on-demand', 1.89, 'gpu-hour', '2023-05-23', 'full-stack cloud-gpus.csv via Epoch (A100 80GB; SXM or PCIe not stated)', 'medium'),
-- Other H100 clouds (Epoch dataset)
('h100-sxm', 'gpu', 'FluidStack', 'on-demand', 4.76, 'gpu-hour', '2023-10', 'Epoch dataset', 'medium'),
('h100-sxm', 'gpu', 'Oracle (BM.GPU.H100.8)', 'on-demand', 10.00, 'gpu-hour', '2023-10', 'Epoch dataset', 'medium'),
('h100-sxm', 'gpu', 'MosaicML', 'reserved-1y', 5.00, 'gpu-hour', '2023-06', 'Epoch dataset: a reserved price; the term is not stated (filed as 1 year)', 'low'),
-- Purchase prices (hardware.md 5.2)
('dgx-a100-40gb', 'system', 'NVIDIA (DGX A100 launch)', 'purchase', 199000, 'node', '2020-05', 'https://nvidianews.nvidia.com/news/nvidia-ships-worlds-most-advanced-ai-system-nvidia-dgx-a100-to-fight-covid-19-third-generation-dgx-packs-record-5-petaflops-of-ai-performance (via Epoch)', 'high'),
('dgx-a100', 'system', 'DGX A100 640GB', 'purchase', 300000, 'node', '2021-06', 'Graphcore MLPerf post (via Epoch): ~$300,000', 'medium'),
('a100-sxm4-80gb', 'gpu', 'Dihuni (HGX A100 8-GPU server)', 'purchase', 18549, 'gpu', '2023-09', 'Epoch dataset: ~$148,390 per 8-GPU server / 8; A100 memory size not stated', 'medium'),
('a100-sxm4-40gb', 'gpu', 'NVIDIA list (single A100)', 'purchase', 15000, 'gpu', '2020-05', 'nextplatform 2022-05-09 (via Epoch): A100 PCIe/SXM single unit $15,000 in 2020 (month: A100 launch)', 'medium'),
('a100-sxm4-40gb', 'gpu', 'NVIDIA list (single A100)', 'purchase', 12500, 'gpu', '2022-05-09', 'nextplatform 2022-05-09 (via Epoch): A100 PCIe/SXM single unit $12,500 in 2022', 'medium'),
('dgx-h100', 'system', 'Delta Computer (EU list)', 'purchase', 44500, 'gpu', '2022-09', 'web.archive.org of deltacomputer.com (via Epoch): EUR 369,856 per DGX H100, ~$44.5k per GPU', 'medium'),
('dgx-h100', 'system', 'Delta Computer (EU list)', 'purchase', 41200, 'gpu', '2024-03', 'web.archive.org of deltacomputer.com (via Epoch): EUR 303,610 per DGX H100, ~$41.2k per GPU (EUR 306,404 in 2023-12)', 'medium'),
('dgx-h100', 'system', 'SemiAnalysis estimate', 'purchase', 270000, 'node', '2023-05', 'SemiAnalysis (via Epoch): estimated DGX H100 sale price ~$270,000', 'medium'),
('dgx-h100', 'system', 'Thinkmate (HGX H100, 8x 400G IB)', 'purchase', 317000, 'node', '2024-08', 'public spreadsheet citing an archived Thinkmate quote for an HGX H100 node with 8x 400G IB', 'low'),
('h100-sxm', 'gpu', 'Dihuni (Supermicro SYS-8125GS-TNHR)', 'purchase', 37080, 'gpu', '2024-03', 'Epoch dataset: ~$296,644 per HGX H100 8-GPU server / 8', 'medium'),
('h100-sxm', 'gpu', 'Raymond James (H100 ASP)', 'purchase', 25000, 'gpu', '2023-08', 'Raymond James via Tae Kim (Epoch notebook): $25-30k sale price (low end), ~$3,320 to make', 'medium');
