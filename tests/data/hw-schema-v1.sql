-- A version-1 paraplan hardware database (the schema of paraplan 0.1 before calibration
-- tables existed), with one GPU a user added.  Frozen: tests migrate it forward.
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE gpu(
  name TEXT PRIMARY KEY,
  vendor TEXT NOT NULL, arch TEXT NOT NULL,
  memory_bytes INTEGER NOT NULL CHECK(memory_bytes > 0),
  hbm_gbps REAL NOT NULL CHECK(hbm_gbps > 0),
  l2_bytes INTEGER, sms INTEGER, boost_mhz REAL, tdp_w REAL,
  fp64_tflops REAL, fp32_tflops REAL, tf32_tflops REAL, fp16_tflops REAL,
  bf16_tflops REAL, fp8_tflops REAL, int8_tops REAL, int4_tops REAL,
  tensor_units INTEGER,          -- tensor cores (matrix cores on AMD), for the peak cross-check
  fp16_flops_per_clock_unit REAL, -- dense FP16 FLOPs per clock per tensor unit
  origin TEXT NOT NULL DEFAULT 'user' CHECK(origin IN ('default','user','measured')),
  source TEXT NOT NULL);
CREATE TABLE system(
  name TEXT PRIMARY KEY,
  description TEXT NOT NULL DEFAULT '',
  gpu TEXT NOT NULL REFERENCES gpu(name) DEFERRABLE INITIALLY DEFERRED,
  gpus_per_node INTEGER NOT NULL CHECK(gpus_per_node > 0),
  scaleup TEXT NOT NULL CHECK(scaleup IN ('nvswitch','nvlink','pcie','xgmi')),
  scaleup_gbps REAL NOT NULL CHECK(scaleup_gbps > 0), -- per GPU, one direction, GB/s
  scaleup_domain INTEGER NOT NULL CHECK(scaleup_domain > 0),
  nics_per_node INTEGER NOT NULL CHECK(nics_per_node >= 0),
  nic_gbit REAL NOT NULL CHECK(nic_gbit >= 0),          -- per NIC, Gb/s
  scaleout TEXT NOT NULL DEFAULT 'none',
  scaleup_latency_us REAL NOT NULL CHECK(scaleup_latency_us >= 0),
  scaleout_latency_us REAL NOT NULL CHECK(scaleout_latency_us >= 0),
  oversubscription REAL NOT NULL DEFAULT 1 CHECK(oversubscription >= 1),
  node_power_kw REAL,
  origin TEXT NOT NULL DEFAULT 'user' CHECK(origin IN ('default','user','measured')),
  source TEXT NOT NULL);
CREATE TABLE price(
  id INTEGER PRIMARY KEY,
  subject TEXT NOT NULL,                  -- a system or a GPU name
  subject_kind TEXT NOT NULL CHECK(subject_kind IN ('system','gpu')),
  provider TEXT NOT NULL,
  kind TEXT NOT NULL CHECK(kind IN ('on-demand','reserved-1y','reserved-3y','spot','capacity-block','purchase')),
  usd REAL NOT NULL CHECK(usd > 0),
  unit TEXT NOT NULL CHECK(unit IN ('gpu-hour','node-hour','gpu','node')),
  date TEXT NOT NULL,
  source TEXT NOT NULL,
  confidence TEXT NOT NULL DEFAULT 'medium' CHECK(confidence IN ('high','medium','low')),
  origin TEXT NOT NULL DEFAULT 'user' CHECK(origin IN ('default','user','measured')));
CREATE TABLE figure_source(
  tbl TEXT NOT NULL CHECK(tbl IN ('gpu','system')), name TEXT NOT NULL, field TEXT NOT NULL,
  source TEXT NOT NULL,
  confidence TEXT NOT NULL DEFAULT 'medium' CHECK(confidence IN ('high','medium','low')),
  origin TEXT NOT NULL DEFAULT 'user' CHECK(origin IN ('default','user','measured')),
  PRIMARY KEY(tbl, name, field));
INSERT INTO gpu(name, vendor, arch, memory_bytes, hbm_gbps, source) VALUES('lab-gpu', 'nvidia', 'ampere', 1000, 1234, 'our lab');
PRAGMA user_version = 1;
