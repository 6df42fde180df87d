#!/bin/sh
# Regenerate the bundled models, the corpus sample and the golden fixtures.
#
# By hand only: never in the build or in CI (the committed files are the
# source of truth).  Needs Debian's python3-torch, python3-numpy and
# libopenblas0-pthread; about 45 minutes on one busy core of a 2-core machine.
#
#   sh assets/models/recipe/run.sh            # from the repository root
#
set -eu
cd "$(dirname "$0")"
PY=${PY:-/usr/bin/python3}
RUN="nice -n 10 $PY"
mkdir -p out

# 1. corpus (deterministic by seed) + held-out text + a committed sample
$RUN corpus.py --seed 1 --docs 10000 --out out/corpus.txt \
    --sample ../../data/corpus-sample.txt --stats ../../data/corpus-stats.json
$RUN corpus.py --seed 2 --docs 500 --out out/heldout.txt
# test text for `sixstep perplexity` (seed 3: read by no training or monitoring step)
$RUN corpus.py --seed 3 --docs 200 --out ../../data/heldout-stories.txt --stats out/heldout-stories.stats.json

# 2. byte-level BPE, 2000 tokens (check the algorithm on llama.cpp's GPT-2 vectors first)
$RUN check_tokenizer.py
$RUN bpe.py train --corpus out/corpus.txt --vocab 2000 --out out/tokenizer.json

# 3. training (one thread each)
$RUN train.py --size big --steps 640 --out out/big.pt
$RUN train.py --size draft --steps 640 --lr 3e-3 --out out/draft.pt

# 4. GGUF files
$RUN export_gguf.py --ckpt out/big.pt --type f16 --name "sixstep stories 3.8M" \
    --description "Llama-architecture story model trained on the sixstep grammar corpus" \
    --out ../stories-3m-f16.gguf
$RUN export_gguf.py --ckpt out/big.pt --type q8_0 --name "sixstep stories 3.8M" \
    --description "Llama-architecture story model trained on the sixstep grammar corpus" \
    --out ../stories-3m-q8_0.gguf
$RUN export_gguf.py --ckpt out/draft.pt --type f32 --name "sixstep stories draft 0.6M" \
    --description "draft model for speculative decoding (same tokenizer as sixstep stories 3.8M)" \
    --out ../stories-draft-f32.gguf
$RUN export_gguf.py --ckpt out/draft.pt --type f16 --name "sixstep stories draft 0.6M" \
    --description "draft model for speculative decoding (same tokenizer as sixstep stories 3.8M)" \
    --out ../stories-draft-f16.gguf

# 5. acceptance checks and golden fixtures (float64, from the GGUF files)
$RUN evaluate.py --models .. --out out/eval.json
$RUN fixtures.py --models .. --golden ../../../tests/data/golden
$PY loss_table.py out/big.pt.log.json out/draft.pt.log.json
