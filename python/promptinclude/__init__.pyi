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
def scan_promptinclude_files_indexed(
    root: StrPath,
    *,
    name_pattern: str = "*.promptinclude.md",
    max_depth: int = 10,
    max_file_tokens: int = 2000,
    max_file_count: int = 50,
    max_total_tokens: int = 8000,
    gitignore: str = "",
) -> ScanResult: ...

INDEXES_MAX: int

class IndexFallbacks(TypedDict):
    overflow: int
    watch_limit: int
    remote_fs: int
    links: int
    root_changed: int
    mounts: int
    config_changed: int
    forked: int
    deep_tree: int
    unsupported: int

class IndexStats(TypedDict):
    scans: int
    unchanged: int
    dirs_listed: int
    files_read: int
    texts_counted: int
    last_dirs_listed: int
    last_files_read: int
    watches: int
    kept_dirs: int
    events: int
    fallbacks: IndexFallbacks

class Index:
    def __init__(
        self,
        root: StrPath,
        *,
        name_pattern: str = "*.promptinclude.md",
        max_depth: int = 10,
        max_file_tokens: int = 2000,
        max_file_count: int = 50,
        max_total_tokens: int = 8000,
        gitignore: str = "",
    ) -> None: ...
    def scan(self) -> ScanResult: ...
    def stats(self) -> IndexStats: ...

def scan_many(
    roots: Iterable[StrPath],
    config: Optional[Dict[str, Any]] = None,
    threads: Optional[int] = None,
) -> List[ScanResult]: ...
def render(result: ScanResult, name_pattern: str = "*.promptinclude.md") -> str: ...
def audit(root: StrPath, config: Optional[Dict[str, Any]] = None) -> Dict[str, Any]: ...
def check_ignore(paths: Iterable[str], gitignore: str) -> List[CheckIgnoreRecord]: ...
def context(agent: str, cwd: StrPath = ".", home: Optional[StrPath] = None) -> Dict[str, Any]: ...
