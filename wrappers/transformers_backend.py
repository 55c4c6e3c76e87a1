"""The ``transformers`` backend: a local causal LM, batched generation with left padding.

torch and transformers are imported when a backend is built, never at
``import parlour``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parlour.wrappers.backend import Completion, Message

#: ``dtype`` names accepted besides ``"auto"``.
DTYPES = ("float32", "float16", "bfloat16")


class TransformersBackend:
    """A causal LM loaded with ``from_pretrained`` from a local folder (offline) or a hub id.

    Prompts go through the tokenizer's chat template when it has one, else a
    plain ``role: content`` transcript. A batch of conversations is one
    ``generate`` call with left padding. Sampling is reproducible under a seed:
    each call seeds torch inside a forked RNG, so global random state is left
    as it was.

    Args:
        model: a local folder or a hub id; a folder that exists is loaded with
            ``local_files_only`` so no network is touched.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...; default CUDA when available.
        dtype: ``"auto"`` (bfloat16 on CUDA when supported, else float32) or one of :data:`DTYPES`.
        max_new_tokens: the longest reply, in tokens.
        do_sample: sample (default) or decode greedily.
        temperature, top_p, top_k: sampling parameters (``top_k=0`` disables it).
        trust_remote_code: passed to ``from_pretrained``.
    """

    def __init__(
        self,
        model: str,
        *,
        device: str | None = None,
        dtype: str = "auto",
        max_new_tokens: int = 16,
        do_sample: bool = True,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = 0,
        trust_remote_code: bool = False,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if dtype != "auto" and dtype not in DTYPES:
            raise ValueError(f"dtype must be 'auto' or one of {DTYPES}, got {dtype!r}")
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        if dtype == "auto":
            on_cuda = self.device.type == "cuda"
            torch_dtype = torch.bfloat16 if on_cuda and torch.cuda.is_bf16_supported() else torch.float32
        else:
            torch_dtype = getattr(torch, dtype)
        local = Path(model).exists()
        if not local and (model.startswith((".", "/", "~")) or model.count("/") > 1):
            # Hub ids are "name" or "namespace/name"; anything else is a folder that is not there.
            raise FileNotFoundError(f"no model folder at {model!r} (and it is not a hub id such as 'namespace/name')")
        options: dict[str, Any] = {"local_files_only": local, "trust_remote_code": trust_remote_code}
        self.tokenizer = AutoTokenizer.from_pretrained(model, **options)
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch_dtype, **options).to(self.device).eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            if self.tokenizer.eos_token is None:
                raise ValueError(f"the tokenizer of {model} has neither a pad nor an eos token; set one before batching")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.name = f"hf:{model}"
        self.max_new_tokens = max_new_tokens
        self.context_limit: int | None = getattr(self.model.config, "max_position_embeddings", None)
        self.sampling: dict[str, Any] = {"do_sample": do_sample}
        if do_sample:
            self.sampling.update(temperature=temperature, top_p=top_p, top_k=top_k)
        self.has_chat_template = bool(getattr(self.tokenizer, "chat_template", None))

    def render(self, messages: list[Message], generation_prompt: bool = True) -> str:
        """The prompt text of ``messages``: the chat template, or a plain transcript when the tokenizer has none."""
        if self.has_chat_template:
            from jinja2.exceptions import TemplateError

            try:
                return self.tokenizer.apply_chat_template(messages, add_generation_prompt=generation_prompt, tokenize=False)
            except TemplateError:
                # Some templates (Gemma, Mistral) reject a system role: fold it into the first user message.
                return self.tokenizer.apply_chat_template(
                    fold_system(messages), add_generation_prompt=generation_prompt, tokenize=False
                )
        transcript = "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)
        return f"{transcript}\n\nassistant:" if generation_prompt else transcript

    def count_tokens(self, messages: list[Message]) -> int:
        """Prompt tokens of ``messages`` as rendered (without the generation prompt)."""
        return len(self.tokenizer(self.render(messages, generation_prompt=False), add_special_tokens=False)["input_ids"])

    def generate(self, conversations: list[list[Message]], seed: int | None = None) -> list[Completion]:
        """One completion per conversation, from a single batched ``generate`` call."""
        import torch

        texts = [self.render(messages) for messages in conversations]
        batch = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=not self.has_chat_template)
        input_ids, attention_mask = batch["input_ids"], batch["attention_mask"]
        if self.context_limit is not None:
            # Last resort after the agent's window: keep the most recent tokens so generation never overflows.
            room = max(1, self.context_limit - self.max_new_tokens)
            input_ids, attention_mask = input_ids[:, -room:], attention_mask[:, -room:]
        input_ids, attention_mask = input_ids.to(self.device), attention_mask.to(self.device)
        devices = [self.device.index or 0] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch.inference_mode():
            if seed is not None:
                torch.manual_seed(seed)
            output = self.model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                max_new_tokens=self.max_new_tokens,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_id=self.tokenizer.eos_token_id,
                **self.sampling,
            )
        generated = output[:, input_ids.shape[1] :].tolist()
        prompt_tokens = attention_mask.sum(dim=1).tolist()
        completions = []
        for tokens, n_prompt in zip(generated, prompt_tokens):
            length = tokens.index(self.tokenizer.eos_token_id) + 1 if self.tokenizer.eos_token_id in tokens else len(tokens)
            text = self.tokenizer.decode(tokens[:length], skip_special_tokens=True)
            completions.append(Completion(text=text, prompt_tokens=int(n_prompt), completion_tokens=length))
        return completions


def fold_system(messages: list[Message]) -> list[Message]:
    """``messages`` without a system message: its content is prepended to the first user message."""
    if not messages or messages[0]["role"] != "system":
        return messages
    system, rest = messages[0]["content"], list(messages[1:])
    if rest and rest[0]["role"] == "user":
        return [{"role": "user", "content": f"{system}\n\n{rest[0]['content']}"}, *rest[1:]]
    return [{"role": "user", "content": system}, *rest]
