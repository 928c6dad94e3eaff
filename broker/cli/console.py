"""What the command-line modules share: the consoles (stdout for results, stderr for the rest) and a progress bar."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

out = Console()
err = Console(stderr=True)


@contextmanager
def bar(label: str, total: int, *, quiet: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr, as an ``update(done, total)`` callable (None when quiet)."""
    if quiet:
        yield None
        return
    progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                        transient=True)
    task = progress.add_task(label, total=total)
    with progress:
        # drawn at each update, not only at the bar's own ticks: what a run reports is what is shown, however
        # fast it goes (a step between two ticks was lost, as the advisor's end of its first label)
        yield lambda done, _total: progress.update(task, completed=done, refresh=True)
