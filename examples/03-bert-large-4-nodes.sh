#!/bin/sh
# 3. Fine-tune BERT-large across 4 nodes: the communication share, and how much gradient
#    bucketing and overlap recover.
. "$(dirname "$0")/lib.sh"
say "BERT-large, sequence 512, 32 sequences per GPU, fp16, on 4 AWS p4d nodes (32 A100s, 4 x 100 Gb/s EFA each)."
B="--model bert-large --system aws-p4d --gpus 32 --tp 1 --pp 1 --micro-batch 32 --global-batch 1024 --seq 512 --dtype fp16"
ask bert-no-overlap simulate train $B --no-overlap-grad-reduce
ask bert-one-bucket simulate train $B --bucket-mb 2000
ask bert-default simulate train $B
ask bert-small-buckets simulate train $B --bucket-mb 5
say "Without overlap the whole gradient all-reduce is exposed: that is the communication share.
With buckets it starts during the backward pass; what stays exposed is the last bucket and what
the backward pass is too short to hide."
