from os import PathLike
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

__version__: str

class ModelError(ValueError):
    """Bad input, with the CLI's ``file:line:column: field: ...`` message."""

    message: str
    path: Optional[str]
    line: Optional[int]
    field: Optional[str]
    def __init__(self, message: str) -> None: ...

class Model:
    """A model file or TOML text with its ``set`` overrides, resolved and validated."""

    origin: str
    text: Optional[str]
    sets: Dict[str, Any]
    name: str
    variants: List[str]

class Result:
    """``report``: the JSON report of ``run --json`` (``summary``: the same dict, its first name);
    ``series``: a DataFrame or dict of lists."""

    json: str
    csv: str
    report: Dict[str, Any]
    summary: Dict[str, Any]
    series: Any

def load(path_or_toml_text: Union[str, "PathLike[str]"], set: Optional[Mapping[str, Any]] = ...) -> Model: ...
def run(
    model: Model,
    variant: Optional[str] = ...,
    seed: Optional[int] = ...,
    seeds: Optional[int] = ...,
    jobs: Optional[int] = ...,
    max_events: Optional[int] = ...,
) -> Result: ...
def compare(
    model: Model,
    seeds: Optional[int] = ...,
    seed: Optional[int] = ...,
    jobs: Optional[int] = ...,
    max_events: Optional[int] = ...,
) -> Dict[str, Any]: ...
def flatten_record(record: Mapping[str, Any]) -> Dict[str, Any]: ...
def sweep(
    model: Model,
    vary: Mapping[str, Union[str, Sequence[Any]]],
    seeds: Optional[int] = ...,
    jobs: Optional[int] = ...,
    seed: Optional[int] = ...,
    max_events: Optional[int] = ...,
) -> Any: ...
def check(
    model: Model,
    seeds: Optional[int] = ...,
    expect: Optional[Sequence[str]] = ...,
    seed: Optional[int] = ...,
    jobs: Optional[int] = ...,
    max_events: Optional[int] = ...,
) -> Dict[str, Any]: ...
