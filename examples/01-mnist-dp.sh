#!/bin/sh
# 1. Train a small CNN on MNIST with data parallelism on 2 GPUs: the predicted speedup over one
#    GPU, and where the time goes.
. "$(dirname "$0")/lib.sh"
say "PyTorch's MNIST CNN (1.2M parameters), batch 64 per GPU, fp32, on a PCIe server of T4s."
ask mnist-1gpu simulate train --model mnist-cnn --system pcie-t4x4 --gpus 1 --tp 1 --pp 1 \
	--micro-batch 64 --global-batch 64 --dtype fp32
ask mnist-2gpu simulate train --model mnist-cnn --system pcie-t4x4 --gpus 2 --tp 1 --pp 1 \
	--micro-batch 64 --global-batch 128 --dtype fp32
say "Speedup = the 2-GPU throughput over the 1-GPU throughput (samples/s).  The step is the
forward and backward of 64 images (compute), the gradient all-reduce over PCIe (the part not
hidden behind the backward pass is 'exposed communication') and the optimizer step."
