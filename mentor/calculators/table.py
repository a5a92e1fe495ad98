"""The shipped table of public model configurations (``models.yaml``).

Loaded once and validated with pydantic, so a typo in the table is a clear
error naming the entry, never a wrong answer.
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.untrusted_patterns import untrusted

from ..constants import QUESTION_MAX_CHARS

TABLE_PATH = Path(__file__).with_name("models.yaml")


class ModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    layers: int = Field(gt=0)
    hidden: int = Field(gt=0)
    heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    # Only where the model's config states one that differs from hidden / heads.
    head_dim: int | None = Field(default=None, gt=0)
    parameters: int = Field(gt=0)
    source: str = Field(pattern=r"^https://")

    @model_validator(mode="after")
    def _consistent(self) -> ModelConfig:
        if self.heads % self.kv_heads:
            raise ValueError(f"{self.name}: heads ({self.heads}) is not a multiple of kv_heads ({self.kv_heads})")
        if self.head_dim is None and self.hidden % self.heads:
            raise ValueError(f"{self.name}: hidden is not a multiple of heads; give head_dim explicitly")
        return self

    @property
    def effective_head_dim(self) -> int:
        return self.head_dim if self.head_dim is not None else self.hidden // self.heads

    @property
    def attention_kind(self) -> str:
        if self.kv_heads == self.heads:
            return "multi-head attention"
        if self.kv_heads == 1:
            return "multi-query attention"
        return "grouped-query attention"


class TableError(ValueError):
    """The shipped table does not validate."""


_NOT_NAME = untrusted(r"[^a-z0-9.]", max_chars=QUESTION_MAX_CHARS, reads="a learner's mentor question")


def name_key(text: str) -> str:
    """How names are compared: lower case, letters and digits only ("Llama 2 70B" -> "llama270b")."""
    return _NOT_NAME.sub("", text.lower()).replace(".", "_")


@functools.cache
def load_table(path: Path = TABLE_PATH) -> tuple[ModelConfig, ...]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    try:
        models = tuple(ModelConfig.model_validate(entry) for entry in data["models"])
    except (KeyError, TypeError, ValidationError) as exc:
        raise TableError(f"{path.name}: {exc}") from exc
    keys: dict[str, str] = {}
    for model in models:
        for alias in (model.name, *model.aliases):
            owner = keys.setdefault(name_key(alias), model.name)
            if owner != model.name:
                raise TableError(f"{path.name}: {alias!r} names both {owner} and {model.name}")
    return models


def find_model(question: str) -> ModelConfig | None:
    """The model a question names, the longest matching name winning ("Llama-2-70B" over "Llama-2-7B")."""
    key = name_key(question)
    best: tuple[int, ModelConfig] | None = None
    for model in load_table():
        for alias in (model.name, *model.aliases):
            alias_key = name_key(alias)
            position = key.find(alias_key)
            # The name must not run on into more digits ("llama27" inside "llama270b").
            while position >= 0:
                after = key[position + len(alias_key) : position + len(alias_key) + 1]
                if not (alias_key[-1].isdigit() and after.isdigit()):
                    if best is None or len(alias_key) > best[0]:
                        best = (len(alias_key), model)
                    break
                position = key.find(alias_key, position + 1)
    return best[1] if best else None
