#!/bin/sh
# 2. Scale ResNet-50 on ImageNet from 1 to 4 GPUs (and to 8, 32, 256) with DDP: scaling
#    efficiency, the effect of the gradient bucket size, and what data loading must sustain.
. "$(dirname "$0")/lib.sh"
say "ResNet-50, 256 images per GPU, fp16 (AMP), DDP; DGX A100 nodes (8 x 200 Gb/s InfiniBand)."
for g in 1 4 8 32 256; do
	ask "resnet50-dgx-$g" simulate train --model resnet-50 --system dgx-a100 --gpus "$g" --tp 1 --pp 1 \
		--micro-batch 256 --global-batch $((256 * g)) --dtype fp16
done
say "The same on cloud VMs with one 100 Gb/s TCP NIC per 8 GPUs (GCP a2-highgpu-8g):"
for g in 8 32 256; do
	ask "resnet50-gcp-$g" simulate train --model resnet-50 --system gcp-a2-highgpu-8g --gpus "$g" --tp 1 --pp 1 \
		--micro-batch 256 --global-batch $((256 * g)) --dtype fp16
done
say "Gradient bucket size (DDP's bucket_cap_mb, 25 MB by default) at 256 GPUs on the TCP network:"
for b in 1 25 100 1000; do
	ask "resnet50-gcp-bucket-$b" simulate train --model resnet-50 --system gcp-a2-highgpu-8g --gpus 256 --tp 1 \
		--pp 1 --micro-batch 256 --global-batch 65536 --dtype fp16 --bucket-mb "$b"
done
say "Scaling efficiency at N GPUs = throughput(N) / (N x throughput(1)).  The data loader must
deliver each GPU's samples/s (decoded, augmented images); above that the GPUs wait for input."
