"""``parlour tiny-model OUT_DIR``: build a small random GPT-2 with a tokenizer and a chat template, to try the LLM paths.

The folder it writes is a Hugging Face checkpoint (``save_pretrained``), so
``hf:OUT_DIR`` plays it and ``parlour train llm --model OUT_DIR`` trains it,
on a CPU, without any download. Its checkpoint settings (``parlour_agent.json``)
say to play in ``score_legal`` mode, a softmax over the legal moves, as the
LLM trainer's checkpoints do: a random model writes no legal move as free text,
so in ``generate`` mode nearly every reply would be an invalid action
(``--agent-kwarg mode=generate`` still asks for that).
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``parlour tiny-model``."""
    parser = subparsers.add_parser(
        "tiny-model", help="build a small random GPT-2 and tokenizer in a folder (hf:OUT_DIR), for trying the LLM paths on a CPU"
    )
    parser.add_argument("out", metavar="OUT_DIR", help="the folder to write (created if missing)")
    parser.add_argument(
        "--env",
        action="append",
        default=None,
        metavar="ENV_ID",
        help="train the tokenizer on this environment's prompts (repeatable; default: a few generic game sentences)",
    )
    parser.add_argument("--vocab-size", type=int, default=1000, help="tokenizer entries (default 1000)")
    parser.add_argument("--layers", type=int, default=2, help="transformer layers (default 2; GPT-2 small has 12)")
    parser.add_argument("--width", type=int, default=64, help="embedding width (default 64; GPT-2 small has 768)")
    parser.add_argument("--heads", type=int, default=2, help="attention heads (default 2; must divide --width)")
    parser.set_defaults(handler=run_tiny_model)


def run_tiny_model(args: argparse.Namespace) -> int:
    """Build the model and print its size and the agent spec that plays it."""
    from transformers import AutoModelForCausalLM

    from parlour.wrappers.llm_agent import write_checkpoint_settings
    from parlour.wrappers.tiny_model import game_corpus, make_tiny_model

    if min(args.vocab_size, args.layers, args.width, args.heads) < 1 or args.width % args.heads:
        raise ValueError("--vocab-size, --layers, --width and --heads must be at least 1, and --heads must divide --width")
    corpus = None
    if args.env:
        corpus = [text for env_id in args.env for text in game_corpus(env_id)]
    folder = make_tiny_model(args.out, corpus=corpus, vocab_size=args.vocab_size, n_embd=args.width, n_layer=args.layers, n_head=args.heads)
    # The LLM trainer's own defaults (LLMTrainConfig), so an untrained model plays as a trained one would be evaluated.
    write_checkpoint_settings(folder, mode="score_legal", temperature=1.0, greedy=True, max_new_tokens=32, history_turns=1)
    model = AutoModelForCausalLM.from_pretrained(folder)
    print(
        f"a random GPT-2 of {model.num_parameters() / 1e3:.0f}k parameters ({args.layers} layers of width {args.width}, "
        f"vocabulary {model.config.vocab_size}) in {folder}"
    )
    print(f"agent spec: hf:{folder} (plays in score_legal mode: a softmax over the legal moves)")
    return 0
