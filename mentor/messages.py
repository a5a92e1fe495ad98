"""Every sentence a learner reads from the mentor, in one place."""

from __future__ import annotations

NO_MODEL_INTRO = "Here is what the module says that comes closest to your question:"
# After an authored explanation (the module's explanations.yaml), above the passages listed under it.
EXPLANATION_FURTHER = "More on this in the module:"
NO_PASSAGES = (
    "The module does not seem to cover this. Try other words, or look through the concept card "
    "and the quick reference."
)
# The heading of an answer box: honest about who wrote the answer.
LABEL_MODULE = "From the module"
LABEL_MODEL = "The mentor's answer (written by a model from the module's text)"

LOGIN_REQUIRED = "Log in to ask the mentor."
UNKNOWN_MODULE = "There is no such module."
UNKNOWN_RUNG = "There is no such exercise in this module."
TOO_MANY_QUESTIONS = "You have asked many questions in the last hour; please try again a little later."

# The model failed; the passages are still shown under these.
MODEL_TIMEOUT = "The mentor's model did not answer in time. Here are the module's passages instead."
MODEL_UNREACHABLE = "The mentor's model cannot be reached right now. Here are the module's passages instead."
MODEL_HTTP_ERROR = "The mentor's model returned an error (HTTP {status}). Here are the module's passages instead."
MODEL_BAD_REPLY = "The mentor's model sent a reply we could not read. Here are the module's passages instead."
MODEL_STOPPED = "The mentor's model stopped part-way through its answer. The passages it was given are listed above."

SYSTEM_PROMPT = """You are the mentor of the course module "{module}".
Answer the learner's question using ONLY the numbered passages from the course module below.
Rules:
- Do not use any knowledge that is not in the passages, even if you know the answer.
- Cite the passages you use in square brackets, e.g. [1] or [2][3], right after the sentence they support.
- When a calculator result [C] is given, its numbers are exact: quote them as they are and cite [C]; never redo the arithmetic.
- If the passages do not answer the question, say plainly: "The module does not cover this." and stop.
- Never write a complete solution to an exercise; explain the idea and point to the passage instead.
- Be brief: a few sentences, or a short list."""
