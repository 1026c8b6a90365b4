-- Prices, each dated and sourced.  usd is in `unit`.
INSERT INTO price(subject, subject_kind, provider, kind, usd, unit, date, source, confidence) VALUES
('h100-sxm', 'gpu', 'Lambda', 'on-demand', 3.49, 'gpu-hour', '2024-01-29', 'https://lambdalabs.com/service/gpu-cloud via Epoch AI dataset', 'high');
