"""A tiny Qwen3 checkpoint whose answers are known in advance, built locally (no downloads).

Run in the engines venv (it needs torch, transformers and tokenizers)::

    .venv-engines/bin/python -m tests.support.tiny_model OUT_DIR

The weights are crafted, not trained. Every attention and MLP output projection is zero, so
the residual stream carries the current token's embedding unchanged to the head, and the
next token depends on the current token alone. The embedding of each token is a random
direction (plus one constant component); the head maps the direction of a token to its
successor in a fixed chain, so greedy and sampled decoding alike emit that chain:

- a chat turn: ``<think>Let me think</think>The answer is 42.<|im_end|>``: a reasoning
  parser splits it into reasoning ("Let me think") and content ("The answer is 42.");
- with ``enable_thinking: false`` the prompt ends in ``<think></think>`` (as Qwen3's own
  template does), so the answer comes without reasoning;
- with tools and a user turn last, the prompt ends in ``<|tool_turn|>`` and the model calls
  the first tool: ``<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}
  </tool_call>`` (Hermes format, which vLLM's ``hermes`` parser reads);
- pure-whitespace tokens get a large negative logit, so guided decoding (a named
  ``tool_choice``) writes compact JSON instead of looping on spaces.

The tokenizer is a byte-level BPE trained with the ``tokenizers`` library on a few lines of
text; the chain's pieces are added tokens, so each is one token id.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

#: The answer after the reasoning, and the reasoning itself (each piece one token).
REASONING = ("Let", " me", " think")
ANSWER = ("The", " answer", " is", " 42", ".")
TOOL_NAME = "get_weather"
TOOL_ARGUMENTS = {"city": "Paris"}
TOOL_CALL_JSON = json.dumps({"name": TOOL_NAME, "arguments": TOOL_ARGUMENTS})

THINK_START, THINK_END = "<think>", "</think>"
TOOL_START, TOOL_END = "<tool_call>", "</tool_call>"
IM_START, IM_END, TOOL_TURN = "<|im_start|>", "<|im_end|>", "<|tool_turn|>"
ENDOFTEXT = "<|endoftext|>"

#: What a client sees: the reasoning, the content, and both as the raw text without parser.
REASONING_TEXT = "".join(REASONING)
ANSWER_TEXT = "".join(ANSWER)

# ChatML, as Qwen3's template: tools in a system turn, <think></think> when thinking is off.
# A user turn last with tools present ends the prompt in <|tool_turn|>, which the model
# answers with a tool call; a tool result last ends in "\n", which it answers in words.
CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n<tools>"
    "{%- for tool in tools %}{{ tool | tojson }}{%- endfor %}</tools><|im_end|>\n"
    "{%- endif %}"
    "{%- for message in messages %}<|im_start|>{{ message.role }}\n"
    "{%- if message.content is string %}{{ message.content }}"
    "{%- elif message.content %}{%- for part in message.content %}"
    "{%- if part.type == 'text' %}{{ part.text }}{%- endif %}{%- endfor %}{%- endif %}"
    "{%- if message.tool_calls %}{%- for call in message.tool_calls %}<tool_call>"
    '{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments }}}'
    "</tool_call>{%- endfor %}{%- endif %}<|im_end|>\n{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n"
    "{%- if enable_thinking is defined and enable_thinking is false %}<think></think>"
    "{%- elif tools and messages[-1].role == 'user' %}<|tool_turn|>{%- endif %}"
    "{%- endif %}"
)

_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "What is the answer? Say hello, count to three, and tell me about the weather in Paris.",
    "user assistant system tool function name arguments city Paris London 0123456789",
    '{"city": "Paris"} {"type": "object", "properties": {}} [1, 2, 3] true false null',
]
_HIDDEN = 64
_LAYERS = 2
_HEADS, _KV_HEADS, _HEAD_DIM = 2, 1, 32  # vLLM's CPU attention takes head_dim 32 and up
_GAIN = 30.0  # logit of a chain successor over its competitors (sampling stays on the chain)
_WHITESPACE_LOGIT = -60.0


def build(out: Path) -> dict[str, Any]:
    """Write the tokenizer and the crafted checkpoint to ``out``; returns the chain's ids."""
    tokenizer = _tokenizer()
    tokenizer.save_pretrained(out)
    chain = _chains(tokenizer)
    _model(tokenizer, chain).save_pretrained(out)
    (out / "chain.json").write_text(json.dumps(chain, indent=1))
    return chain


