#!/usr/bin/env bash
# The LLM trainer's figures of issue 25 on one GPU, in one run: the trainer's tokens per second beside the raw
# forward+backward and prefill passes of the same model on the same shapes (GPT-2 small's shape and GPT-2 medium's,
# about 300M parameters; bf16), and batched rollouts over one at a time in score_legal (at both shapes) and generate mode.
#
# The device has torch, transformers, accelerate and numpy but no network: parlour is installed editable without
# its dependencies, and the few pure-Python ones it lacks (gymnasium, pettingzoo, jsonschema and theirs) come from
# wheels carried in WHEELS (default .wheels; fill it on a machine with a network with
#   python -m pip download --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 -d .wheels gymnasium pettingzoo jsonschema
# ). Each benchmark's output goes to $OUT/ (default a new temporary folder) and to the terminal, their warnings to $OUT/stderr.log.
#
#   bash benchmarks/gpu_trainer.sh                      # on the GPU machine: about 4-5 minutes on an H100
#   PARLOUR_GPU_TINY=1 bash benchmarks/gpu_trainer.sh   # the same steps at tiny sizes, to check the script on a CPU
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
PYTHON=${PYTHON:-python3}
WHEELS=${WHEELS:-.wheels}
mkdir -p "$OUT"

if ! "$PYTHON" -c "import parlour" 2>/dev/null; then
    "$PYTHON" -m pip install --quiet --no-deps --no-build-isolation -e .
fi
missing=$("$PYTHON" - <<'PY'
import importlib.util
wanted = {"gymnasium": "gymnasium", "pettingzoo": "pettingzoo", "jsonschema": "jsonschema", "tqdm": "tqdm",
          "transformers": "transformers", "accelerate": "accelerate", "tokenizers": "tokenizers", "numpy": "numpy"}
print(" ".join(package for module, package in wanted.items() if importlib.util.find_spec(module) is None))
PY
)
if [ -n "$missing" ]; then
    echo "installing from $WHEELS: $missing"
    "$PYTHON" -m pip install --quiet --no-index --find-links "$WHEELS" $missing
fi
"$PYTHON" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" | tee "$OUT/environment.txt"

if [ "${PARLOUR_GPU_TINY:-0}" = 1 ]; then
    sizes="tiny"; trainer="--updates 1 --episodes 8 --micro-batch 8"
    rollout="--episodes 4 --in-flight 4 --rounds 1 --max-new-tokens 4 --n-embd 64 --n-layer 2"
    rollout_generate="$rollout"
    rollout_medium="$rollout"
else
    sizes="small medium"; trainer="--updates 3 --episodes 64 --micro-batch 64"
    rollout="--episodes 64 --in-flight 64 --rounds 2 --n-embd 768 --n-layer 12"
    rollout_generate="--episodes 32 --in-flight 32 --rounds 2 --max-new-tokens 16 --n-embd 768 --n-layer 12"
    rollout_medium="--episodes 64 --in-flight 64 --rounds 1 --n-embd 1024 --n-layer 24"
fi
failed=""
# run NAME COMMAND...: one benchmark, its output to $OUT/NAME and the terminal; a failure is noted and the next one still runs.
run() {
    local name=$1; shift
    "$@" 2>>"$OUT/stderr.log" | tee "$OUT/$name" || failed="$failed $name"
}
for size in $sizes; do
    run "trainer_$size.jsonl" "$PYTHON" benchmarks/trainer_throughput.py --llm --llm-size "$size" $trainer
done
run rollout_score_legal.txt "$PYTHON" benchmarks/rollout_throughput.py --only score_legal $rollout
# The share outside the model shrinks as the model grows: the same rollout at GPT-2 medium's shape (one round).
run rollout_score_legal_medium.txt "$PYTHON" benchmarks/rollout_throughput.py --only score_legal $rollout_medium
run rollout_generate.txt "$PYTHON" benchmarks/rollout_throughput.py --only generate $rollout_generate
if [ -n "$failed" ]; then
    echo "FAILED:$failed (see $OUT/stderr.log)"
    exit 1
fi
