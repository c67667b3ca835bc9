"""Chat judges over any chat model: ``ChatJudge`` (prompts, reply matching, re-ask), the
OpenAI-compatible client, and the prompt templates."""
