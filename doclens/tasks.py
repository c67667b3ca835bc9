"""Task families (DESIGN §4): which prompts apply and how a text is divided before extraction."""

from __future__ import annotations

from typing import Optional

from doclens.errors import InputError
from doclens.sections import SECTION_NAMES, split_note_sections

TASKS = ("general", "note_generation", "report_summarization", "question_summarization")


def check_task(task: Optional[str], where: str = "") -> str:
    task = task or "general"
    if task not in TASKS:
        raise InputError(f"{where}unknown task {task!r}; choose one of {', '.join(TASKS)}", field="task")
    return task


def segments(task: str, text: str) -> dict[Optional[str], str]:
    """The parts of ``text`` scored separately: the four SOAP divisions for
    ``note_generation``, else the whole text under the key ``None``."""
    if task == "note_generation":
        return split_note_sections(text)
    return {None: text}


def section_names(task: str) -> tuple[Optional[str], ...]:
    return SECTION_NAMES if task == "note_generation" else (None,)


def extraction_prompt_name(task: str, section: Optional[str] = None) -> str:
    """``extract/<task>`` or, for notes, ``extract/note_generation.<section>``."""
    if task == "note_generation":
        return f"extract/note_generation.{section or 'subjective'}"
    return f"extract/{task}"
