#!/bin/sh
# 10. ResNet-152 inference split across GPUs with pipeline parallelism when it does not fit one
#     GPU (a T4, 16 GB, at a large batch).
. "$(dirname "$0")/lib.sh"
say "ResNet-152 inference in fp16, a batch of 8192 images, on a server of four T4s (PCIe)."
B="--model resnet-152 --system pcie-t4x4 --batch 8192"
ask r152-one-gpu simulate infer $B
ask r152-pp2 simulate infer $B --pp 2
ask r152-pp4 simulate infer $B --pp 4
say "Splitting the batch into micro-batches on one GPU also fits, and four such replicas use the
same four GPUs without pipeline fill, drain or transfers:"
ask r152-one-gpu-mb512 simulate infer $B --micro-batch 512
ask r152-4-replicas simulate infer $B --micro-batch 512 --replicas 4
