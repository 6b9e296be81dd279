import os
from typing import Any, Dict, Iterable, List, Literal, Optional, TypedDict, Union

StrPath = Union[str, "os.PathLike[str]"]

class FileEntry(TypedDict):
    path: str
    content: str
    token_count: int
    status: Literal["ok", "cropped", "skipped"]

class ScanResult(TypedDict):
    files: List[FileEntry]
    skipped_count: int

class CheckIgnoreRecord(TypedDict):
    path: str
    ignored: bool
    pattern: Optional[str]
    line: Optional[int]

__version__: str
DEFAULT_GITIGNORE: str
DEFAULT_CONFIG: Dict[str, Any]

def scan_promptinclude_files(
    root: StrPath,
    *,
    name_pattern: str = "*.promptinclude.md",
    max_depth: int = 10,
    max_file_tokens: int = 2000,
    max_file_count: int = 50,
    max_total_tokens: int = 8000,
    gitignore: str = "",
) -> ScanResult: ...
def scan_many(
    roots: Iterable[StrPath],
    config: Optional[Dict[str, Any]] = None,
    threads: Optional[int] = None,
) -> List[ScanResult]: ...
def render(result: ScanResult, name_pattern: str = "*.promptinclude.md") -> str: ...
def audit(root: StrPath, config: Optional[Dict[str, Any]] = None) -> Dict[str, Any]: ...
def check_ignore(paths: Iterable[str], gitignore: str) -> List[CheckIgnoreRecord]: ...
def context(agent: str, cwd: StrPath = ".", home: Optional[StrPath] = None) -> Dict[str, Any]: ...
