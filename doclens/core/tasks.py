"""Task families (``docs/design.md`` §4): which prompts apply and how a text is divided before extraction."""

from __future__ import annotations

from doclens.core.errors import InputError
from doclens.core.types import TextEnum


class Task(TextEnum):
    """Every task DocLens knows (``docs/design.md`` §4); a member equals its name's string, so
    ``task == Task.NOTE_GENERATION`` holds for a task read from a file too."""

    GENERAL = "general"
    NOTE_GENERATION = "note_generation"
    REPORT_SUMMARIZATION = "report_summarization"
    QUESTION_SUMMARIZATION = "question_summarization"


#: every task DocLens knows; the CLI's ``--task`` and the baselines take their choices from here
TASKS = tuple(Task)
#: A scorer's default task that picks, per instance, ``note_generation`` for a reference with SOAP
#: section headers and ``general`` otherwise (``parsing.sections.detect_task``)
AUTO_TASK = "auto"

#: the four ACI-BENCH divisions a ``note_generation`` text is scored in
SECTION_NAMES = ("subjective", "objective_exam", "objective_results", "assessment_and_plan")
#: how the four divisions are named to people (tables, pages, figures)
SECTION_LABELS = {"subjective": "Subjective", "objective_exam": "Objective: exam",
                  "objective_results": "Objective: results", "assessment_and_plan": "Assessment and plan"}


def check_task(task: str | None, where: str = "") -> str:
    task = task or "general"
    if task not in TASKS:
        raise InputError(f"{where}unknown task {task!r}; choose one of {', '.join(TASKS)}", field="task")
    return task


def section_names(task: str) -> tuple[str | None, ...]:
    return SECTION_NAMES if task == Task.NOTE_GENERATION else (None,)


def extraction_prompt_name(task: str, section: str | None = None) -> str:
    """``extract/<task>`` or, for notes, ``extract/note_generation.<section>``."""
    if task == Task.NOTE_GENERATION:
        return f"extract/note_generation.{section or 'subjective'}"
    return f"extract/{task}"