def _tokenizer() -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[ENDOFTEXT, IM_START, IM_END, TOOL_TURN],
    )
    bpe.train_from_iterator(_CORPUS, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token=IM_END,
        pad_token=ENDOFTEXT,
        additional_special_tokens=[IM_START, TOOL_TURN],
        clean_up_tokenization_spaces=False,
    )
    # Not special (as in Qwen3's tokenizer): they stay in the text the parsers read.
    fast.add_tokens([THINK_START, THINK_END, TOOL_START, TOOL_END])
    fast.add_tokens([*REASONING, *ANSWER, TOOL_CALL_JSON])
    fast.chat_template = CHAT_TEMPLATE
    return fast


def _single_id(tokenizer: Any, text: str) -> int:
    ids = tokenizer.encode(text, add_special_tokens=False)
    if len(ids) != 1:
        raise SystemExit(f"{text!r} is not one token: {ids}")
    return int(ids[0])


def _chains(tokenizer: Any) -> dict[str, Any]:
    """Each token of the chains and its successor, by id."""
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    last = tokenizer.encode(prompt, add_special_tokens=False)[-1]
    thinking = [THINK_START, *REASONING, THINK_END, *ANSWER, IM_END]
    calling = [TOOL_TURN, TOOL_START, TOOL_CALL_JSON, TOOL_END, IM_END]
    links = {last: _single_id(tokenizer, THINK_START)}
    for chain in (thinking, calling):
        ids = [_single_id(tokenizer, piece) for piece in chain]
        for current, following in itertools.pairwise(ids):
            if current in links and links[current] != following:
                raise SystemExit(f"token {current} has two successors")
            links[current] = following
    whitespace = [
        i for token, i in tokenizer.get_vocab().items() if not tokenizer.decode([i]).strip()
    ]
    return {
        "successor": {str(k): v for k, v in links.items()},
        "whitespace": sorted(set(whitespace) - set(links.values())),
        "eos": _single_id(tokenizer, IM_END),
    }


def _model(tokenizer: Any, chain: dict[str, Any]) -> Any:
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    vocab = len(tokenizer)
    config = Qwen3Config(
        vocab_size=vocab,
        hidden_size=_HIDDEN,
        intermediate_size=2 * _HIDDEN,
        num_hidden_layers=_LAYERS,
        num_attention_heads=_HEADS,
        num_key_value_heads=_KV_HEADS,
        head_dim=_HEAD_DIM,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        eos_token_id=chain["eos"],
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        torch_dtype="float32",
    )
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(config)
    generator = torch.Generator().manual_seed(1)
    directions = torch.randn(vocab, _HIDDEN - 1, generator=generator)
    directions = directions / directions.norm(dim=1, keepdim=True) * (_HIDDEN - 1) ** 0.5
    with torch.no_grad():
        # Component 0 is 1 for every token (a bias the head can read); RMSNorm keeps the
        # vector as it is, since its mean square is 1.
        embed = torch.cat([torch.ones(vocab, 1), directions], dim=1)
        model.model.embed_tokens.weight.copy_(embed)
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        head = torch.zeros(vocab, _HIDDEN)
        for current, following in chain["successor"].items():
            head[following, 1:] += directions[int(current)] * (_GAIN / (_HIDDEN - 1))
        head[chain["whitespace"], 0] = _WHITESPACE_LOGIT
        model.lm_head.weight.copy_(head)
    model.generation_config = GenerationConfig(eos_token_id=chain["eos"], do_sample=False)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    build(args.out)


if __name__ == "__main__":
    main()
