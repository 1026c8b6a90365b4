-- Cost-model parameters for the shipped GPUs and systems, with how each was obtained.
INSERT INTO param(scope, subject, key, value, origin, method, source) VALUES
('gpu', 'a100-sxm4-80gb', 'gemm_eff_bf16', 0.82, 'default', 'large-GEMM cuBLASLt fraction of peak', 'hardware.md 4.4: Azure ND A100 v4 8192^3 253.7/312');
